"""The reference side of differential testing: the DSL interpreter's outputs, and how far rounding alone
may move each of them.

A generated kernel is evaluated by the interpreter (`ascend_dsl.interpreter`) in its own dtypes (the
reference), in float64, twice in float64 on inputs perturbed by a few units of the kernel's coarsest rounding,
twice in float64 with every comparison nudged by as much (one up, one down; see TRANSCENDENTAL_ERROR), twice
with every float-to-integer cast nudged and twice with the results of the ops a device computes approximately
(exp, tanh, ...: interpreter.APPROXIMATE_OPS) nudged, so a cancellation after them is ill-conditioned too (by
PERTURB units relative and at least PERTURB subnormals of the op's dtype: below the normal range a unit is
much of the value), and
once with max/min reductions skipping NaN (PyTorch propagates it; a device need not), and twice more with the
approximate ops nudged and explicit casts to f16/bf16 rounded (a cast can turn a last-bit difference into a
whole unit of the narrow type, and a comparison after it can flip), and twice in the kernel's own dtypes with every
float sum moved one unit of its absolute sum (the sum of |x|, which bounds every partial sum in any order), up in one
run and down in the other, and twice more with the direction alternating between sums (`interpreter.run`'s
sum_nudge: a device adds in another order, and where the values cancel, or a later rounded operation cancels the
sum, one unit of a partial sum shows; the float64 runs cannot see it, since they round nothing); in those four
runs a scan is an f32 loop moved by the bound of any order of its adds or multiplies (a running sum by
scan_bound.depth(n) units of 2^-24 times each prefix's sum of |x|, a product by k - 1 units of its value: one
realisation of one order does not bound another; session 36, ascend_dsl/scan_bound.py).
Where the last fifteen disagree with each other
or with the reference, the element is
ill-conditioned (a comparison near its threshold, cancellation, overflow) and the emulator may differ
there by as much without being wrong. Those runs see only the source's own order of rounding; a lowering may
round a cast at another point of the work (a flash attention rounds the unnormalised exp(s - m) to bf16 and
divides by the row sum at the end, where the source rounds the probabilities), so a kernel with a cast to
f16/bf16 gets one more widened run (session 35, `cast_bound`): every value carries a first-order bound on how
far the casts before it can move it whatever the order of the work after them (u * |x| at each cast,
propagated by every op: ascend_dsl/cast_bound.py). An element mismatches when

    |got - ref| > tol * (1 + |ref|) + 2 * (max(|ref - ref64|, |ref64' - ref64| over the fifteen other runs)
                                           + cast_bound)

with `tol` the harness's per-dtype tolerance (npu_harness.compare); NaN matches NaN, equal infinities
match, an element whose float64 references are not finite is not judged, and an infinity where the slack
exceeds |ref| (the reference's sign is not determined: a denominator cancelled to within its rounding), or
where |ref| + slack reaches the dtype's largest finite value (rounding may overflow), is accepted.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from ascend_dsl import interpreter, ir
from ascend_dsl.dtypes import DType

from ..compare import TOLERANCE
from .inputs import seeded_generator

#: Inputs are perturbed by this many units of the kernel's coarsest rounding (a reduction of n values
#: rounds up to ~n units; independent perturbations move it by ~sqrt(n)).
PERTURB = 8
#: The relative error the lowering's transcendental ops may add (tanh, erf < 1e-6: lowering/passes/legalize.py;
#: docs/language.md). Comparisons and float-to-integer casts are discontinuous: the perturbed runs move the first
#: operand of every comparison and every truncated value by PERTURB roundoffs plus this, up in one run and down
#: in the other, so a comparison or truncation that close to its edge counts as ill-conditioned (random input
#: perturbations alone cross such an edge only by chance).
TRANSCENDENTAL_ERROR = 2e-6
#: Unit roundoff per dtype (f32 2^-24, f16 2^-11, bf16 2^-8), for the input perturbation.
_ROUNDOFF = {DType.F32: 2.0 ** -24, DType.F16: 2.0 ** -11, DType.BF16: 2.0 ** -8}


@dataclass
class Reference:
    kernel: ir.Kernel
    inputs: dict[str, torch.Tensor]
    scalars: dict
    sizes: dict[str, int]
    seed: int
    outputs: dict[str, torch.Tensor]  # in the kernel's dtypes
    _slack: dict[str, torch.Tensor] | None = None

    def slack(self, name: str) -> torch.Tensor:
        """float64: how far rounding alone may move each element of output `name` (inf: not judged). Costs two
        more interpreter runs, so it is computed only when an output is not within plain tolerance."""
        if self._slack is None:
            self._slack = _slack(self)
        return self._slack[name]


@dataclass(frozen=True)
class Verdict:
    name: str
    ok: bool
    bad: int
    numel: int
    worst: str  # the worst element, for reports

    def describe(self) -> str:
        return f"{self.name}: {'ok' if self.ok else 'MISMATCH'} ({self.bad}/{self.numel} elements; {self.worst})"


def roundoff(kernel: ir.Kernel) -> float:
    """The coarsest unit roundoff of the float values the kernel computes or stores."""
    dtypes = {p.dtype for p in kernel.tensors}
    for s in ir.walk(kernel.body):
        value = getattr(s, "value", None)
        if isinstance(value, (ir.Op, ir.Ref, ir.Load, ir.Const)):
            dtypes |= {e.type.dtype for e in ir.walk_expr(value)}
    return max(_ROUNDOFF.get(d, 0.0) for d in dtypes | {DType.F32})


def _run(kernel: ir.Kernel, inputs: dict[str, torch.Tensor], scalars: dict, shapes: dict[str, list[int]],
         widen: bool, **nudges: float) -> dict[str, torch.Tensor]:
    tensors = {n: (t.to(torch.float64) if widen and t.dtype.is_floating_point else t.clone()) for n, t in inputs.items()}
    for p in kernel.outputs:
        dt = torch.float64 if widen and p.dtype.is_float else p.dtype.torch
        tensors[p.name] = torch.full(shapes[p.name], float("nan"), dtype=dt) if p.dtype.is_float else \
            torch.zeros(shapes[p.name], dtype=dt)
    out = interpreter.run(kernel, tensors, scalars, widen=widen, **nudges)  # (cast_bound: Bounded outputs)
    return {p.name: out[p.name] for p in kernel.outputs}


def reference(kernel: ir.Kernel, inputs: dict[str, torch.Tensor], scalars: dict, sizes: dict[str, int],
              seed: int) -> Reference:
    shapes = {p.name: [sizes[d] if isinstance(d, str) else d for d in p.shape] for p in kernel.outputs}
    return Reference(kernel, inputs, scalars, sizes, seed, _run(kernel, inputs, scalars, shapes, widen=False))


def narrow_casts(kernel: ir.Kernel) -> bool:
    """Whether the kernel casts a float value to f16 or bf16 anywhere (only then has it a cast bound)."""
    def found(node, seen: set) -> bool:
        if isinstance(node, ir.Op) and node.op == "cast" and node.type.dtype in (DType.F16, DType.BF16) \
                and node.args[0].type.dtype.is_float:
            return True
        if isinstance(node, (tuple, list)):
            return any(found(x, seen) for x in node)
        if dataclasses.is_dataclass(node) and not isinstance(node, type) and id(node) not in seen:
            seen.add(id(node))
            return any(found(getattr(node, f.name), seen) for f in dataclasses.fields(node))
        return False
    return found(kernel.body, set())


def cast_bound(kernel: ir.Kernel, inputs: dict[str, torch.Tensor], scalars: dict, shapes: dict[str, list[int]]
               ) -> dict[str, torch.Tensor]:
    """float64 per output: the first-order bound on how far the kernel's casts to f16/bf16 may move each element,
    in any order of the work after them (interpreter.run's cast_bound; ascend_dsl/cast_bound.py). Zero, without a
    run, for a kernel with no such cast."""
    if not narrow_casts(kernel):
        return {p.name: torch.zeros(shapes[p.name], dtype=torch.float64) for p in kernel.outputs}
    out = _run(kernel, inputs, scalars, shapes, widen=True, cast_bound=True)
    return {p.name: (out[p.name].bound.clone() if p.dtype.is_float else torch.zeros(shapes[p.name], dtype=torch.float64))
            for p in kernel.outputs}


def _slack(ref: Reference) -> dict[str, torch.Tensor]:
    kernel, inputs, scalars = ref.kernel, ref.inputs, ref.scalars
    shapes = {p.name: [ref.sizes[d] if isinstance(d, str) else d for d in p.shape] for p in kernel.outputs}
    wide = _run(kernel, inputs, scalars, shapes, widen=True)
    u = PERTURB * roundoff(kernel)
    runs = []
    for k in range(2):  # two independent perturbations: a threshold near a value is often crossed by one of them
        perturbed = {}
        for name, t in inputs.items():
            if t.dtype.is_floating_point:
                g = seeded_generator(ref.seed, f"perturb{k}:" + name)
                noise = torch.rand(t.shape, generator=g, dtype=torch.float64) * 2 - 1
                perturbed[name] = t.to(torch.float64) * (1 + u * noise)
            else:
                perturbed[name] = t
        runs.append(_run(kernel, perturbed, scalars, shapes, widen=True))
    for what in ("compare_nudge", "cast_nudge", "math_nudge"):  # and always by one of these (separately: one could
        # undo another)
        for sign in (1, -1):
            floor = {"math_floor": PERTURB} if what == "math_nudge" else {}
            runs.append(_run(kernel, inputs, scalars, shapes, widen=True, **{what: sign * (u + TRANSCENDENTAL_ERROR)},
                             **floor))
    runs.append(_run(kernel, inputs, scalars, shapes, widen=True, nan_skip=True))  # NaN in max/min: not specified
    for sign in (1, -1):  # the approximate ops nudged again, with explicit casts to f16/bf16 rounded
        runs.append(_run(kernel, inputs, scalars, shapes, widen=True, round_casts=True,
                         math_nudge=sign * (u + TRANSCENDENTAL_ERROR), math_floor=PERTURB))
    for sign in (1, -1):  # in the kernel's dtypes, every float sum one unit away (all one way, or alternating)
        for alternate in (False, True):
            runs.append(_run(kernel, inputs, scalars, shapes, widen=False, sum_nudge=sign, sum_alternate=alternate))
    bound = cast_bound(kernel, inputs, scalars, shapes)
    slack = {}
    for p in kernel.outputs:
        r, w = (x[p.name].to(torch.float64) for x in (ref.outputs, wide))
        s = (r - w).abs()
        finite = torch.isfinite(w)
        for run in runs:
            wp = run[p.name].to(torch.float64)
            s = torch.maximum(s, (wp - w).abs())
            finite &= torch.isfinite(wp)
        s = torch.where(finite, 2 * (s + bound[p.name].reshape(s.shape)), torch.full_like(s, float("inf")))
        slack[p.name] = torch.where(torch.isnan(s), torch.full_like(s, float("inf")), s)
    return slack


def judge(name: str, got: torch.Tensor, ref: Reference, dtype: str) -> Verdict:
    """The emulator's output `name` against the reference: plain tolerance first, rounding slack if needed."""
    verdict = _judge(name, got, ref.outputs[name], None, dtype)
    return verdict if verdict.ok else _judge(name, got, ref.outputs[name], ref.slack(name), dtype)


_TORCH_FLOAT = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}


