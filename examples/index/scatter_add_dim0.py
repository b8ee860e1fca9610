import torch
import torch.nn as nn


class Model(nn.Module):
    """Adds each element of src into the row of x its index entry names, in the same column
    (torch.scatter_add along dim 0, e.g. a segment sum of per-column features); repeated rows add up."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
        return torch.scatter_add(x, 0, index, src)


num_rows = 1024
num_updates = 512
dim = 256


def get_inputs():
    return [torch.randn(num_rows, dim), torch.randint(0, num_rows, (num_updates, dim)), torch.randn(num_updates, dim)]


def get_init_inputs():
    return []
