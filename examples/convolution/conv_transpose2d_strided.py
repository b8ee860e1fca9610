import torch
from torch import nn


class Model(nn.Module):
    """A transposed 2-D convolution (the decoder's upsampling step): 3x3 kernel, stride 2, padding 1,
    output_padding 1, no bias; the output is twice the input's height and width."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, 3, stride=2, padding=1, output_padding=1,
                                                 bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose(x)


batch_size = 2
in_channels = 24
out_channels = 20
height = 9
width = 13


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
