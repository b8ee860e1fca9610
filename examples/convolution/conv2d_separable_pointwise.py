import torch
from torch import nn


class Model(nn.Module):
    """Second half of a depthwise-separable block (MobileNet): the pointwise 1x1 convolution with bias that
    mixes the channels of the depthwise output (conv2d_separable_depthwise; the kernel reads it in T)."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.pointwise = nn.Conv2d(in_channels, out_channels, 1, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pointwise(x)


batch_size = 2
in_channels = 11
out_channels = 24
height = 15
width = 21


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
