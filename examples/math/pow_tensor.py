import torch
import torch.nn as nn


class Model(nn.Module):
    """Element-wise power with a tensor exponent (torch.pow(x, e))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
        return torch.pow(x, e)


batch_size = 16
dim = 16384


def get_inputs():
    # bases of both signs (|x| >= 0.1: f16 results stay finite), some exactly 0 and 1; exponents: integers (odd and
    # even, negative too) and fractions
    x = torch.randn(batch_size, dim) * 2
    x = torch.where(x.abs() < 0.1, x.sign() * 0.1 + 0.1 * (x == 0), x)
    x = torch.where(torch.rand(batch_size, dim) < 0.05, torch.zeros(()), x)
    x = torch.where(torch.rand(batch_size, dim) < 0.05, torch.ones(()), x)
    whole = torch.randint(-3, 4, (batch_size, dim)).float()
    e = torch.where(torch.rand(batch_size, dim) < 0.5, whole, torch.rand(batch_size, dim) * 4 - 2)
    return [x, e]


def get_init_inputs():
    return []
