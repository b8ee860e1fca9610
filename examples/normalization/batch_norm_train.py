import torch
import torch.nn as nn


class Model(nn.Module):
    """BatchNorm2d in training mode: every channel is normalised with the mean and biased variance of
    its values over (N, H, W), then scaled by weight[c] and shifted by bias[c]. Same as
    torch.nn.functional.batch_norm(x, None, None, weight, bias, training=True, eps=eps) (no running
    statistics are tracked)."""

    def __init__(self, eps: float = 1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x, weight, bias):
        return torch.nn.functional.batch_norm(x, None, None, weight, bias, training=True, eps=self.eps)


batch_size = 16
features = 64
dim1 = 256
dim2 = 256


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2) * 2.0 + 0.5
    weight = torch.randn(features)
    bias = torch.randn(features)
    return [x, weight, bias]


def get_init_inputs():
    return []
