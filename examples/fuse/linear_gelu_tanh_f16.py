import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """A linear layer with GELU (approximate='tanh', as GPT-2's MLP), run in half precision: the input and the
    output are f16; the weight is rounded to f16 by the kernel (the bias stays f32, added to the f32 accumulator)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.fc(x.float()), approximate="tanh").half()


batch_size = 128
in_features = 256
out_features = 384


def get_inputs():
    return [torch.randn(batch_size, in_features).half()]


def get_init_inputs():
    return [in_features, out_features]
