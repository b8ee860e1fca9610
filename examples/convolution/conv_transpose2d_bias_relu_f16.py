import torch
from torch import nn


class Model(nn.Module):
    """A transposed 2-D convolution with bias (asymmetric 3x5 kernel, stride 2, padding 1), ReLU, half-precision
    result."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, (3, 5), stride=2, padding=1, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv_transpose(x)).half()


batch_size = 2
in_channels = 16
out_channels = 33
height = 7
width = 12


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
