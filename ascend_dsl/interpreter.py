"""Reference interpreter: runs a surface kernel on torch tensors (the DSL's semantic oracle).

Tensors are flat views; a split gives each of `num_cores` cores a contiguous share and a tile loop
walks that share in tiles of `tile` elements, evaluating expressions in the kernel's dtypes.
"""

from __future__ import annotations

import torch

from . import ir
from .diagnostics import DslError
from .ops import OPS


def run(kernel: ir.Kernel, tensors: dict[str, torch.Tensor], scalars: dict[str, float] | None = None,
        num_cores: int = 4, tile: int = 4096) -> dict[str, torch.Tensor]:
    """Run `kernel`; `tensors` maps every tensor parameter (inputs and outputs) to a torch tensor.

    Outputs are written in place (flattened views) and also returned by name."""
    scalars = dict(scalars or {})
    for p in kernel.scalars:
        if p.name not in scalars:
            if p.default is None:
                raise DslError.at("BINDING", f"no value for scalar parameter '{p.name}'", p.span)
            scalars[p.name] = p.default
    flat = {}
    for p in kernel.tensors:
        t = tensors[p.name]
        if t.dtype != p.dtype.torch:
            raise DslError.at("BINDING", f"'{p.name}' is {p.dtype} in the kernel but {t.dtype} was given", p.span)
        flat[p.name] = t.reshape(-1)
    for loop in kernel.body:
        assert isinstance(loop, ir.SplitLoop)
        total = flat[_extent_tensor(kernel, loop)].numel()
        share = -(-total // num_cores) if total else 0
        for core in range(num_cores):
            lo, hi = core * share, min(total, (core + 1) * share)
            for tl in loop.body:
                assert isinstance(tl, ir.TileLoop)
                for start in range(lo, hi, tile):
                    _run_tile(tl.body, flat, scalars, slice(start, min(hi, start + tile)))
    return {p.name: tensors[p.name] for p in kernel.outputs}


def _extent_tensor(kernel: ir.Kernel, loop: ir.SplitLoop) -> str:
    for p in kernel.tensors:
        if tuple(d for d in p.shape) == loop.extent:
            return p.name
    return kernel.tensors[0].name


def _run_tile(body, flat, scalars, sl: slice) -> None:
    env: dict[str, object] = {}
    for s in body:
        if isinstance(s, ir.Assign):
            env[s.name] = _eval(s.value, env, flat, scalars, sl)
        elif isinstance(s, ir.Store):
            flat[s.tensor][sl] = _eval(s.value, env, flat, scalars, sl)


def _eval(e: ir.Expr, env, flat, scalars, sl):
    match e:
        case ir.Const(value=v, type=t):
            return torch.tensor(v, dtype=t.dtype.torch)
        case ir.Ref(name=n, type=t):
            if n in env:
                return env[n]
            return torch.tensor(scalars[n], dtype=t.dtype.torch)
        case ir.Load(tensor=name):
            return flat[name][sl].clone()
        case ir.Op(op="cast", args=(a,), type=t):
            return _eval(a, env, flat, scalars, sl).to(t.dtype.torch)
        case ir.Op(op=op, args=args, type=t):
            vals = [_eval(a, env, flat, scalars, sl) for a in args]
            out = OPS[op].ref(*vals)
            return out if t.dtype.value == "bool" else out.to(t.dtype.torch)
    raise TypeError(e)
