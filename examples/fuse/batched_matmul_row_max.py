import torch
from torch import nn


class Model(nn.Module):
    """torch.bmm, then the max over the last dimension (amax: the values, no indices)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.amax(torch.bmm(A, B), dim=-1)


Bt = 4
M = 128
K = 192
N = 160


def get_inputs():
    return [torch.randn(Bt, M, K), torch.randn(Bt, K, N)]


def get_init_inputs():
    return []
