import torch
from torch import nn


class Model(nn.Module):
    """A linear layer to 8192 features, then softmax over them."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.fc(x), dim=1)


M = 32
K = 128
N = 8192


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
