import torch
from torch import nn


class Model(nn.Module):
    """A 2-D convolution with a 3x5 kernel and options per spatial dim: stride (2, 1), padding (1, 0),
    dilation (1, 2), with bias."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, (3, 5), stride=(2, 1), padding=(1, 0), dilation=(1, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 2
in_channels = 5
out_channels = 20
height = 15
width = 22


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
