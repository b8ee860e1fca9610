import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = 0.75

    def forward(self, a, b):
        k = self.k
        x, y = a, b + 2.0
        s = y.sqrt() + y.rsqrt() + y.reciprocal() + y.log() + (-x.abs()).exp()
        s = s + x / y + (2.0 - x) + 1.0 / y - k * x + x**2 / 8.0
        s = s + torch.maximum(x, torch.tensor(0.1)) - torch.minimum(x, y) + (x - 0.5).relu() + x.tanh() + x.sigmoid()
        s = s + torch.where(x >= 0.25, x, 0.5) + torch.where(0.0 < x, 1.0, y) + torch.where(x != y, x * y, -1.0)
        s = s + torch.where(x <= y, y, x) + torch.where(x == x, 0.0, 1.0) + torch.where(x < -0.5, torch.erf(x), -x)
        return s, (s * k).half()


size = 70001


def get_inputs():
    return [torch.randn(size), torch.rand(size)]


def get_init_inputs():
    return []
