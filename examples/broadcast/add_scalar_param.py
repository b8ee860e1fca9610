import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that adds a scalar attribute to every element."""

    def __init__(self, alpha: float = 0.5):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.alpha


batch_size = 128
dim = 4096


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
