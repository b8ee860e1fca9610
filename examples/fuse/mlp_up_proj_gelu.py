import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """The up projection of a transformer MLP (GPT-2 style): Linear(hidden, 4 * hidden) then GELU (tanh)
    over a [batch, seq, hidden] activation."""

    def __init__(self, hidden: int, ffn: int):
        super().__init__()
        self.up = nn.Linear(hidden, ffn)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.up(x), approximate="tanh")


Bt = 2
M = 64
K = 128
N = 512


def get_inputs():
    return [torch.randn(Bt, M, K)]


def get_init_inputs():
    return [K, N]
