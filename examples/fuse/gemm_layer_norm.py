import torch
from torch import nn


class Model(nn.Module):
    """A linear layer, then LayerNorm over its output features (affine, as after training)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.ln = nn.LayerNorm(out_features)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(self.fc(x))


M = 64
K = 96
N = 1000


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
