import torch
import torch.nn as nn


class Model(nn.Module):
    """Accumulates rows of values into x at the rows an index vector names (Tensor.index_put with
    accumulate=True); negative indices count from the end, repeated ones add up."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        return x.index_put((index,), values, accumulate=True)


num_rows = 2048
num_updates = 1024
dim = 128


def get_inputs():
    return [torch.randn(num_rows, dim), torch.randint(-num_rows, num_rows, (num_updates,)),
            torch.randn(num_updates, dim)]


def get_init_inputs():
    return []
