import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that subtracts a per-row value from every row of a matrix."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return x - c[:, None]


batch_size = 128
dim = 4096


def get_inputs():
    x = torch.randn(batch_size, dim)
    c = torch.randn(batch_size)
    return [x, c]


def get_init_inputs():
    return []