def _judge(name: str, got: torch.Tensor, ref: torch.Tensor, slack: torch.Tensor | None, dtype: str) -> Verdict:
    g = got.to(torch.float64).reshape(-1)
    r = ref.to(torch.float64).reshape(-1)
    s = slack.reshape(-1) if slack is not None else torch.zeros_like(r)
    tol = TOLERANCE[dtype]
    if g.numel() != r.numel():
        return Verdict(name, False, r.numel(), r.numel(), f"{g.numel()} elements, expected {r.numel()}")
    same = (g == r) | (torch.isnan(g) & torch.isnan(r))
    err = (g - r).abs()
    close = err <= tol * (1 + r.abs()) + s
    # Slack beyond |ref|: the reference's own sign is not determined (a denominator that cancels to within its
    # rounding), and a device may meet the exact zero: an infinity there is not wrong.
    undetermined = torch.isinf(g) & (s >= r.abs())
    # Within its slack of the dtype's largest finite value, rounding may overflow to an infinity of its sign.
    top = torch.finfo(_TORCH_FLOAT[dtype]).max if dtype in _TORCH_FLOAT else float("inf")
    overflow = torch.isinf(g) & (torch.sign(g) == torch.sign(r)) & (r.abs() + s >= top)
    ok = same | close | torch.isinf(s) | undetermined | overflow
    bad = int((~ok).sum())
    if bad == 0:
        return Verdict(name, True, 0, r.numel(), "")
    idx = int(torch.nonzero(~ok)[0])
    worst = f"first at flat index {idx}: got {g[idx].item():.7g}, reference {r[idx].item():.7g}, slack {s[idx].item():.3g}"
    return Verdict(name, False, bad, r.numel(), worst)
