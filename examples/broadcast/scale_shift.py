import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that scales each row of a matrix by a per-row value and adds a row vector."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, s: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return x * s[:, None] + b


batch_size = 128
dim = 4096


def get_inputs():
    x = torch.randn(batch_size, dim)
    s = torch.randn(batch_size)
    b = torch.randn(dim)
    return [x, s, b]


def get_init_inputs():
    return []
