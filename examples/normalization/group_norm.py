import torch
import torch.nn as nn


class Model(nn.Module):
    """GroupNorm: the C channels form num_groups groups of C / num_groups consecutive channels; every
    (sample, group) is normalised with the mean and biased variance of its values over (C / num_groups,
    H, W), then each channel is scaled by weight[c] and shifted by bias[c]. Same as
    torch.nn.functional.group_norm(x, num_groups, weight, bias, eps)."""

    def __init__(self, num_groups: int, eps: float = 1e-5):
        super().__init__()
        self.num_groups = num_groups
        self.eps = eps

    def forward(self, x, weight, bias):
        return torch.nn.functional.group_norm(x, self.num_groups, weight, bias, self.eps)


batch_size = 16
features = 64
num_groups = 8
dim1 = 256
dim2 = 256


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2) * 2.0 + 0.5
    weight = torch.randn(features)
    bias = torch.randn(features)
    return [x, weight, bias]


def get_init_inputs():
    return [num_groups]
