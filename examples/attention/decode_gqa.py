import torch
from torch import nn


class Model(nn.Module):
    """A decoder's attention at one generation step: the new token's queries against the KV cache (8 query heads
    share 2 key/value heads), as a Llama-style model calls scaled_dot_product_attention during decoding."""

    def __init__(self, scale: float = 0.125):
        super().__init__()
        self.scale = scale

    def forward(self, q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(q, k_cache, v_cache, scale=self.scale, enable_gqa=True)


B = 4
H = 8
Hkv = 2
Q = 1
L = 1500
D = 64


def get_inputs():
    return [torch.randn(B, H, Q, D), torch.randn(B, Hkv, L, D), torch.randn(B, Hkv, L, D)]


def get_init_inputs():
    return [0.125]
