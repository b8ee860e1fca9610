import torch
from torch import nn


class Model(nn.Module):
    """Antialiased bicubic downsampling by a scale factor (thumbnails, as PIL's BICUBIC resize)."""

    def __init__(self, scale_factor: float):
        super().__init__()
        self.scale_factor = scale_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.interpolate(x, scale_factor=self.scale_factor, mode="bicubic", antialias=True,
                                         recompute_scale_factor=True)


batch_size = 16
channels = 32
height = 128
width = 96
scale_factor = 0.25


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [scale_factor]
