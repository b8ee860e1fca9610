import torch
from torch import nn


class Model(nn.Module):
    """Linear layer y = sigmoid(x @ W.T + b) with the weight given as [N, K] (nn.Linear layout), half output."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, W: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(torch.matmul(x, W.T) + b).half()


M = 256
K = 256
N = 192


def get_inputs():
    x = torch.randn(M, K)
    W = torch.randn(N, K) * 0.1
    b = torch.randn(N)
    return [x, W, b]


def get_init_inputs():
    return []
