import torch
import torch.nn as nn


class Model(nn.Module):
    """One step of SGD with momentum on a flat parameter tensor.

    Matches the single-tensor step of ``torch.optim.SGD(params, lr, momentum, dampening=0,
    weight_decay, nesterov=False)`` once the momentum buffer exists (every step after the first):

        g = grad + weight_decay * param
        buf = momentum * buf + g
        param = param - lr * buf

    The state is explicit: ``forward(param, grad, momentum_buffer)`` returns the updated
    ``(param, momentum_buffer)`` and never modifies its arguments.
    """

    def __init__(self, lr: float = 0.01, momentum: float = 0.9, weight_decay: float = 1e-4):
        super().__init__()
        self.lr = lr
        self.momentum = momentum
        self.weight_decay = weight_decay

    def forward(self, param: torch.Tensor, grad: torch.Tensor, momentum_buffer: torch.Tensor):
        g = grad + self.weight_decay * param
        buf = self.momentum * momentum_buffer + g
        return param - self.lr * buf, buf


num_params = 4 * 1024 * 1024


def get_inputs():
    param = torch.randn(num_params)
    grad = torch.randn(num_params)
    momentum_buffer = torch.randn(num_params)
    return [param, grad, momentum_buffer]


def get_init_inputs():
    return [0.01, 0.9, 1e-4]
