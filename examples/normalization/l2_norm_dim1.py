import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """L2 normalization over dim 1 of a 3-D tensor (F.normalize with p=2, dim=1)."""

    def __init__(self, eps: float = 1e-12):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(x, p=2.0, dim=1, eps=self.eps)


batch_size = 16
dim1 = 128
dim2 = 1024


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return []
