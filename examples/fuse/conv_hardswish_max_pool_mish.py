import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    """Conv2d (3x3, padding 1, bias), subtract a value, HardSwish, MaxPool2d(2), then Mish."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, subtract_value: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.subtract_value = subtract_value
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.hardswish(self.conv(x) - self.subtract_value)
        return F.mish(self.pool(x))


batch_size = 2
in_channels = 5
out_channels = 20
kernel_size = 3
height = 13
width = 19
subtract_value = 0.5


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, subtract_value]
