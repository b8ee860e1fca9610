import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that performs a softmax over the last dimension."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


batch_size = 128
dim = 4096


def get_inputs():
    # spread-out logits: the largest probabilities stay above the f16 tolerance (1e-2) even over 100003
    # columns; with unit logits every probability is ~1/dim and an all-zero output would pass
    x = 4.0 * torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
