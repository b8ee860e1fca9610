import torch
import torch.nn as nn


class Model(nn.Module):
    """One step of Adagrad on a flat parameter tensor.

    Matches the single-tensor step of ``torch.optim.Adagrad(params, lr, lr_decay=0, weight_decay, eps)``
    (with ``lr_decay = 0`` the step's learning rate ``clr = lr / (1 + (step - 1) * lr_decay)`` is ``lr``):

        g = grad + weight_decay * param
        state_sum = state_sum + g * g
        param = param - lr * g / (sqrt(state_sum) + eps)

    The state is explicit: ``forward(param, grad, state_sum)`` returns the updated
    ``(param, state_sum)`` and never modifies its arguments.
    """

    def __init__(self, lr: float = 1e-2, eps: float = 1e-10, weight_decay: float = 0.0):
        super().__init__()
        self.lr = lr
        self.eps = eps
        self.weight_decay = weight_decay

    def forward(self, param: torch.Tensor, grad: torch.Tensor, state_sum: torch.Tensor):
        g = grad + self.weight_decay * param
        s = state_sum + g * g
        return param - self.lr * g / (s.sqrt() + self.eps), s


num_params = 4 * 1024 * 1024


def get_inputs():
    param = torch.randn(num_params)
    grad = torch.randn(num_params)
    state_sum = torch.rand(num_params)    # accumulated squared gradients: non-negative
    return [param, grad, state_sum]


def get_init_inputs():
    return [1e-2, 1e-10, 1e-4]            # lr, eps, weight_decay
