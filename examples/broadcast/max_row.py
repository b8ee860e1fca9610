import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that takes the element-wise maximum of a matrix and a row vector."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.maximum(x, w)


batch_size = 128
dim = 4096


def get_inputs():
    x = torch.randn(batch_size, dim)
    w = torch.randn(dim)
    return [x, w]


def get_init_inputs():
    return []
