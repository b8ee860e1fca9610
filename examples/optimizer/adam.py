import torch
import torch.nn as nn


class Model(nn.Module):
    """One step of Adam on a flat parameter tensor.

    Matches the single-tensor step of ``torch.optim.Adam(params, lr, betas=(beta1, beta2), eps,
    weight_decay, amsgrad=False)`` at step number ``step`` (>= 1, counted after the increment):

        g = grad + weight_decay * param
        exp_avg = lerp(exp_avg, g, 1 - beta1)            # = beta1 * exp_avg + (1 - beta1) * g
        exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g
        step_size = lr / (1 - beta1 ** step)
        bias_correction2_sqrt = sqrt(1 - beta2 ** step)
        param = param - step_size * exp_avg / (sqrt(exp_avg_sq) / bias_correction2_sqrt + eps)

    The two bias-correction scalars depend only on the hyper-parameters and the step count, so they
    are precomputed here as attributes (``step_size``, ``bias_correction2_sqrt``) that the kernel
    takes as scalar parameters: the DSL has no scalar ``**`` with a non-constant exponent.

    The state is explicit: ``forward(param, grad, exp_avg, exp_avg_sq)`` returns the updated
    ``(param, exp_avg, exp_avg_sq)`` and never modifies its arguments.
    """

    def __init__(self, lr: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
                 weight_decay: float = 0.0, step: int = 10):
        super().__init__()
        self.lr = lr
        self.beta1 = beta1
        self.beta2 = beta2
        self.eps = eps
        self.weight_decay = weight_decay
        self.step = step
        self.step_size = lr / (1 - beta1 ** step)
        self.bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5

    def forward(self, param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor):
        g = grad + self.weight_decay * param
        m = torch.lerp(exp_avg, g, 1 - self.beta1)
        v = self.beta2 * exp_avg_sq + (1 - self.beta2) * g * g
        denom = v.sqrt() / self.bias_correction2_sqrt + self.eps
        return param - self.step_size * m / denom, m, v


num_params = 4 * 1024 * 1024


def get_inputs():
    param = torch.randn(num_params)
    grad = torch.randn(num_params)
    exp_avg = 0.1 * torch.randn(num_params)       # state of an optimizer some steps in
    exp_avg_sq = 0.01 * torch.rand(num_params)    # non-negative
    return [param, grad, exp_avg, exp_avg_sq]


def get_init_inputs():
    return [1e-3, 0.9, 0.999, 1e-8, 1e-2, 10]     # lr, beta1, beta2, eps, weight_decay, step
