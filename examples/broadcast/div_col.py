import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that divides every row of a matrix by a per-row value."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return x / c[:, None]


batch_size = 128
dim = 4096


def get_inputs():
    x = torch.randn(batch_size, dim)
    c = torch.rand(batch_size) + 0.5
    return [x, c]


def get_init_inputs():
    return []
