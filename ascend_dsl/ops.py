"""The op registry: every operation the DSL knows, its arity, typing rule and torch semantics.

The front end resolves calls and operators through `OPS`; the interpreter evaluates with `OpInfo.ref`;
the lowering maps ops to AscendC instructions (see `lowering/passes/legalize.py` and
`lowering/passes/to_vector_ops.py`). Adding an op means adding one entry here plus its lowering.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from .dtypes import DType


class Rule(Enum):
    SAME = "same"  # all operands share one dtype, result has it
    COMPARE = "compare"  # operands share one dtype, result is a mask
    SELECT = "select"  # (mask, a, b): a and b share a dtype, result has it
    CAST = "cast"  # (x, dtype): result has the named dtype
    REDUCE = "reduce"  # (x,) over the last axis of a row tile: one value per row
    GATHER = "gather"  # (rows, per-row integer index): one value per row, the rows' dtype
    SCAN = "scan"  # (x,) along the last axis of a row tile: same shape, running sum / product
    POOL = "pool"  # (plane, kernel, stride, padding, dilation): a window over the trailing (spatial) dims of a plane


FLOATS = frozenset({DType.F16, DType.BF16, DType.F32})
NUMERIC = frozenset({DType.F16, DType.BF16, DType.F32, DType.I32, DType.I16})


@dataclass(frozen=True)
class OpInfo:
    name: str
    arity: int
    rule: Rule
    dtypes: frozenset[DType]
    ref: Callable
    doc: str


def _torch():
    import torch

    return torch


def _erf(x):
    return _torch().erf(x)


OPS: dict[str, OpInfo] = {}


def _op(name: str, arity: int, rule: Rule, dtypes, ref, doc: str) -> None:
    OPS[name] = OpInfo(name, arity, rule, frozenset(dtypes), ref, doc)


_op("add", 2, Rule.SAME, NUMERIC, lambda a, b: a + b, "a + b")
_op("sub", 2, Rule.SAME, NUMERIC, lambda a, b: a - b, "a - b")
_op("mul", 2, Rule.SAME, NUMERIC, lambda a, b: a * b, "a * b")
_op("div", 2, Rule.SAME, FLOATS, lambda a, b: a / b, "a / b")
_op("max", 2, Rule.SAME, NUMERIC, lambda a, b: _torch().maximum(a, b), "element-wise maximum")
_op("min", 2, Rule.SAME, NUMERIC, lambda a, b: _torch().minimum(a, b), "element-wise minimum")
_op("neg", 1, Rule.SAME, NUMERIC, lambda a: -a, "-a")
_op("abs", 1, Rule.SAME, NUMERIC, lambda a: a.abs(), "|a|")
_op("exp", 1, Rule.SAME, FLOATS, lambda a: a.exp(), "e**a")
_op("log", 1, Rule.SAME, FLOATS, lambda a: a.log(), "natural logarithm")
_op("sqrt", 1, Rule.SAME, FLOATS, lambda a: a.sqrt(), "square root")
_op("rsqrt", 1, Rule.SAME, FLOATS, lambda a: a.rsqrt(), "1 / sqrt(a)")
_op("reciprocal", 1, Rule.SAME, FLOATS, lambda a: a.reciprocal(), "1 / a")
_op("relu", 1, Rule.SAME, NUMERIC, lambda a: a.relu(), "max(a, 0)")
_op("tanh", 1, Rule.SAME, FLOATS, lambda a: a.tanh(), "hyperbolic tangent (lowered via exp)")
_op("sigmoid", 1, Rule.SAME, FLOATS, lambda a: a.sigmoid(), "1 / (1 + e**-a) (lowered via exp)")
_op("pow", 2, Rule.SAME, FLOATS, lambda a, b: _torch().pow(a, b), "a ** b of scalars (any exponent)")
_op("erf", 1, Rule.SAME, FLOATS, _erf, "error function (lowered to a rational approximation, |err| < 1.5e-7)")
for _name, _fn in [
    ("lt", lambda a, b: a < b),
    ("le", lambda a, b: a <= b),
    ("gt", lambda a, b: a > b),
    ("ge", lambda a, b: a >= b),
    ("eq", lambda a, b: a == b),
    ("ne", lambda a, b: a != b),
]:
    _op(_name, 2, Rule.COMPARE, FLOATS | {DType.I32}, _fn, f"comparison ({_name}); a mask for select")
_op("select", 3, Rule.SELECT, FLOATS - {DType.BF16}, lambda m, a, b: _torch().where(m, a, b), "mask ? a : b")
_op("cast", 2, Rule.CAST, NUMERIC, None, "convert to another dtype (round to nearest even)")
_op("reduce_sum", 1, Rule.REDUCE, FLOATS | {DType.I32}, lambda a: a.sum(dim=1, keepdim=True, dtype=a.dtype),
    "sum over each row (axis=1)")
_op("reduce_mean", 1, Rule.REDUCE, FLOATS, lambda a: a.mean(dim=1, keepdim=True), "mean over each row (axis=1)")
_op("reduce_max", 1, Rule.REDUCE, FLOATS | {DType.I32}, lambda a: a.amax(dim=1, keepdim=True),
    "maximum over each row (axis=1)")
_op("reduce_min", 1, Rule.REDUCE, FLOATS | {DType.I32}, lambda a: a.amin(dim=1, keepdim=True),
    "minimum over each row (axis=1)")

_op("gather", 2, Rule.GATHER, FLOATS | {DType.I32},
    lambda a, idx: _torch().gather(a, 1, idx.long()), "per row: the element of each row at a column index")
_op("reduce_prod", 1, Rule.REDUCE, FLOATS, lambda a: a.float().prod(dim=1, keepdim=True),
    "product over each row (axis=1); f16 multiplies in f32")


# ----------------------------------------------------------------------------- scans (cumsum / cumprod)
#: `cumsum(v, axis=1, reverse=True, exclusive=True)`: one op per (kind, reverse, exclusive), named
#: scan_<kind>[_rev][_excl], so the IR needs no attributes. f16 accumulates in f32.
SCANS = {"cumsum": "sum", "cumprod": "prod"}


def scan_op(call: str, reverse: bool = False, exclusive: bool = False) -> str:
    return f"scan_{SCANS[call]}" + ("_rev" if reverse else "") + ("_excl" if exclusive else "")


def scan_parts(op: str) -> tuple[str, bool, bool]:
    """scan op name -> (DSL call, reverse, exclusive)."""
    parts = op.split("_")
    call = next(c for c, k in SCANS.items() if k == parts[1])
    return call, "rev" in parts[2:], "excl" in parts[2:]


def _scan_ref(kind: str, reverse: bool, exclusive: bool):
    def ref(a):
        torch = _torch()
        x = a.float()  # f16 rows accumulate in f32, as the lowering does
        if reverse:
            x = x.flip(1)
        y = x.cumsum(1) if kind == "sum" else x.cumprod(1)
        if exclusive:
            first = torch.zeros_like(y[:, :1]) if kind == "sum" else torch.ones_like(y[:, :1])
            y = torch.cat([first, y[:, :-1]], dim=1)
        return y.flip(1) if reverse else y

    return ref


for _call, _kind in SCANS.items():
    for _rev in (False, True):
        for _excl in (False, True):
            _op(scan_op(_call, _rev, _excl), 1, Rule.SCAN, FLOATS, _scan_ref(_kind, _rev, _excl),
                f"{'reverse ' if _rev else ''}{'exclusive ' if _excl else ''}running {_kind} along each row (axis=1)")


# ----------------------------------------------------------------------------- pooling windows
POOLS = {"max_pool": "max_pool", "avg_pool": "avg_pool"}


def pool_ref(op: str, x, kernel: int, stride: int, padding: int, dilation: int = 1):
    """Pool a plane tile (planes x spatial dims) with PyTorch semantics (avg: count_include_pad=True, no dilation)."""
    torch = _torch()
    f = torch.nn.functional
    rank = x.dim() - 1
    fn = getattr(f, f"{op}{rank}d")
    x = (x if x.dtype == torch.float64 else x.float()).unsqueeze(1)
    if op == "avg_pool":  # count_include_pad: the zeros of the padding count; padded explicitly because
        # avg_pool3d on CPU rejects an input dim smaller than the kernel even when the padding covers it
        return fn(f.pad(x, [padding] * (2 * rank)), kernel, stride, 0).squeeze(1)
    return fn(x, kernel, stride, padding, dilation=dilation).squeeze(1)


_op("max_pool", 5, Rule.POOL, FLOATS, lambda x, k, s, p, d: pool_ref("max_pool", x, k, s, p, d),
    "max over each window of the plane's spatial dims (padding counts as -inf; window taps dilation apart)")
_op("avg_pool", 5, Rule.POOL, FLOATS, lambda x, k, s, p, d: pool_ref("avg_pool", x, k, s, p),
    "mean over each window (count_include_pad: divides by kernel**rank; dilation is always 1)")

#: `name(v, axis=1)` -> reduction op.
REDUCTIONS = {"sum": "reduce_sum", "mean": "reduce_mean", "max": "reduce_max", "min": "reduce_min",
              "prod": "reduce_prod"}

#: DSL call names -> op names (operators map through the parser's tables).
CALLABLE = {n: n for n in ("abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "relu", "tanh", "sigmoid", "erf",
                           "max", "min", "select", "cast", "sum", "mean", "gather",
                           "prod", "cumsum", "cumprod", "max_pool", "avg_pool")}

BINARY_OPERATORS = {"+": "add", "-": "sub", "*": "mul", "/": "div"}
COMPARE_OPERATORS = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}

#: Constant exponents `x ** c` accepted, with the op sequence they expand to.
POW_EXPONENTS = (2, 3, 4, 0.5, -0.5, -1, 1)


def scalar_ref(op: str, *args: float) -> float:
    """Evaluate an op on Python scalars (constant folding)."""
    table = {
        "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
        "div": lambda a, b: a / b, "max": max, "min": min, "neg": lambda a: -a, "abs": abs,
        "exp": math.exp, "log": math.log, "sqrt": math.sqrt, "rsqrt": lambda a: 1 / math.sqrt(a),
        "reciprocal": lambda a: 1 / a, "relu": lambda a: max(a, 0.0), "tanh": math.tanh,
        "sigmoid": lambda a: 1 / (1 + math.exp(-a)), "erf": math.erf, "pow": math.pow,
    }
    return table[op](*args)
