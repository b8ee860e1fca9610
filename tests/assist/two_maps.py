import torch
import torch.nn as nn


class Model(nn.Module):
    """relu(x) and sigmoid(x): two outputs of one input."""

    def forward(self, x):
        return torch.relu(x), torch.sigmoid(x)


n = 1 << 20


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []
