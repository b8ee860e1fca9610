import torch
from torch import nn


class Model(nn.Module):
    """A linear layer, then GroupNorm over groups of its output features (affine, as after training)."""

    def __init__(self, in_features: int, out_features: int, num_groups: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.gn = nn.GroupNorm(num_groups, out_features)
        with torch.no_grad():
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(self.fc(x))


M = 64
K = 96
N = 1024
num_groups = 8


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N, num_groups]
