import torch
import torch.nn as nn


class Model(nn.Module):
    """Hinge loss for binary classification, mean over every element, a 0-d tensor:

        loss = mean(clamp(1 - predictions * targets, min=0)),   targets in {-1, +1}

    Targets have the same shape as the predictions (one label per element), so the kernel is a
    plain element-wise map followed by a mean.
    """

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


batch_size = 128
dim = 4096


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    targets = torch.randint(0, 2, (batch_size, dim)).float() * 2 - 1   # -1 or +1
    return [predictions, targets]


def get_init_inputs():
    return []
