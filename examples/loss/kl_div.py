import torch
import torch.nn as nn


class Model(nn.Module):
    """Kullback-Leibler divergence between row distributions, averaged over the batch, a 0-d tensor:

        loss = sum(targets * (log(targets) - log(predictions))) / batch_size

    Same as ``torch.nn.functional.kl_div(torch.log(predictions), targets, reduction='batchmean')``.
    Both inputs are probability distributions per row (softmax-normalised in ``get_inputs``), so
    every element is strictly positive.
    """

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.kl_div(torch.log(predictions), targets, reduction="batchmean")


batch_size = 128
dim = 4096


def get_inputs():
    predictions = torch.randn(batch_size, dim).softmax(dim=-1)
    targets = torch.randn(batch_size, dim).softmax(dim=-1)
    return [predictions, targets]


def get_init_inputs():
    return []
