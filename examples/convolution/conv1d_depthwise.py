import torch
from torch import nn


class Model(nn.Module):
    """A depthwise 1-D convolution (groups = channels, kernel 7, padding 3, no bias), as in ConvNeXt-style
    sequence mixers."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 7, padding=3, groups=channels, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 2
channels = 9
length = 61


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [channels]
