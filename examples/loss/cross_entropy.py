import torch
import torch.nn as nn


class Model(nn.Module):
    """Cross entropy of logits against class indices, mean over the batch, a 0-d tensor:

        loss = mean_b(logsumexp(predictions[b, :]) - predictions[b, targets[b]])

    Same as ``torch.nn.functional.cross_entropy(predictions, targets)`` (reduction='mean', no class
    weights, no label smoothing). ``predictions`` are logits [batch_size, num_classes];
    ``targets`` are int64 class indices [batch_size] in [0, num_classes).
    """

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cross_entropy(predictions, targets)


batch_size = 4096
num_classes = 1000


def get_inputs():
    predictions = torch.randn(batch_size, num_classes)
    targets = torch.randint(0, num_classes, (batch_size,))
    return [predictions, targets]


def get_init_inputs():
    return []
