import torch
import torch.nn as nn


class Model(nn.Module):
    """Lower triangle of each matrix of a batch (torch.tril), with a diagonal offset."""

    def __init__(self, diagonal):
        super().__init__()
        self.diagonal = diagonal

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tril(x, diagonal=self.diagonal)


batch_size = 16
dim1 = 256
dim2 = 256


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [-1]
