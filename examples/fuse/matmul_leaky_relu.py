import torch
from torch import nn


class Model(nn.Module):
    """Matmul followed by LeakyReLU."""

    def __init__(self, negative_slope: float = 0.1):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.leaky_relu(torch.matmul(A, B), self.negative_slope)


M = 256
K = 384
N = 256


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return [0.1]
