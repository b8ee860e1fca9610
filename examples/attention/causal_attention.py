import torch
from torch import nn


class Model(nn.Module):
    """Causal self-attention core (minGPT style): scores masked by a registered lower-triangular buffer."""

    def __init__(self, seq_len: int = 128, scale: float = 0.125):
        super().__init__()
        self.scale = scale
        self.register_buffer("mask", torch.tril(torch.ones(seq_len, seq_len)).view(1, 1, seq_len, seq_len))

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        t = q.size(-2)
        att = (q @ k.transpose(-2, -1)) * self.scale
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        return torch.softmax(att, dim=-1) @ v


B = 2
H = 4
S = 128
D = 64


def get_inputs():
    return [torch.randn(B, H, S, D), torch.randn(B, H, S, D), torch.randn(B, H, S, D)]


def get_init_inputs():
    return [S, 0.125]
