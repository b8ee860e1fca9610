"""The optimizer task files compute exactly one step of the torch.optim optimizer they name.

Each task's `Model.forward(param, grad, *state)` is compared with `torch.optim.X(..., foreach=False)`
(the single-tensor step) run for one step on the same data, with the optimizer's state set to the
task's state tensors. Fast: small tensors, no emulator.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest
import torch

OPT = Path(__file__).resolve().parent.parent / "examples" / "optimizer"
N = 1000  # not a multiple of anything in particular


def _task(name: str, **sizes):
    ns = runpy.run_path(str(OPT / f"{name}.py"), run_name="__task__")
    ns["get_inputs"].__globals__.update({"num_params": N, **sizes})
    torch.manual_seed(0)
    model = ns["Model"](*ns["get_init_inputs"]())
    inputs = ns["get_inputs"]()
    return model, inputs


def _forward(model, inputs):
    """Run forward on the inputs; check it leaves them unmodified."""
    before = [t.clone() for t in inputs]
    with torch.no_grad():
        out = model(*inputs)
    for a, b in zip(inputs, before, strict=True):
        assert torch.equal(a, b), "forward must not modify its inputs"
    return out


def _torch_step(opt_cls, param, grad, state: dict, **hyper):
    p = torch.nn.Parameter(param.clone())
    p.grad = grad.clone()
    opt = opt_cls([p], foreach=False, **hyper)
    opt.state[p].update({k: v.clone() for k, v in state.items()})
    opt.step()
    return p.detach(), opt.state[p]


def _close(a, b):
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_sgd_momentum_matches_torch_optim_sgd():
    model, (param, grad, buf) = _task("sgd_momentum")
    assert model.weight_decay != 0  # exercise the folded L2 term
    new_param, new_buf = _forward(model, [param, grad, buf])
    p, state = _torch_step(torch.optim.SGD, param, grad, {"momentum_buffer": buf}, lr=model.lr,
                           momentum=model.momentum, dampening=0, weight_decay=model.weight_decay, nesterov=False)
    _close(new_param, p)
    _close(new_buf, state["momentum_buffer"])


def test_adam_matches_torch_optim_adam():
    model, (param, grad, exp_avg, exp_avg_sq) = _task("adam")
    assert model.step > 1 and model.weight_decay != 0
    out = _forward(model, [param, grad, exp_avg, exp_avg_sq])
    p, state = _torch_step(torch.optim.Adam, param, grad,
                           {"step": torch.tensor(float(model.step - 1)), "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq},
                           lr=model.lr, betas=(model.beta1, model.beta2), eps=model.eps,
                           weight_decay=model.weight_decay, amsgrad=False)
    assert float(state["step"]) == model.step
    _close(out[0], p)
    _close(out[1], state["exp_avg"])
    _close(out[2], state["exp_avg_sq"])
    # the precomputed scalars the kernel uses
    assert model.step_size == pytest.approx(model.lr / (1 - model.beta1 ** model.step))
    assert model.bias_correction2_sqrt == pytest.approx((1 - model.beta2 ** model.step) ** 0.5)


def test_adagrad_matches_torch_optim_adagrad():
    model, (param, grad, state_sum) = _task("adagrad")
    new_param, new_sum = _forward(model, [param, grad, state_sum])
    p, state = _torch_step(torch.optim.Adagrad, param, grad, {"sum": state_sum}, lr=model.lr, lr_decay=0,
                           weight_decay=model.weight_decay, eps=model.eps)
    _close(new_param, p)
    _close(new_sum, state["sum"])


def test_rmsprop_matches_torch_optim_rmsprop():
    model, (param, grad, square_avg) = _task("rmsprop")
    new_param, new_sq = _forward(model, [param, grad, square_avg])
    p, state = _torch_step(torch.optim.RMSprop, param, grad, {"step": torch.tensor(0.0), "square_avg": square_avg},
                           lr=model.lr, alpha=model.alpha, eps=model.eps, weight_decay=model.weight_decay,
                           momentum=0, centered=False)
    _close(new_param, p)
    _close(new_sq, state["square_avg"])


def _lamb_reference(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps, weight_decay, step):
    """LAMB as written in arXiv 1904.00962 (Algorithm 2), one layer, element by element in float64."""
    p, g, m, v = (t.double() for t in (param, grad, exp_avg, exp_avg_sq))
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g ** 2
    r = (m / (1 - beta1 ** step)) / ((v / (1 - beta2 ** step)).sqrt() + eps)
    u = r + weight_decay * p
    phi = p.pow(2).sum().sqrt().item()
    un = u.pow(2).sum().sqrt().item()
    ratio = phi / un if phi > 0 and un > 0 else 1.0
    return (p - lr * ratio * u).float(), m.float(), v.float()


def test_lamb_matches_the_paper():
    model, inputs = _task("lamb")
    out = _forward(model, inputs)
    ref = _lamb_reference(*inputs, model.lr, model.beta1, model.beta2, model.eps, model.weight_decay, model.step)
    for a, b in zip(out, ref, strict=True):
        _close(a, b)
    # a zero parameter tensor has norm 0: trust ratio 1
    inputs[0] = torch.zeros_like(inputs[0])
    out = _forward(model, inputs)
    ref = _lamb_reference(*inputs, model.lr, model.beta1, model.beta2, model.eps, model.weight_decay, model.step)
    _close(out[0], ref[0])
