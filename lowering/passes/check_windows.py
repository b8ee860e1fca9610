"""Pooling-window checks (POOL-PARAMS): kernel >= 1, stride >= 1, dilation >= 1, 0 <= padding <= kernel // 2.

The same rules PyTorch's max_pool / avg_pool enforce ("pad should be at most half of kernel
size"). Literals and the defaults of scalar parameters are checked when the kernel is lowered;
values bound at run time (Model attributes) are checked by `check_pool_binding` before a launch,
and the emitted host tiling function refuses them too (it returns 0 blocks).
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.diagnostics import DiagnosticSink, DslError
from ascend_dsl.diagnostics import ErrorCode as E
from ascend_dsl.ops import POOLS


def pool_ops(kernel: ir.Kernel) -> list[ir.Op]:
    out = []
    for s in ir.walk(kernel.body):
        if isinstance(s, (ir.Assign, ir.Store)):
            out += [e for e in ir.walk_expr(s.value) if isinstance(e, ir.Op) and e.op in POOLS]
    return out


def _problems(k: int | None, s: int | None, p: int | None, d: int | None = 1) -> list[tuple[int, str, str]]:
    """(argument index 1..4, message, hint) for each violated rule; None values are unknown."""
    out = []
    if k is not None and k < 1:
        out.append((1, f"kernel={k} must be at least 1", "a pooling window covers at least one element"))
    if s is not None and s < 1:
        out.append((2, f"stride={s} must be at least 1", "stride=kernel gives non-overlapping windows"))
    if p is not None and p < 0:
        out.append((3, f"padding={p} must not be negative", "use padding=0"))
    if d is not None and d < 1:
        out.append((4, f"dilation={d} must be at least 1", "dilation=1 takes adjacent elements"))
    if p is not None and k is not None and k >= 1 and p > k // 2:
        out.append((3, f"padding={p} is more than half the kernel ({k} // 2 = {k // 2}); PyTorch rejects it",
                    f"use padding <= {k // 2}, or a larger kernel"))
    return out


def _static(e: ir.Expr, kernel: ir.Kernel) -> tuple[int | None, str]:
    if isinstance(e, ir.Const):
        return int(e.value), ""
    if isinstance(e, ir.Ref):
        p = kernel.param(e.name)
        if isinstance(p, ir.ScalarParam) and p.default is not None:
            return int(p.default), f" (the default of parameter '{e.name}')"
    return None, ""


def check_windows(kernel: ir.Kernel, sink: DiagnosticSink) -> None:
    seen: set[tuple] = set()
    for op in pool_ops(kernel):
        values = [_static(a, kernel) for a in op.args[1:]]
        for idx, msg, hint in _problems(*(v for v, _ in values)):
            arg = op.args[idx]
            key = (arg.span.line, arg.span.col, msg)
            if key in seen:
                continue
            seen.add(key)
            sink.error(E.POOL_PARAMS, f"{op.op}: {msg}{values[idx - 1][1]}", arg.span, hint)


def check_pool_binding(kernel: ir.Kernel, scalars: dict[str, float], symbols: dict[str, int]) -> None:
    """Run-time values of kernel/stride/padding and the output's spatial sizes, before a launch."""
    from ascend_dsl.launches import is_launches, launch_kernels

    if is_launches(kernel):  # each launch's planes (ascend_dsl/launches.py)
        for sub in launch_kernels(kernel):
            check_pool_binding(sub, scalars, symbols)
        return
    for op in pool_ops(kernel):
        vals = [int(a.value) if isinstance(a, ir.Const) else int(scalars[a.name]) for a in op.args[1:]]
        probs = _problems(*vals)
        if probs:
            idx, msg, hint = probs[0]
            arg = op.args[idx]
            bound = f" (bound from the Model attribute '{arg.name}')" if isinstance(arg, ir.Ref) else ""
            raise DslError.at(E.POOL_PARAMS, f"{op.op}: {msg}{bound}", arg.span, hint)
        k, s, p, d = vals
        span = d * (k - 1) + 1  # the window's extent
        for dims_in, dims_out in _spatial_pairs(kernel):
            for din, dout in zip(dims_in, dims_out, strict=True):
                n_in, n_out = _size(din, symbols), _size(dout, symbols)
                want = (n_in + 2 * p - span) // s + 1 if n_in + 2 * p >= span else 0
                if n_out != want:
                    raise DslError.at(E.BINDING, f"{op.op}: output size {dout}={n_out} but kernel={k}, stride={s}, "
                                      f"padding={p}, dilation={d} on {din}={n_in} give {want}", op.span,
                                      "the output's spatial sizes must be "
                                      "(in + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1")


def _size(d: str | int, symbols: dict[str, int]) -> int:
    return d if isinstance(d, int) else symbols[d]


def _spatial_pairs(kernel: ir.Kernel) -> list[tuple[tuple, tuple]]:
    """(input spatial dims, output spatial dims) for each plane loop."""
    out = []
    for split in kernel.body:
        if not isinstance(split, ir.SplitLoop):
            continue
        for tl in split.body:
            if not (isinstance(tl, ir.TileLoop) and tl.kind is ir.LoopKind.PLANES):
                continue
            lead = len(split.extent)
            ins = [p for p in kernel.inputs if len(p.shape) == lead + tl.shape.rank]
            outs = [p for p in kernel.outputs if len(p.shape) == lead + tl.shape.rank]
            for i in ins:
                for o in outs:
                    out.append((i.shape[lead:], o.shape[lead:]))
    return out
