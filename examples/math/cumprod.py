import torch
from torch import nn


class Model(nn.Module):
    """Cumulative product along a dimension."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=self.dim)


batch_size = 128
dim = 4000


def get_inputs():
    # factors near +-1: the running products neither underflow to 0 nor overflow over 4000 columns, and
    # their signs change (torch.randn factors would leave 99.6% of the products within tolerance of 0)
    sign = torch.where(torch.rand(batch_size, dim) < 0.5, -1.0, 1.0)
    return [sign * (1.0 + 0.02 * torch.randn(batch_size, dim))]


def get_init_inputs():
    return [1]
