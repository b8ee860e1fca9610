import torch
import torch.nn as nn


class Model(nn.Module):
    """Cosine similarity loss, a 0-d tensor: loss = mean_b(1 - cos(predictions[b, :], targets[b, :])), with

        cos(x, y) = sum(x * y) / (max(||x||, eps) * max(||y||, eps)),   eps = 1e-8

    (PyTorch 2.x clamps each row norm separately.)

    Same as ``torch.mean(1 - torch.nn.functional.cosine_similarity(predictions, targets, dim=1))``.
    """

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        cosine_sim = torch.nn.functional.cosine_similarity(predictions, targets, dim=1)
        return torch.mean(1 - cosine_sim)


batch_size = 128
dim = 4096


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    # a random correlation per row, so the cosines spread over (-1, 1) instead of all being ~0
    targets = torch.randn(batch_size, 1) * predictions + torch.randn(batch_size, dim)
    return [predictions, targets]


def get_init_inputs():
    return []
