import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.GroupNorm(num_groups, C): the group count and eps live on the submodule, the affine weight and
    bias are its parameters."""

    def __init__(self, num_groups: int, num_channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels)
        with torch.no_grad():
            self.gn.weight.normal_(1.0, 0.2)
            self.gn.bias.normal_(0.0, 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


batch_size = 8
channels = 32
groups = 4
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 1.5 + 0.5]


def get_init_inputs():
    return [groups, channels]
