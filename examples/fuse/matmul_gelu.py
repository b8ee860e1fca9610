import torch
from torch import nn


class Model(nn.Module):
    """Matmul followed by GELU."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(torch.matmul(A, B))


M = 256
K = 256
N = 320


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
