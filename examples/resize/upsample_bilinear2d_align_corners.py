import torch
from torch import nn


class Model(nn.Module):
    """Bilinear resize to a fixed size with align_corners=True (segmentation heads, DeepLab style)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.interpolate(x, size=(out_height, out_width), mode="bilinear", align_corners=True)


batch_size = 16
channels = 32
height = 64
width = 64
out_height = 257
out_width = 257


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
