import torch
import torch.nn as nn


class Model(nn.Module):
    """Writes each element of src into the row of x its index entry names, in the same column
    (torch.scatter along dim 0); each column's row numbers are distinct (a permutation's first rows)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
        return torch.scatter(x, 0, index, src)


num_rows = 1024
num_updates = 512
dim = 256


def get_inputs():
    index = torch.argsort(torch.rand(num_rows, dim), dim=0)[:num_updates]
    return [torch.randn(num_rows, dim), index, torch.randn(num_updates, dim)]


def get_init_inputs():
    return []
