import torch
from torch import nn


class Model(nn.Module):
    """Scaled matmul plus a residual: alpha * (A @ B) + R."""

    def __init__(self, alpha: float = 0.5):
        super().__init__()
        self.alpha = alpha

    def forward(self, A: torch.Tensor, B: torch.Tensor, R: torch.Tensor) -> torch.Tensor:
        return self.alpha * torch.matmul(A, B) + R


M = 256
K = 256
N = 384


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    R = torch.randn(M, N)
    return [A, B, R]


def get_init_inputs():
    return [0.5]
