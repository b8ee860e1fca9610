import torch
from torch import nn


class Model(nn.Module):
    """3-D max pooling (PyTorch semantics, dilated windows); sizes and window parameters as KernelBench level 1."""

    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.max_pool3d(x, self.kernel_size, self.stride, self.padding,
                                              dilation=self.dilation)


batch_size = 16
channels = 32
depth = 64
height = 64
width = 64
kernel_size = 3
stride = 2
padding = 1
dilation = 3


def get_inputs():
    x = torch.randn(batch_size, channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding, dilation]
