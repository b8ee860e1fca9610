"""A second opinion from float64 when a float32 output misses PyTorch's float32 reference.

PyTorch's float32 reference is not always the exact answer: its CPU `torch.norm` / `linalg.vector_norm` keeps
one float32 accumulator per vector lane, so over millions of elements it drifts (pytorch/pytorch#169237, open
for torch 2.x; `torch.sum` uses cascade summation and does not): `x / torch.norm(x)` over 16 x 64 x 256 x 256
is 2 % off in torch 2.13. A kernel that sums more carefully then "mismatches" a wrong reference.

So when a float32 output fails, the case runs again with the model and its arguments in float64 (the task
worker's `wide` request: only when every floating tensor of the case is float32; the model's text is
unchanged). The output is accepted only if both hold:
- the kernel's result is within the float32 tolerance of the float64 reference, and
- PyTorch's float32 result is not: the reference itself is what is off, by more than the tolerance.
Anything else stays a mismatch (a wrong kernel is no closer to float64 than to float32). The comparison then
says which reference it used and by how much PyTorch's float32 result is off (`Comparison.against`).
"""

from __future__ import annotations

import dataclasses
import json

from .compare import Comparison, compare


def _wide_outputs(kernel, run) -> dict | None:
    """Output name -> the case's reference computed in float64, or None (no source, not all-float32, a failure)."""
    from ascend_dsl.diagnostics import DslError

    from .task import run_task_cases

    src = getattr(run, "source", None)
    if src is None:
        return None
    try:
        cases = run_task_cases(src.path, seed=src.seed, overrides=dict(src.overrides), cap=src.cap,
                               kernel=json.loads(src.kernel) if src.kernel else None, timeout=src.timeout, wide=True)
    except DslError:
        return None
    outputs = cases.cases[src.index].outputs if src.index < len(cases.cases) else []
    if len(outputs) != len(kernel.outputs):
        return None
    return {p.name: t for p, t in zip(kernel.outputs, outputs, strict=True)}


def reconsider(kernel, run, comps: list[Comparison], got: dict, refs: dict) -> list[Comparison]:
    """`comps` with each failing float32 output compared again against float64 (module docstring); `got` and
    `refs`: output name -> the kernel's result and PyTorch's float32 reference."""
    dtypes = {p.name: p.dtype.value for p in kernel.outputs}
    failing = [c for c in comps if not c.ok and dtypes.get(c.name) == "f32" and c.name in got]
    if not failing:
        return comps
    wide = _wide_outputs(kernel, run)
    if wide is None:
        return comps
    out = []
    for c in comps:
        if c in failing:
            mine = compare(c.name, got[c.name], wide[c.name], "f32", tol=c.tol)
            theirs = compare(c.name, refs[c.name], wide[c.name], "f32", tol=c.tol)
            if mine.ok and not theirs.ok:
                c = dataclasses.replace(mine, against=(
                    f"against float64: PyTorch's float32 reference is off from it by up to {theirs.max_abs_err:.3g} "
                    f"at {theirs.mismatches} elements (and this output by {c.max_abs_err:.3g} from PyTorch's)"))
        out.append(c)
    return out
