import torch
from torch import nn


class Model(nn.Module):
    """Conv3d (3x3x3, padding 1, bias), then GroupNorm over groups of output channels (affine, as after
    training)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, num_groups: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=1, bias=True)
        self.gn = nn.GroupNorm(num_groups, out_channels)
        with torch.no_grad():
            self.gn.weight.normal_(1.0, 0.2)
            self.gn.bias.normal_(0.0, 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(self.conv(x))


batch_size = 2
in_channels = 3
out_channels = 12
kernel_size = 3
num_groups = 4
depth = 5
height = 7
width = 9


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]
