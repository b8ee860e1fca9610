import torch
from torch import nn


class Model(nn.Module):
    """Matrix multiplication with bias: C = A @ B + bias."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B) + bias


M = 256
K = 512
N = 384


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    bias = torch.randn(N)
    return [A, B, bias]


def get_init_inputs():
    return []
