import math

import torch
from torch import nn


class Model(nn.Module):
    """A spatial transformer's sampler: each image resampled through its own affine grid (rotation, scale,
    translation; F.affine_grid), nearest neighbour with border padding."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
        return nn.functional.grid_sample(x, grid, mode="nearest", padding_mode="border", align_corners=True)


batch_size = 16
channels = 32
height = 64
width = 64
out_height = 32
out_width = 32


def get_inputs():
    # the localisation net's output: per image an angle, a scale and a shift, as F.affine_grid's theta
    angle = torch.rand(batch_size) * 2 * math.pi
    scale = 0.6 + torch.rand(batch_size) * 0.8
    shift = torch.rand(batch_size, 2) * 0.6 - 0.3
    theta = torch.stack([torch.stack([scale * angle.cos(), -scale * angle.sin(), shift[:, 0]], 1),
                         torch.stack([scale * angle.sin(), scale * angle.cos(), shift[:, 1]], 1)], 1)
    grid = nn.functional.affine_grid(theta, [batch_size, channels, out_height, out_width], align_corners=True)
    return [torch.randn(batch_size, channels, height, width), grid]


def get_init_inputs():
    return []
