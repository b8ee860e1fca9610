import torch
import torch.nn as nn


class Model(nn.Module):
    """A linear layer, dropout and tanh, in inference: the model is put in eval mode, so dropout is the identity."""

    def __init__(self, in_features: int, out_features: int, dropout_p: float):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout_p)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dropout(self.fc(x)))


batch_size = 128
in_features = 256
out_features = 384
dropout_p = 0.2


def get_inputs():
    return [torch.randn(batch_size, in_features) * 4.0]


def get_init_inputs():
    return [in_features, out_features, dropout_p]
