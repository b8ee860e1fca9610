import torch
import torch.nn as nn


class Model(nn.Module):
    """Matmul, add a parameter, Swish, Tanh, GELU, Hardtanh (KernelBench level 2,
    Matmul_Add_Swish_Tanh_GELU_Hardtanh)."""

    def __init__(self, in_features: int, out_features: int, add_value_shape: tuple):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.add_value = nn.Parameter(torch.randn(add_value_shape) * 0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.matmul(x)
        x = x + self.add_value
        x = torch.sigmoid(x) * x  # Swish
        x = torch.tanh(x)
        x = torch.nn.functional.gelu(x)  # GELU
        x = torch.nn.functional.hardtanh(x, min_val=-1, max_val=1)  # Hardtanh
        return x


batch_size = 128
in_features = 256
out_features = 384


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, (out_features,)]
