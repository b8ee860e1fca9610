import torch
import torch.nn as nn


class Model(nn.Module):
    """Picks rows along the middle dimension of a 3-D tensor by an index vector (torch.index_select with
    dim=1, e.g. selecting time steps or tokens of every batch); indices may repeat and come in any order."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.index_select(x, 1, index)


batch_size = 16
dim1 = 1024
dim2 = 512
num_indices = 256


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2), torch.randint(0, dim1, (num_indices,))]


def get_init_inputs():
    return []
