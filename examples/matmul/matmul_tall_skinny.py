import torch
from torch import nn


class Model(nn.Module):
    """Tall-skinny matrix multiplication C = A @ B (M >> K, N)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 4096
K = 32
N = 48


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
