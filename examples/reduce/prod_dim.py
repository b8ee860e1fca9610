import torch
from torch import nn


class Model(nn.Module):
    """Product over the last dimension of a 3-D tensor [batch_size, dim1, dim2]. Inputs near 1 keep the
    product finite over long rows."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=-1)


batch_size = 16
dim1 = 256
dim2 = 256


def get_inputs():
    x = 1.0 + (0.3 / dim2 ** 0.5) * torch.randn(batch_size, dim1, dim2)  # log(prod) ~ N(0, 0.3^2) at any dim2
    return [x]


def get_init_inputs():
    return []
