import torch
from torch import nn


class Model(nn.Module):
    """Conv2d (3x3, stride (1, 2), padding (1, 0), bias), then InstanceNorm2d without affine parameters."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=(1, 2), padding=(1, 0))
        self.norm = nn.InstanceNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.conv(x))


batch_size = 2
in_channels = 5
out_channels = 20
kernel_size = 3
height = 13
width = 19


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
