import torch
import torch.nn as nn


class Model(nn.Module):
    """Keeps a subset of the features in the last dimension of a [batch, dim1, dim2] tensor, in the order an
    index vector gives (torch.index_select on dim -1, e.g. feature selection or pruned channels); the index
    may be shorter or longer than the dimension and repeat entries."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.index_select(x, -1, index)


batch_size = 16
dim1 = 256
dim2 = 1024
num_indices = 384


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2), torch.randint(0, dim2, (num_indices,))]


def get_init_inputs():
    return []
