import torch
from torch import nn


class Model(nn.Module):
    """First half of a depthwise-separable block (MobileNet): depthwise 3x3 with bias, ReLU, half-precision
    activations for the pointwise convolution that follows (conv2d_separable_pointwise)."""

    def __init__(self, channels: int):
        super().__init__()
        self.depthwise = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.depthwise(x)).half()


batch_size = 2
channels = 11
height = 15
width = 21


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
