import torch
from torch import nn


class Model(nn.Module):
    """3-D average pooling (PyTorch semantics, count_include_pad=True; no dilation)."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.avg_pool3d(x, self.kernel_size, self.stride, self.padding)


batch_size = 16
channels = 32
depth = 64
height = 64
width = 64
kernel_size = 3
stride = 2
padding = 1


def get_inputs():
    x = torch.randn(batch_size, channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding]
