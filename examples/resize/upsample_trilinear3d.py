import torch
from torch import nn


class Model(nn.Module):
    """2x trilinear upsampling of volumes (nn.Upsample, align_corners=False), as in 3-D U-Net decoders."""

    def __init__(self, scale_factor: int):
        super().__init__()
        self.up = nn.Upsample(scale_factor=scale_factor, mode="trilinear", align_corners=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(x)


batch_size = 4
channels = 16
depth = 16
height = 32
width = 32
scale_factor = 2


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return [scale_factor]
