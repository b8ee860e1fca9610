import torch
from torch import nn


class Model(nn.Module):
    """Standard matrix multiplication C = A @ B (M x K times K x N)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 256
K = 384
N = 640


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
