import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """A linear layer followed by ELU with a configurable alpha."""

    def __init__(self, in_features: int, out_features: int, alpha: float):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.elu(self.fc(x), alpha=self.alpha)


batch_size = 128
in_features = 256
out_features = 384
alpha = 0.5


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, alpha]
