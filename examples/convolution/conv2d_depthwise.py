import torch
from torch import nn


class Model(nn.Module):
    """A depthwise 3x3 2-D convolution (groups = channels, padding 1, no bias)."""

    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=1, groups=channels, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 2
channels = 7
kernel_size = 3
height = 13
width = 19


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size]
