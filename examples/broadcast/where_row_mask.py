import torch
import torch.nn as nn


class Model(nn.Module):
    """Picks whole rows of x or of z by a per-row boolean mask (torch.where with a [batch, 1] condition)."""

    def __init__(self):
        super().__init__()

    def forward(self, mask: torch.Tensor, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return torch.where(mask.unsqueeze(1), x, z)


batch_size = 128
dim = 4096


def get_inputs():
    return [torch.rand(batch_size) < 0.5, torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
