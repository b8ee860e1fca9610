import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.LayerNorm over the last dimension with its affine weight and bias (values as after training)."""

    def __init__(self, D: int):
        super().__init__()
        self.ln = nn.LayerNorm(D, eps=1e-6)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


B = 64
D = 3000


def get_inputs():
    return [torch.randn(B, D) * 2.0 + 1.0]


def get_init_inputs():
    return [D]
