import torch
import torch.nn as nn


class Model(nn.Module):
    """LeakyReLU whose slope is a number argument of forward()."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, negative_slope: float) -> torch.Tensor:
        return torch.nn.functional.leaky_relu(x, negative_slope)


def get_inputs():
    return [torch.randn(4096, 4095), 0.2]


def get_init_inputs():
    return []
