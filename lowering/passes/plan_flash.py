"""Flash attention: recognise the two chained SDPA stages and fuse them into a FLASH kernel.

Goals: a CHAIN kernel (plan_stages.py) of exactly the attention text a user writes,

    p = workspace(T, ..., M, N)
    for blk in split(<batch>, M, N, cores=AIC):
        with cube:
            s = matmul(q[blk], k[blk], transpose_b=True)
        with vector:
            e = exp(X - max(X, axis=1))                 # X = s * scale, or select(mask > t, s * scale, fill)
            store(p[blk], cast(e / sum(e, axis=1), T))  # (or e = exp((s - max(s, axis=1)) * scale), no mask)
    for blk in split(<batch>, M, Dv, cores=AIC):
        with cube:
            acc = matmul(p[blk], v[blk])
        with vector:
            store(o[blk], acc)                          # (or cast(acc, T))

becomes one `ir.FlashAttention` (kind FLASH): per (batch, block of Bq query rows) the running row max,
sum and output stay in UB while K/V are walked in blocks of Bk keys (online softmax), so neither the
M x N probabilities go through GM nor must a whole key row fit UB (the chained form's limit, about 580
keys). The result is softmax(X) @ V, the chained text's value (softmax is shift-invariant, so the
`(s - max(s)) * scale` spelling is the same function). Bq and Bk are planned here as the largest
blocks the cube's L0C holds; the host shrinks them to the shapes and to UB (emit/flash.py).
Anything else stays a CHAIN kernel, unchanged (never an error: the chained form is always correct).
X may also be a band from positions: the causal mask `select(col_index() <= row_index(), s * scale, fill)`, a
sliding window `select(col_index() <= row_index(), select(col_index() > row_index() - w, s * scale, fill), fill)`,
`select(abs(col_index() - row_index()) <= w, ...)`, any comparison linear in the two positions with integer
literals and i32 scalar parameters, nested selects (one fill) intersecting their bands: the kernel then skips
every key block outside the band and masks only the blocks that straddle its edges.
Non-goals: decode against a KV cache, other epilogues between the stages, a mask tensor and positions together.
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from ..context import PassContext
from . import plan_flash_ring
from .plan_cube import COUPLED_FAMILIES

#: Largest query rows (Bq) and keys (Bk) per block: a Bq x Bk fp32 score block and a Bq x Dv output block
#: fit L0C twice over (double-buffered) at 128 x 128; the host shrinks both for short shapes and for UB.
MAX_BQ = 128
MAX_BK = 256
COMPARES = ("gt", "ge", "lt", "le", "eq", "ne")


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    if kernel.kind is not ir.KernelKind.CHAIN or not ctx.allow_flash or ctx.target.soc_family in COUPLED_FAMILIES:
        return kernel  # (a coupled chip: the chain's stages report MIX-UNSUPPORTED)
    flash = match(kernel)
    if isinstance(flash, str):  # attention-like but not the exact text: the chain's launch error says why
        ctx.flash_miss = flash
    if not isinstance(flash, ir.FlashAttention):
        return kernel
    return replace(kernel, body=(plan_flash_ring.plan(flash, kernel, ctx),), kind=ir.KernelKind.FLASH)


def match(kernel: ir.Kernel) -> ir.FlashAttention | str | None:
    """The FlashAttention of a CHAIN kernel holding exactly the two SDPA stages; else, for two stages that look
    like attention (Q K^T, then a matmul of the workspace tensor), why they are not fused; else None."""
    stages = kernel.body
    if len(stages) != 2 or len(kernel.workspaces) != 1:
        return None
    p = kernel.workspaces[0]
    s0, s1 = stages
    l0, l1 = ir.cube_loop(s0.kernel), ir.cube_loop(s1.kernel)
    if l0 is None or l1 is None or s0.writes != (p.name,) or s1.reads != (p.name,) or not l0.matmul.transpose_b:
        return None
    if any(isinstance(s, ir.ScalarAssign) for s in s0.kernel.body):
        return "a kernel-scope scalar (use a scalar parameter or a literal as the scale)"
    mm0, mm1 = l0.matmul, l1.matmul
    if mm0.transpose_a or mm0.bias is not None or mm0.base != (None, None, None):
        return "the first matmul has transpose_a, a bias or explicit base sizes"
    if mm1.a != p.name or mm1.transpose_a or mm1.transpose_b or mm1.bias is not None or mm1.base != (None, None, None):
        return f"the second matmul is not matmul({p.name}[blk], v[blk]) (no transposes, bias or base sizes)"
    if l1.batch != l0.batch or l1.m != l0.m or l1.k != l0.n:
        return "the two split loops do not share the batch and query dims"
    tensors = {t.name: t for t in kernel.tensors}
    q, k, v = tensors[mm0.a], tensors[mm0.b], tensors[mm1.b]
    if not (q.dtype == k.dtype == v.dtype == p.dtype) or q.dtype not in (DType.F16, DType.BF16):
        return f"q, k, v and {p.name} must share one dtype, f16 or bf16"
    if tuple(p.shape) != (*l0.batch, l0.m, l0.n):
        return f"{p.name} is not shaped as the scores"
    scores = _softmax_scores(l0, p, kernel)
    if scores is None:
        return ("the first stage does not store exactly cast(softmax(X), T) with X = s * scale or a masked "
                "select of it (docs/language.md, flash attention)")
    out = _output(l1)
    if out is None:
        return "the second stage stores more than its accumulator (or its cast)"
    scale, mask = scores
    o = tensors[out]
    if o.dtype not in (DType.F32, q.dtype) or tuple(o.shape) != (*l0.batch, l0.m, l1.n):
        return f"the output {o.name} is not [batch, M, Dv] in f32 or the operands' dtype"
    if mask is not None and mask.tensor is not None:
        mt = tensors[mask.tensor]
        if mt.dtype not in (DType.F32, DType.F16) or tuple(mt.shape[-2:]) != (l0.m, l0.n):
            return f"the mask {mt.name} is not an f32/f16 [..., M, N] tensor"
    return ir.FlashAttention(q.name, k.name, v.name, o.name, l0.batch, l0.m, l0.n, l0.k, l1.n, scale, mask,
                             MAX_BQ, MAX_BK, stages, l0.span)


def _resolved(loop: ir.CubeLoop) -> tuple[dict[str, ir.Expr], list[ir.Store]]:
    """The epilogue's values with every name replaced by the expression it holds."""
    env: dict[str, ir.Expr] = {}
    stores: list[ir.Store] = []

    def sub(e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Ref) and e.name in env:
            return env[e.name]
        if isinstance(e, ir.Op):
            return replace(e, args=tuple(sub(a) for a in e.args))
        return e

    for s in loop.epilogue.body:
        if isinstance(s, ir.Assign):
            env[s.name] = sub(s.value)
        elif isinstance(s, ir.Store):
            stores.append(replace(s, value=sub(s.value)))
        else:
            return env, []
    return env, stores


