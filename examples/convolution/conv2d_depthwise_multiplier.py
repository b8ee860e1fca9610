import torch
from torch import nn


class Model(nn.Module):
    """A depthwise 5x5 2-D convolution with a channel multiplier of 2 (groups = in channels, out = 2 x in),
    stride 2, padding 2, no bias."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, 2 * channels, 5, stride=2, padding=2, groups=channels, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 2
channels = 6
height = 17
width = 23


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
