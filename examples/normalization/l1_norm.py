import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that performs L1 normalization over the last dimension."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.sum(torch.abs(x), dim=1, keepdim=True)


batch_size = 128
dim = 4096


def get_inputs():
    # a few large entries per row (about 4): their outputs are ~0.1, not ~1/dim, so an all-zero output cannot
    # pass the f16 tolerance (1e-2)
    x = torch.randn(batch_size, dim)
    x = torch.where(torch.rand(batch_size, dim) < 4.0 / dim, 0.25 * dim * torch.sign(x), x)
    return [x]


def get_init_inputs():
    return []
