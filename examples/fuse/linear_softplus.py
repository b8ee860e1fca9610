import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """A linear layer followed by Softplus."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(self.fc(x))


batch_size = 128
in_features = 256
out_features = 384


def get_inputs():
    # large enough that some outputs pass the threshold of 20 (softplus(v) = v there)
    return [torch.randn(batch_size, in_features) * 40.0]


def get_init_inputs():
    return [in_features, out_features]
