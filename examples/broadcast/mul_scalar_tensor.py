import torch
import torch.nn as nn


class Model(nn.Module):
    """Multiplies a matrix by a scalar held in a 0-d tensor (broadcast over every element)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return x * scale


batch_size = 128
dim = 4096


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(())]


def get_init_inputs():
    return []
