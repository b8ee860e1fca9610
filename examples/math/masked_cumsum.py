import torch
from torch import nn


class Model(nn.Module):
    """Cumulative sum of the elements selected by a boolean mask (the others count as zero)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=self.dim)


batch_size = 128
dim = 4000


def get_inputs():
    x = torch.randn(batch_size, dim)
    mask = torch.randint(0, 2, (batch_size, dim)).bool()
    return [x, mask]


def get_init_inputs():
    return [1]
