import torch
from torch import nn


class Model(nn.Module):
    """A transposed 1-D convolution with bias (kernel 4, stride 2, padding 1): upsamples a signal by 2."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose1d(in_channels, out_channels, 4, stride=2, padding=1, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose(x)


batch_size = 2
in_channels = 32
out_channels = 24
length = 301


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels]
