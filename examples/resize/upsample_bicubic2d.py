import torch
from torch import nn


class Model(nn.Module):
    """2x bicubic upsampling (nn.Upsample, align_corners=False), as in super-resolution baselines."""

    def __init__(self, scale_factor: int):
        super().__init__()
        self.up = nn.Upsample(scale_factor=scale_factor, mode="bicubic", align_corners=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(x)


batch_size = 16
channels = 32
height = 64
width = 64
scale_factor = 2


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [scale_factor]
