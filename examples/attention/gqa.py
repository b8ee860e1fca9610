import torch
from torch import nn


class Model(nn.Module):
    """Grouped-query attention: 8 query heads share 2 key/value heads (torch's enable_gqa)."""

    def __init__(self, scale: float = 0.125):
        super().__init__()
        self.scale = scale

    def forward(self, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(Q, K, V, scale=self.scale, enable_gqa=True)


B = 2
H = 8
Hkv = 2
M = 96
N = 96
Dk = 64
Dv = 64


def get_inputs():
    return [torch.randn(B, H, M, Dk), torch.randn(B, Hkv, N, Dk), torch.randn(B, Hkv, N, Dv)]


def get_init_inputs():
    return [0.125]
