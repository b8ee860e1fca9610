import torch
import torch.nn as nn


class Model(nn.Module):
    """Huber / Smooth-L1 loss, mean over every element, a 0-d tensor:

        d = |predictions - targets|
        loss = mean(0.5 * d ** 2 / beta if d < beta else d - 0.5 * beta)

    Same as ``torch.nn.functional.smooth_l1_loss(predictions, targets, beta=beta)`` (reduction='mean');
    with beta = 1.0 it equals ``torch.nn.functional.huber_loss(..., delta=1.0)``.
    """

    def __init__(self, beta: float = 1.0):
        super().__init__()
        self.beta = beta

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.smooth_l1_loss(predictions, targets, beta=self.beta)


batch_size = 128
dim = 4096


def get_inputs():
    predictions = torch.randn(batch_size, dim)   # |d| spans both sides of beta
    targets = torch.randn(batch_size, dim)
    return [predictions, targets]


def get_init_inputs():
    return [1.0]                                  # beta
