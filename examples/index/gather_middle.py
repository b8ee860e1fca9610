import torch
import torch.nn as nn


class Model(nn.Module):
    """Gathers single elements along the middle dimension of a 3-D tensor (torch.gather with dim=1, e.g.
    picking, per batch and feature, the value at a per-element position); the index may hold fewer rows than x."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.gather(x, 1, index)


batch_size = 16
dim1 = 256
dim2 = 512
num_indices = 64


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2), torch.randint(0, dim1, (batch_size, num_indices, dim2))]


def get_init_inputs():
    return []
