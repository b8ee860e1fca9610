import torch
import torch.nn as nn


class Model(nn.Module):
    """3x3 max pooling with stride 2 and padding 1 by an nn.MaxPool2d submodule (a ResNet stem's pool)."""

    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(8, 64, 112, 112)]


def get_init_inputs():
    return []
