import torch
import torch.nn as nn


class Model(nn.Module):
    """GEMM, scaling, hardtanh and GELU (KernelBench level 2, Gemm_Scaling_Hardtanh_GELU)."""

    def __init__(self, in_features: int, out_features: int, scaling_factor: float, hardtanh_min: float,
                 hardtanh_max: float):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor
        self.hardtanh = nn.Hardtanh(min_val=hardtanh_min, max_val=hardtanh_max)
        self.gelu = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = x * self.scaling_factor
        x = self.hardtanh(x)
        x = self.gelu(x)
        return x


batch_size = 128
in_features = 256
out_features = 384
scaling_factor = 2.0
hardtanh_min = -2.0
hardtanh_max = 2.0


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor, hardtanh_min, hardtanh_max]
