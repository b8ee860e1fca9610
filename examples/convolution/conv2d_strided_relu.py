import torch
from torch import nn


class Model(nn.Module):
    """A 3x3 2-D convolution with stride 2 and padding 1 (no bias), then ReLU, in half precision."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, stride=2, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x)).half()


batch_size = 2
in_channels = 5
out_channels = 20
height = 13
width = 19


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
