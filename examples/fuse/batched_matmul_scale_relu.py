import torch
from torch import nn


class Model(nn.Module):
    """Batched matmul, scaled, then ReLU."""

    def __init__(self, scale: float = 0.25):
        super().__init__()
        self.scale = scale

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.scale * torch.bmm(A, B))


Bt = 4
M = 128
K = 192
N = 160


def get_inputs():
    A = torch.randn(Bt, M, K)
    B = torch.randn(Bt, K, N)
    return [A, B]


def get_init_inputs():
    return [0.25]
