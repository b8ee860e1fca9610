import torch
import torch.nn as nn


class Model(nn.Module):
    """Frobenius-norm normalisation of the whole tensor: y = x / ||x||_F, ||x||_F = sqrt(sum(x ** 2))
    over every element (one norm for the whole tensor, not per row)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        norm = torch.norm(x, p="fro")
        return x / norm


batch_size = 16
features = 64
dim1 = 256
dim2 = 256


def get_inputs():
    # a few entries (about 4) as large as the norm of the rest: their outputs are ~0.4, not ~1/sqrt(numel), so
    # an all-zero output cannot pass the f16 tolerance (1e-2)
    x = torch.randn(batch_size, features, dim1, dim2)
    n = x.numel()
    return [torch.where(torch.rand(x.shape) < 4.0 / n, n ** 0.5 * torch.sign(x), x)]


def get_init_inputs():
    return []
