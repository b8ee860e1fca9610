import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """A bias-free linear layer, a bias add with its own Parameter, LeakyReLU, then GELU (KernelBench level 2 style:
    Gemm_BiasAdd_LeakyReLU_GELU)."""

    def __init__(self, in_features: int, out_features: int, negative_slope: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.5)
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x) + self.bias
        x = F.leaky_relu(x, negative_slope=self.negative_slope)
        return F.gelu(x)


batch_size = 128
in_features = 256
out_features = 384
negative_slope = 0.2


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, negative_slope]
