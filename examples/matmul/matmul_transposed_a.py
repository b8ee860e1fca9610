import torch
from torch import nn


class Model(nn.Module):
    """Matrix multiplication with transposed A: C = A.T @ B."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B)


M = 256
K = 320
N = 192


def get_inputs():
    A = torch.randn(K, M)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