def _op(e: ir.Expr, name: str, n: int) -> tuple[ir.Expr, ...] | None:
    return e.args if isinstance(e, ir.Op) and e.op == name and len(e.args) == n else None


def _is_acc(e: ir.Expr, acc: str) -> bool:
    return isinstance(e, ir.Load) and e.tensor == acc and not e.index.acc


def _scale(e: ir.Expr, kernel: ir.Kernel) -> ir.Const | ir.Ref | None:
    """A scalar parameter or a numeric literal (the only scales the FLASH kernel takes)."""
    if isinstance(e, ir.Const) and isinstance(e.value, (int, float)) and not isinstance(e.value, bool):
        return e
    if isinstance(e, ir.Ref) and any(s.name == e.name for s in kernel.scalars):
        return e
    return None


def _scaled(e: ir.Expr, acc: str, kernel: ir.Kernel) -> ir.Const | ir.Ref | None:
    """`s * scale` or `scale * s`."""
    args = _op(e, "mul", 2)
    if args is None:
        return None
    for x, c in (args, args[::-1]):
        if _is_acc(x, acc) and _scale(c, kernel) is not None:
            return _scale(c, kernel)
    return None


def _softmax_scores(loop: ir.CubeLoop, p: ir.TensorParam, kernel: ir.Kernel):
    """(scale, mask) when the epilogue stores exactly cast(softmax(X), p.dtype) into p, else None."""
    _, stores = _resolved(loop)
    if len(stores) != 1 or stores[0].tensor != p.name:
        return None
    cast = _op(stores[0].value, "cast", 1)
    if cast is None or stores[0].value.type.dtype != p.dtype:
        return None
    div = _op(cast[0], "div", 2)
    if div is None or _op(div[1], "reduce_sum", 1) != (div[0],):
        return None
    ex = _op(div[0], "exp", 1)
    if ex is None:
        return None
    acc = loop.matmul.name
    shifted = _op(ex[0], "sub", 2)
    if shifted is not None and _op(shifted[1], "reduce_max", 1) == (shifted[0],):  # exp(X - max(X))
        x = shifted[0]
        if (scale := _scaled(x, acc, kernel)) is not None:
            return scale, None
        sel = _op(x, "select", 3)
        if sel is None or not isinstance(sel[2], ir.Const):
            return None
        band = _band_select(x, kernel)
        if band is not None:
            inner, lo, hi = band
            if (scale := _scaled(inner, acc, kernel)) is None:
                return None
            return scale, ir.FlashMask(None, "", 0.0, float(sel[2].value), lo, hi)
        if (scale := _scaled(sel[1], acc, kernel)) is None:
            return None
        cmp = sel[0]
        if not (isinstance(cmp, ir.Op) and cmp.op in COMPARES and len(cmp.args) == 2
                and isinstance(cmp.args[0], ir.Load) and not cmp.args[0].index.acc and cmp.args[0].tensor != acc
                and isinstance(cmp.args[1], ir.Const)):
            return None
        return scale, ir.FlashMask(cmp.args[0].tensor, cmp.op, float(cmp.args[1].value), float(sel[2].value))
    mul = _op(ex[0], "mul", 2)  # exp((s - max(s)) * scale)
    if mul is None:
        return None
    for d, c in (mul, mul[::-1]):
        inner = _op(d, "sub", 2)
        if (inner is not None and _is_acc(inner[0], acc) and _op(inner[1], "reduce_max", 1) == (inner[0],)
                and _scale(c, kernel) is not None):
            return _scale(c, kernel), None
    return None


