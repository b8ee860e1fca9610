import torch
from torch import nn


class Model(nn.Module):
    """Product over the last dimension. Inputs near 1 keep the product finite over long rows."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=-1)


batch_size = 128
dim = 4096


def get_inputs():
    x = 1.0 + 0.02 * torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
