import torch
from torch import nn


class Model(nn.Module):
    """Gemm, GroupNorm, Swish, Multiply by a learned per-feature weight, Swish."""

    def __init__(self, in_features: int, out_features: int, num_groups: int, multiply_weight_shape: tuple):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.multiply_weight = nn.Parameter(torch.randn(multiply_weight_shape))
        with torch.no_grad():
            self.group_norm.weight.uniform_(0.5, 1.5)
            self.group_norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = self.group_norm(x)
        x = x * torch.sigmoid(x)
        x = x * self.multiply_weight
        return x * torch.sigmoid(x)


M = 128
K = 512
N = 1024
num_groups = 16


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N, num_groups, (N,)]
