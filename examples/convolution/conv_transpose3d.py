import torch
from torch import nn


class Model(nn.Module):
    """A transposed 3-D convolution with bias (3x3x3 kernel, stride 2, padding 1, output_padding 1): doubles
    depth, height and width; half-precision result."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, 3, stride=2, padding=1, output_padding=1,
                                                 bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose(x).half()


batch_size = 2
in_channels = 8
out_channels = 12
depth = 3
height = 5
width = 6


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
