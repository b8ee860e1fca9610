import torch
import torch.nn as nn


class Model(nn.Module):
    """One step of LAMB (You et al., "Large Batch Optimization for Deep Learning: Training BERT in
    76 Minutes", arXiv 1904.00962, Algorithm 2) on one parameter tensor, treated as one layer.

        g = grad
        exp_avg = beta1 * exp_avg + (1 - beta1) * g
        exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g
        m_hat = exp_avg / bias_correction1            # bias_correction1 = 1 - beta1 ** step
        v_hat = exp_avg_sq / bias_correction2         # bias_correction2 = 1 - beta2 ** step
        u = m_hat / (sqrt(v_hat) + eps) + weight_decay * param
        trust_ratio = ||param||_2 / ||u||_2           # 1 if either norm is 0
        param = param - lr * trust_ratio * u

    The trust ratio needs two norms over the whole tensor, so a kernel needs a whole-tensor
    reduction before the update. The bias corrections depend only on the hyper-parameters and the
    step count, so they are precomputed as attributes (``bias_correction1``, ``bias_correction2``)
    that a kernel takes as scalar parameters.

    Differences from ``torch_optimizer.Lamb`` (jettify/pytorch-optimizer): that optimizer defaults
    to ``debias=False`` (no bias correction), clamps ||param|| to at most 10 (``clamp_value``), and
    when debiasing folds the correction into the step size (``lr * sqrt(bc2) / bc1``, so eps is not
    rescaled). This task follows the paper, with ``weight_norm`` unclamped.

    The state is explicit: ``forward(param, grad, exp_avg, exp_avg_sq)`` returns the updated
    ``(param, exp_avg, exp_avg_sq)`` and never modifies its arguments.
    """

    def __init__(self, lr: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-6,
                 weight_decay: float = 0.01, step: int = 10):
        super().__init__()
        self.lr = lr
        self.beta1 = beta1
        self.beta2 = beta2
        self.eps = eps
        self.weight_decay = weight_decay
        self.step = step
        self.bias_correction1 = 1 - beta1 ** step
        self.bias_correction2 = 1 - beta2 ** step

    def forward(self, param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor):
        m = self.beta1 * exp_avg + (1 - self.beta1) * grad
        v = self.beta2 * exp_avg_sq + (1 - self.beta2) * grad * grad
        m_hat = m / self.bias_correction1
        v_hat = v / self.bias_correction2
        u = m_hat / (v_hat.sqrt() + self.eps) + self.weight_decay * param
        w_norm = torch.linalg.vector_norm(param)
        u_norm = torch.linalg.vector_norm(u)
        trust_ratio = torch.where((w_norm > 0) & (u_norm > 0), w_norm / u_norm, torch.ones_like(w_norm))
        return param - self.lr * trust_ratio * u, m, v


num_params = 4 * 1024 * 1024


def get_inputs():
    param = torch.randn(num_params)
    grad = torch.randn(num_params)
    exp_avg = 0.1 * torch.randn(num_params)       # state of an optimizer some steps in
    exp_avg_sq = 0.01 * torch.rand(num_params)    # non-negative
    return [param, grad, exp_avg, exp_avg_sq]


def get_init_inputs():
    return [1e-3, 0.9, 0.999, 1e-6, 1e-2, 10]     # lr, beta1, beta2, eps, weight_decay, step