_Linear = tuple[int, int, int, tuple[tuple[int, str], ...]]  # a * col + b * row + const + sum(sign * param)


def _linear(e: ir.Expr, kernel: ir.Kernel) -> _Linear | None:
    """`e` as a * col_index() + b * row_index() + an integer offset (literals and i32 scalar parameters)."""
    if isinstance(e, ir.Op) and e.op == "col_index":
        return 1, 0, 0, ()
    if isinstance(e, ir.Op) and e.op == "row_index":
        return 0, 1, 0, ()
    if isinstance(e, ir.Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return 0, 0, e.value, ()
    if isinstance(e, ir.Ref) and any(s.name == e.name and s.dtype is DType.I32 for s in kernel.scalars):
        return 0, 0, 0, ((1, e.name),)
    if (args := _op(e, "neg", 1)) is not None and (x := _linear(args[0], kernel)) is not None:
        return _scaled_linear(x, -1)
    for name, sign in (("add", 1), ("sub", -1)):
        if (args := _op(e, name, 2)) is not None:
            x, y = _linear(args[0], kernel), _linear(args[1], kernel)
            if x is None or y is None:
                return None
            y = _scaled_linear(y, sign)
            return x[0] + y[0], x[1] + y[1], x[2] + y[2], x[3] + y[3]
    return None


def _scaled_linear(x: _Linear, sign: int) -> _Linear:
    return sign * x[0], sign * x[1], sign * x[2], tuple((sign * s, n) for s, n in x[3])


def _offset(x: _Linear) -> ir.FlashBound:
    return ir.FlashBound(x[2], x[3])


def _key_offset(e: ir.Expr, kernel: ir.Kernel) -> _Linear | None:
    """`e` as (col - row) + offset (the sign of the positions normalised), else None."""
    x = _linear(e, kernel)
    if x is None or abs(x[0]) != 1 or x[1] != -x[0]:
        return None
    return _scaled_linear(x, x[0])


_FLIP = {"le": "ge", "lt": "gt", "ge": "le", "gt": "lt", "eq": "eq"}


def _band(cmp: ir.Expr, kernel: ir.Kernel) -> tuple[list[ir.FlashBound], list[ir.FlashBound]] | None:
    """The band of key offsets d = col - row that a position comparison keeps: `lhs <op> rhs` linear in the
    positions (e.g. `col_index() <= row_index()`, `col_index() > row_index() - w`, `col_index() - row_index() <= k`)
    or `abs(col_index() - row_index() [+ c]) <= t` (also `<`). Bounds are inclusive: (lower bounds, upper bounds)."""
    if not (isinstance(cmp, ir.Op) and cmp.op in _FLIP and len(cmp.args) == 2):
        return None
    op, (lhs, rhs) = cmp.op, cmp.args
    if _op(rhs, "abs", 1) is not None:
        op, lhs, rhs = _FLIP[op], rhs, lhs
    if (inner := _op(lhs, "abs", 1)) is not None:  # |d + c| <= t: -t - c <= d <= t - c
        x, t = _key_offset(inner[0], kernel), _linear(rhs, kernel)
        if x is None or t is None or t[0] or t[1] or op not in ("le", "lt"):
            return None
        shift = -1 if op == "lt" else 0
        hi = _offset((0, 0, t[2] - x[2] + shift, t[3] + _scaled_linear(x, -1)[3]))
        lo = _offset((0, 0, -t[2] - x[2] - shift, _scaled_linear(t, -1)[3] + _scaled_linear(x, -1)[3]))
        return [lo], [hi]
    x, y = _linear(lhs, kernel), _linear(rhs, kernel)
    if x is None or y is None:
        return None
    diff = (x[0] - y[0], x[1] - y[1], x[2] - y[2], x[3] + _scaled_linear(y, -1)[3])  # diff <op> 0
    if abs(diff[0]) != 1 or diff[1] != -diff[0]:
        return None
    if diff[0] == -1:
        diff, op = _scaled_linear(diff, -1), _FLIP[op]
    t = _scaled_linear(diff, -1)  # d <op> t
    shift = {"le": 0, "lt": -1, "ge": 0, "gt": 1, "eq": 0}[op]
    bound = _offset((0, 0, t[2] + shift, t[3]))
    lo = [bound] if op in ("ge", "gt", "eq") else []
    hi = [bound] if op in ("le", "lt", "eq") else []
    return lo, hi


def _band_select(x: ir.Expr, kernel: ir.Kernel):
    """(inner, lo, hi) for `select(c1, select(c2, inner, fill), fill)` (any depth, one fill) whose conditions are
    position comparisons (`_band`); else None."""
    lo: list[ir.FlashBound] = []
    hi: list[ir.FlashBound] = []
    fill = None
    while (sel := _op(x, "select", 3)) is not None and isinstance(sel[2], ir.Const) and fill in (None, sel[2].value):
        band = _band(sel[0], kernel)
        if band is None:
            break
        fill = sel[2].value
        lo += band[0]
        hi += band[1]
        x = sel[1]
    return (x, tuple(dict.fromkeys(lo)), tuple(dict.fromkeys(hi))) if fill is not None else None


def _output(loop: ir.CubeLoop) -> str | None:
    """The output tensor when the second stage stores its accumulator (or its cast) unchanged."""
    _, stores = _resolved(loop)
    if len(stores) != 1:
        return None
    value = stores[0].value
    if (c := _op(value, "cast", 1)) is not None:
        value = c[0]
    return stores[0].tensor if _is_acc(value, loop.matmul.name) else None
