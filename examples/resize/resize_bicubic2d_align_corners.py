import torch
from torch import nn


class Model(nn.Module):
    """Bicubic resize to a fixed, non-integer-ratio size with align_corners=True."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.interpolate(x, size=(out_height, out_width), mode="bicubic", align_corners=True)


batch_size = 16
channels = 32
height = 64
width = 64
out_height = 97
out_width = 150


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
