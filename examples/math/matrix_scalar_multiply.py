import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that performs a matrix-scalar multiplication (C = A * s)."""

    def __init__(self, s: float = 3.0):
        super().__init__()
        self.s = s

    def forward(self, A: torch.Tensor) -> torch.Tensor:
        return A * self.s


batch_size = 128
dim = 4096


def get_inputs():
    A = torch.randn(batch_size, dim)
    return [A]


def get_init_inputs():
    return []
