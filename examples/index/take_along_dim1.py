import torch
import torch.nn as nn


class Model(nn.Module):
    """Picks, for every batch, rows along the middle dimension by that batch's own indices (e.g. the top-k
    tokens' features: torch.take_along_dim with dim=1 on the indices widened to [batch, k, 1]); negative
    indices count from the end."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.take_along_dim(x, index.unsqueeze(-1), dim=1)


batch_size = 16
dim1 = 1024
dim2 = 512
num_indices = 256


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2), torch.randint(-dim1, dim1, (batch_size, num_indices))]


def get_init_inputs():
    return []
