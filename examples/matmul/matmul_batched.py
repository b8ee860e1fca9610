import torch
from torch import nn


class Model(nn.Module):
    """Batched matrix multiplication (torch.bmm)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


Bt = 8
M = 128
K = 256
N = 192


def get_inputs():
    A = torch.randn(Bt, M, K)
    B = torch.randn(Bt, K, N)
    return [A, B]


def get_init_inputs():
    return []
