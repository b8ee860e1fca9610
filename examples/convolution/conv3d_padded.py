import torch
from torch import nn


class Model(nn.Module):
    """A 3-D convolution without bias: 3x3x3 kernel, zero padding 1 on every side."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 2
in_channels = 3
out_channels = 18
kernel_size = 3
depth = 5
height = 7
width = 9


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
