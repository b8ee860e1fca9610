import torch
from torch import nn


class Model(nn.Module):
    """Multi-query attention: all query heads share one key/value head (broadcast over heads)."""

    def __init__(self, scale: float = 0.125):
        super().__init__()
        self.scale = scale

    def forward(self, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(Q, K, V, scale=self.scale)


B = 2
H = 8
M = 96
N = 96
Dk = 64
Dv = 64


def get_inputs():
    return [torch.randn(B, H, M, Dk), torch.randn(B, 1, N, Dk), torch.randn(B, 1, N, Dv)]


def get_init_inputs():
    return [0.125]
