import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that performs layer normalization over the last dimension; weight and bias are inputs."""

    def __init__(self, eps: float = 1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, self.eps)


batch_size = 128
dim = 4096


def get_inputs():
    x = torch.randn(batch_size, dim)
    weight = torch.randn(dim)
    bias = torch.randn(dim)
    return [x, weight, bias]


def get_init_inputs():
    return []
