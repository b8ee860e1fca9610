import torch
import torch.nn as nn


class Model(nn.Module):
    """GELU(x @ W^T + bias) with the bias a top-level nn.Parameter beside a bias-free nn.Linear (as in
    projections whose bias is shared or initialised on its own)."""

    def __init__(self, K: int, N: int):
        super().__init__()
        self.linear = nn.Linear(K, N, bias=False)
        self.bias = nn.Parameter(torch.randn(N) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.linear(x) + self.bias)


M = 512
K = 256
N = 320


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
