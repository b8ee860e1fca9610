import torch
import torch.nn as nn


class Model(nn.Module):
    """A linear layer, torch.min with a constant, then minus the constant (KernelBench level 2,
    Matmul_Min_Subtract, with the constant a number attribute)."""

    def __init__(self, in_features: int, out_features: int, constant: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.constant = constant

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = torch.clamp_max(x, self.constant)
        x = x - self.constant
        return x


batch_size = 128
in_features = 256
out_features = 384
constant = 0.5


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, constant]
