import torch
import torch.nn as nn


class Model(nn.Module):
    """GEMM, sigmoid, scaling, residual add of the GEMM output (KernelBench level 2,
    Gemm_Sigmoid_Scaling_ResidualAdd)."""

    def __init__(self, in_features: int, out_features: int, scaling_factor: float):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        original_x = x
        x = torch.sigmoid(x)
        x = x * self.scaling_factor
        x = x + original_x
        return x


batch_size = 128
in_features = 256
out_features = 384
scaling_factor = 2.0


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]
