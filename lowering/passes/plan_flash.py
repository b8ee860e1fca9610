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
X may also be the causal mask from positions, `select(col_index() <= row_index(), s * scale, fill)`: the
kernel then skips every key block above the diagonal and masks only the blocks that straddle it.
Non-goals: other position masks (sliding window), decode against a KV cache, other epilogues between
the stages.
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from ..context import PassContext
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
    return replace(kernel, body=(flash,), kind=ir.KernelKind.FLASH)


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
        if sel is None or not isinstance(sel[2], ir.Const) or (scale := _scaled(sel[1], acc, kernel)) is None:
            return None
        cmp = sel[0]
        if _causal(cmp):
            return scale, ir.FlashMask(None, "le", 0.0, float(sel[2].value))
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


def _causal(cmp: ir.Expr) -> bool:
    """`col_index() <= row_index()` or `row_index() >= col_index()`: key j kept for query i when j <= i."""
    if not (isinstance(cmp, ir.Op) and len(cmp.args) == 2 and all(isinstance(a, ir.Op) for a in cmp.args)):
        return False
    ops = tuple(a.op for a in cmp.args)
    return (cmp.op, ops) in (("le", ("col_index", "row_index")), ("ge", ("row_index", "col_index")))


def _output(loop: ir.CubeLoop) -> str | None:
    """The output tensor when the second stage stores its accumulator (or its cast) unchanged."""
    _, stores = _resolved(loop)
    if len(stores) != 1:
        return None
    value = stores[0].value
    if (c := _op(value, "cast", 1)) is not None:
        value = c[0]
    return stores[0].tensor if _is_acc(value, loop.matmul.name) else None
