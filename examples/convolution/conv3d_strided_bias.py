import torch
from torch import nn


class Model(nn.Module):
    """A 3-D convolution with bias: asymmetric 3x3x5 kernel, stride 2, no padding; half-precision result."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, (3, 3, 5), stride=2, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x).half()


batch_size = 2
in_channels = 4
out_channels = 17
depth = 7
height = 9
width = 13


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
