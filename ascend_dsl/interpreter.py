"""Reference interpreter: runs a surface kernel on torch tensors (the DSL's semantic oracle).

Tensors are flat views; a split gives each of `num_cores` cores a contiguous share and a tile loop
walks that share in tiles of `tile` elements, evaluating expressions in the kernel's dtypes.
"""

from __future__ import annotations

import torch

from . import ir
from .diagnostics import DslError
from .ops import OPS, POOLS


def run(kernel: ir.Kernel, tensors: dict[str, torch.Tensor], scalars: dict[str, float] | None = None,
        num_cores: int = 4, tile: int = 4096) -> dict[str, torch.Tensor]:
    """Run `kernel`; `tensors` maps every tensor parameter (inputs and outputs) to a torch tensor.

    Outputs are written in place and also returned by name. Rank-1 parameters are viewed flat; row
    loops walk blocks of whole rows (`tile` elements' worth of rows, at least one)."""
    scalars = dict(scalars or {})
    for p in kernel.scalars:
        if p.name not in scalars:
            if p.default is None:
                raise DslError.at("BINDING", f"no value for scalar parameter '{p.name}'", p.span)
            scalars[p.name] = p.default
    views = {}
    for p in kernel.tensors:
        t = tensors[p.name]
        if t.dtype != p.dtype.torch:
            raise DslError.at("BINDING", f"'{p.name}' is {p.dtype} in the kernel but {t.dtype} was given", p.span)
        views[p.name] = t.reshape(-1) if len(p.shape) == 1 else t
    symbols = _symbols(kernel, views)
    for loop in kernel.body:
        assert isinstance(loop, ir.SplitLoop)
        total = 1
        for s in loop.extent:
            total *= symbols[s]
        share = -(-total // num_cores) if total else 0
        for core in range(num_cores):
            lo, hi = core * share, min(total, (core + 1) * share)
            for tl in loop.body:
                assert isinstance(tl, ir.TileLoop)
                step = tile if tl.row_shape is None else max(1, tile // max(symbols[tl.row_shape[1]], 1))
                tviews = views
                if tl.plane_rank:  # [N, C, *spatial] tensors as (N * C) planes; a tile is a block of planes
                    lead = len(loop.extent)
                    tviews = {**views, **{p.name: tensors[p.name].reshape(total, *tensors[p.name].shape[lead:])
                                          for p in kernel.tensors if len(p.shape) > lead}}
                    plane = max([tviews[p.name][0].numel() for p in kernel.tensors
                                 if len(p.shape) > lead and len(tviews[p.name])] + [1])
                    step = max(1, tile // max(plane, 1))
                for start in range(lo, hi, step):
                    _run_tile(tl.body, tviews, scalars, slice(start, min(hi, start + step)))
    return {p.name: tensors[p.name] for p in kernel.outputs}


def _symbols(kernel: ir.Kernel, views) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in kernel.tensors:
        dims = list(views[p.name].shape)
        for d, n in zip(p.shape, dims, strict=False):
            if isinstance(d, str):
                out.setdefault(d, n)
    return out


def _run_tile(body, views, scalars, sl: slice) -> None:
    env: dict[str, object] = {}
    for s in body:
        if isinstance(s, ir.Assign):
            env[s.name] = _eval(s.value, env, views, scalars, sl)
        elif isinstance(s, ir.Store):
            value = _eval(s.value, env, views, scalars, sl)
            target = views[s.tensor]
            if s.index.rows:
                target[sl, :] = value.expand(target[sl, :].shape)
            elif s.value.type.layout is ir.Layout.POOLED:
                target[sl] = value
            else:
                target[sl] = value.reshape(-1) if value.dim() > 1 else value


def _eval(e: ir.Expr, env, views, scalars, sl):
    match e:
        case ir.Const(value=v, type=t):
            return torch.tensor(v, dtype=t.dtype.torch)
        case ir.Ref(name=n, type=t):
            if n in env:
                return env[n]
            return torch.tensor(scalars[n], dtype=t.dtype.torch)
        case ir.Load(tensor=name, type=t):
            view = views[name]
            if t.layout is ir.Layout.ROWS:
                return view[sl, :].clone()
            if t.layout is ir.Layout.ROW:
                return view.reshape(1, -1).clone()
            if t.layout is ir.Layout.COL:
                return view[sl].reshape(-1, 1).clone()
            return view[sl].clone()
        case ir.Op(op=op, args=(a, *params), type=t) if op in POOLS:
            window = (int(_eval(q, env, views, scalars, sl)) for q in params)  # kernel, stride, padding, dilation
            return OPS[op].ref(_eval(a, env, views, scalars, sl), *window).to(t.dtype.torch)
        case ir.Op(op="cast", args=(a,), type=t):
            return _eval(a, env, views, scalars, sl).to(t.dtype.torch)
        case ir.Op(op=op, args=args, type=t):
            vals = [_eval(a, env, views, scalars, sl) for a in args]
            out = OPS[op].ref(*vals)
            return out if t.dtype.value == "bool" else out.to(t.dtype.torch)
    raise TypeError(e)
