import torch
from torch import nn


class Model(nn.Module):
    """A 1-D convolution with bias: kernel 3, stride 2, padding 2, dilation 2; then ReLU."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, stride=2, padding=2, dilation=2, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


batch_size = 2
in_channels = 6
out_channels = 19
kernel_size = 3
length = 77


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
