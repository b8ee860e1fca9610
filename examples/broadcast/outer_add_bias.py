import torch
import torch.nn as nn


class Model(nn.Module):
    """Adds a per-position bias [1, seq_len, 1] to a [batch, 1, hidden] tensor: the result is
    [batch, seq_len, hidden] (each operand broadcast along the other's size-1 dims)."""

    def __init__(self, seq_len):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(1, seq_len, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.bias


batch_size = 16
seq_len = 512
hidden = 1024


def get_inputs():
    return [torch.randn(batch_size, 1, hidden)]


def get_init_inputs():
    return [seq_len]
