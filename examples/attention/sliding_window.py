import torch
from torch import nn


class Model(nn.Module):
    """Sliding-window causal self-attention (Mistral-style local attention): query i attends to the `window` most
    recent keys, i - window < j <= i, through a banded boolean attn_mask."""

    def __init__(self, scale: float = 0.125, window: int = 64):
        super().__init__()
        self.scale = scale
        self.window = window

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        i = torch.arange(q.shape[-2]).unsqueeze(1)
        j = torch.arange(k.shape[-2]).unsqueeze(0)
        band = (j <= i) & (j > i - self.window)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=band, scale=self.scale)


B = 2
H = 4
S = 333
D = 64


def get_inputs():
    return [torch.randn(B, H, S, D), torch.randn(B, H, S, D), torch.randn(B, H, S, D)]


def get_init_inputs():
    return [0.125, 64]
