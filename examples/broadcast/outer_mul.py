import torch
import torch.nn as nn


class Model(nn.Module):
    """Multiplies a [batch, 1, hidden] tensor by a [1, seq_len, hidden] tensor, both broadcast to
    [batch, seq_len, hidden]."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a * b


batch_size = 16
seq_len = 512
hidden = 1024


def get_inputs():
    return [torch.randn(batch_size, 1, hidden), torch.randn(1, seq_len, hidden)]


def get_init_inputs():
    return []
