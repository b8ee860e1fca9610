import torch
import torch.nn as nn


class Model(nn.Module):
    """Adds rows of src, scaled by alpha, into the rows of x an index vector names (torch.index_add along
    dim 0, e.g. accumulating embedding-gradient rows); repeated indices add up."""

    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
        return torch.index_add(x, 0, index, src, alpha=self.alpha)


num_rows = 1024
num_updates = 512
dim = 256


def get_inputs():
    return [torch.randn(num_rows, dim), torch.randint(0, num_rows, (num_updates,)), torch.randn(num_updates, dim)]


def get_init_inputs():
    return [0.5]
