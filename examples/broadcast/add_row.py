import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that adds a row vector to every row of a matrix."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return x + b


batch_size = 128
dim = 4096


def get_inputs():
    x = torch.randn(batch_size, dim)
    b = torch.randn(dim)
    return [x, b]


def get_init_inputs():
    return []
