import torch
import torch.nn as nn


class Model(nn.Module):
    """Softmax over dim 1 of a 3-D tensor (not the last dim)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 16
dim1 = 256
dim2 = 1024


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return []
