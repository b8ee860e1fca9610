import torch
import torch.nn as nn


class Model(nn.Module):
    """An output projection whose result is scaled and added to the residual stream (a transformer block's
    attention output: residual + scale * proj(x))."""

    def __init__(self, in_features: int, out_features: int, scale: float):
        super().__init__()
        self.proj = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.proj(x) * self.scale + residual


batch_size = 128
in_features = 256
out_features = 384
scale = 0.5


def get_inputs():
    return [torch.randn(batch_size, in_features), torch.randn(batch_size, out_features)]


def get_init_inputs():
    return [in_features, out_features, scale]
