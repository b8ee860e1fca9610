import torch
from torch import nn


class Model(nn.Module):
    """A grouped transposed 2-D convolution: 4 groups, 3x3 kernel, stride 2, dilation 2, output_padding 1,
    no bias."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, 3, stride=2, dilation=2, output_padding=1,
                                                 groups=4, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose(x)


batch_size = 2
in_channels = 16
out_channels = 24
height = 8
width = 11


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
