import torch
import torch.nn as nn


class Model(nn.Module):
    """Swish with a learnable beta (a 0-d nn.Parameter): y = x * sigmoid(beta * x)."""

    def __init__(self, beta: float = 1.5):
        super().__init__()
        self.beta = nn.Parameter(torch.tensor(beta))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.beta * x)


batch_size = 16
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
