import torch
from torch import nn


class Model(nn.Module):
    """Causal self-attention as a decoder's prefill calls it: scaled_dot_product_attention(..., is_causal=True)."""

    def __init__(self, scale: float = 0.125):
        super().__init__()
        self.scale = scale

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=self.scale)


B = 2
H = 4
S = 200
D = 64


def get_inputs():
    return [torch.randn(B, H, S, D), torch.randn(B, H, S, D), torch.randn(B, H, S, D)]


def get_init_inputs():
    return [0.125]
