import torch
import torch.nn as nn


class Model(nn.Module):
    """One step of RMSprop on a flat parameter tensor.

    Matches the single-tensor step of ``torch.optim.RMSprop(params, lr, alpha, eps, weight_decay,
    momentum=0, centered=False)``:

        g = grad + weight_decay * param
        square_avg = alpha * square_avg + (1 - alpha) * g * g
        param = param - lr * g / (sqrt(square_avg) + eps)

    The state is explicit: ``forward(param, grad, square_avg)`` returns the updated
    ``(param, square_avg)`` and never modifies its arguments.
    """

    def __init__(self, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0.0):
        super().__init__()
        self.lr = lr
        self.alpha = alpha
        self.eps = eps
        self.weight_decay = weight_decay

    def forward(self, param: torch.Tensor, grad: torch.Tensor, square_avg: torch.Tensor):
        g = grad + self.weight_decay * param
        sq = self.alpha * square_avg + (1 - self.alpha) * g * g
        return param - self.lr * g / (sq.sqrt() + self.eps), sq


num_params = 4 * 1024 * 1024


def get_inputs():
    param = torch.randn(num_params)
    grad = torch.randn(num_params)
    square_avg = torch.rand(num_params)   # running mean of squared gradients: non-negative
    return [param, grad, square_avg]


def get_init_inputs():
    return [1e-2, 0.99, 1e-8, 1e-4]      # lr, alpha, eps, weight_decay
