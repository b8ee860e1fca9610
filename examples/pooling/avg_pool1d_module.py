import torch
import torch.nn as nn


class Model(nn.Module):
    """1-D average pooling by an nn.AvgPool1d submodule: kernel size, stride and padding are its attributes."""

    def __init__(self):
        super().__init__()
        self.avg_pool = nn.AvgPool1d(kernel_size=4, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.avg_pool(x)


batch_size = 16
channels = 32
length = 4096


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return []
