"""The op registry: every operation the DSL knows, in one place.

Each entry holds the op's arity, typing rule and dtypes (the front end resolves calls and operators
through `OPS`), its torch semantics (`ref`, for the interpreter), and its lowering: the AscendC vector
instruction for tile operands (`api`, and `scalar_api` for a tile and a scalar: Add / Adds), the compare
mode of comparisons, its C++ form on the scalar unit (`scalar_c`: kernel-scope values and the per-row
values of chunked rows; `{0}`, `{1}`, ... are the operands, `{T}` the result's C type), or the vector
instruction that computes it on one element when the scalar unit has none (`vector_math`), and for
reductions how chunked rows fold them (`chunk`: the reduction of one chunk, the combine across chunks),
its C++ form in the host's tiling function (`host_c`: scalars computed at launch, float or int64_t, with
torch's semantics: NaN propagates through max/min/relu), and its value on Python numbers (`fold`: constant operands are folded by the parser). The DSL calls
(`CALLABLE`) and reductions (`REDUCTIONS`) are read off the entries, so a new op is one `_op(...)` line.
Ops without an instruction are expanded into others by `lowering/passes/legalize.py` (tanh, sigmoid,
erf, neg), run as scalar loops (`lowering/scalar_loops.py`: pools; products: a Mul tree) or as vector scans (`lowering/vector_scan.py`).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from .dtypes import DType
from .ir import Combine


class Rule(Enum):
    SAME = "same"  # all operands share one dtype, result has it
    COMPARE = "compare"  # operands share one dtype, result is a mask
    SELECT = "select"  # (mask, a, b): a and b share a dtype, result has it
    CAST = "cast"  # (x, dtype): result has the named dtype
    REDUCE = "reduce"  # (x,) over the last axis of a row tile: one value per row
    GATHER = "gather"  # (rows, integer index per row or per element): per row / per element, the rows' dtype
    SCAN = "scan"  # (x,) along the last axis of a row tile: same shape, running sum / product
    POOL = "pool"  # (plane, kernel, stride, padding, dilation): a window over the trailing (spatial) dims of a plane
    ARG_REDUCE = "arg_reduce"  # (x,) over the last axis of a row tile: the i64 column of each row's first max / min
    RESIZE = "resize"  # (plane,): the plane resampled to the stored tensor's spatial size (nearest / linear)
    POSITION = "position"  # (scalar shape operands): whole i32 rows holding each element's column / row index
    ROW_SCATTER = "row_scatter"  # (rows, index name, source name, V, alpha): source rows added / copied by index (dim 0)
    SCATTER = "scatter"  # (rows, integer index per element, source rows or a scalar): the rows with elements replaced / added


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
    api: str | None = None
    scalar_api: str | None = None
    cmp: str | None = None
    scalar_c: str | None = None
    vector_math: str | None = None
    chunk: tuple[str, Combine] | None = None
    call: str | None = None  # the DSL call when the op's name differs: sum(v, axis=1) is reduce_sum
    reverse: bool = False  # scans: from the end of the row
    exclusive: bool = False  # scans: the value before each element
    fold: Callable | None = None  # its value on Python numbers: the parser folds constant operands
    int_c: str | None = None  # its C++ form on int64_t operands (integer scalars: shape symbols, i32 parameters)
    host_c: str | None = None  # its C++ form at launch (lowering/emit/launch_scalars.py; `{zero}` of the result type)
    extern: bool = False  # an extern op (ascend_dsl/extern_ops.py): `api` is a model-written slot, checked first


def _torch():
    import torch

    return torch


def _erf(x):
    return _torch().erf(x)


OPS: dict[str, OpInfo] = {}


def _op(name: str, arity: int, rule: Rule, dtypes, ref, doc: str, **lowering) -> None:
    OPS[name] = OpInfo(name, arity, rule, frozenset(dtypes), ref, doc, **lowering)


def _infix(sym: str) -> str:
    return f"static_cast<{{T}}>(static_cast<float>({{0}}) {sym} static_cast<float>({{1}}))"


def _pick(cmp: str) -> str:
    """max/min on the device's scalar unit: NaN-propagating (torch.maximum): a NaN second operand fails the
    comparison and is picked, a NaN first one is picked by the x != x test (false for integers)."""
    return f"(static_cast<float>({{0}}) {cmp} static_cast<float>({{1}}) || {{0}} != {{0}} ? {{0}} : {{1}})"


def _host_pick(cmp: str, second: str = "{1}") -> str:
    """max/min on the host: NaN-propagating (torch.maximum), for floats and integers alike (x != x is false for ints)."""
    return f"[](auto a, auto b) {{{{ return a != a ? a : b != b ? b : a {cmp} b ? a : b; }}}}({{0}}, {second})"


_op("add", 2, Rule.SAME, NUMERIC, lambda a, b: a + b, "a + b", api="Add", scalar_api="Adds", scalar_c=_infix("+"), host_c="({0} + {1})",
    fold=operator.add, int_c="{0} + {1}")
_op("sub", 2, Rule.SAME, NUMERIC, lambda a, b: a - b, "a - b", api="Sub", scalar_c=_infix("-"), host_c="({0} - {1})", fold=operator.sub,
    int_c="{0} - {1}")
_op("mul", 2, Rule.SAME, NUMERIC, lambda a, b: a * b, "a * b", api="Mul", scalar_api="Muls", scalar_c=_infix("*"), host_c="({0} * {1})",
    fold=operator.mul, int_c="{0} * {1}")
_op("div", 2, Rule.SAME, FLOATS, lambda a, b: a / b, "a / b", api="Div", scalar_c=_infix("/"), host_c="({0} / {1})", fold=operator.truediv)
_op("max", 2, Rule.SAME, NUMERIC, lambda a, b: _torch().maximum(a, b), "element-wise maximum", api="Max",
    scalar_api="Maxs", scalar_c=_pick(">"), host_c=_host_pick(">"), fold=max, int_c="{0} > {1} ? {0} : {1}")
_op("min", 2, Rule.SAME, NUMERIC, lambda a, b: _torch().minimum(a, b), "element-wise minimum", api="Min",
    scalar_api="Mins", scalar_c=_pick("<"), host_c=_host_pick("<"), fold=min, int_c="{0} < {1} ? {0} : {1}")
_op("neg", 1, Rule.SAME, NUMERIC, lambda a: -a, "-a", scalar_c="static_cast<{T}>(-static_cast<float>({0}))",
    host_c="(-{0})", fold=operator.neg, int_c="-{0}")
_op("abs", 1, Rule.SAME, NUMERIC, lambda a: a.abs(), "|a|", api="Abs", vector_math="Abs", fold=abs,
    host_c="std::fabs({0})")  # integers: std::llabs (launch_scalars.py)
_op("exp", 1, Rule.SAME, FLOATS, lambda a: a.exp(), "e**a", api="Exp", vector_math="Exp", host_c="std::exp({0})", fold=math.exp)
_op("log", 1, Rule.SAME, FLOATS, lambda a: a.log(), "natural logarithm", api="Ln", vector_math="Ln", host_c="std::log({0})",
    fold=math.log)
_op("sqrt", 1, Rule.SAME, FLOATS, lambda a: a.sqrt(), "square root", api="Sqrt", vector_math="Sqrt", host_c="std::sqrt({0})",
    fold=math.sqrt)
_op("rsqrt", 1, Rule.SAME, FLOATS, lambda a: a.rsqrt(), "1 / sqrt(a)", api="Rsqrt", vector_math="Rsqrt", host_c="(1.0f / std::sqrt({0}))",
    fold=lambda a: 1 / math.sqrt(a))
_op("reciprocal", 1, Rule.SAME, FLOATS, lambda a: a.reciprocal(), "1 / a", api="Reciprocal",
    scalar_c="static_cast<{T}>(1.0f / static_cast<float>({0}))", fold=lambda a: 1 / a,
    host_c="(1.0f / {0})")
_op("relu", 1, Rule.SAME, NUMERIC, lambda a: a.relu(), "max(a, 0)", api="Relu",
    scalar_c="(static_cast<float>({0}) > static_cast<float>({zero}) ? {0} : {zero})", fold=lambda a: max(a, 0.0),
    host_c=_host_pick(">", "{zero}"))
_op("tanh", 1, Rule.SAME, FLOATS, lambda a: a.tanh(), "hyperbolic tangent (lowered via exp)", fold=math.tanh,
    host_c="std::tanh({0})")
_op("sigmoid", 1, Rule.SAME, FLOATS, lambda a: a.sigmoid(), "1 / (1 + e**-a) (lowered via exp)",
    fold=lambda a: 1 / (1 + math.exp(-a)), host_c="(1.0f / (1.0f + std::exp(-{0})))")
_op("pow", 2, Rule.SAME, FLOATS, lambda a, b: _torch().pow(a, b), "a ** b (tiles: composed by legalize)",
    vector_math="Ln, Exp", fold=math.pow, host_c="std::pow({0}, {1})")  # on the device: exp(e * ln|b|) with torch.pow's signs and limits
_op("erf", 1, Rule.SAME, FLOATS, _erf, "error function (lowered to a rational approximation, |err| < 1.5e-7)",
    fold=math.erf, host_c="std::erf({0})")
for _name, _fn, _sym in [
    ("lt", lambda a, b: a < b, "<"),
    ("le", lambda a, b: a <= b, "<="),
    ("gt", lambda a, b: a > b, ">"),
    ("ge", lambda a, b: a >= b, ">="),
    ("eq", lambda a, b: a == b, "=="),
    ("ne", lambda a, b: a != b, "!="),
]:  # the scalar form compares the operands as floats
    _op(_name, 2, Rule.COMPARE, FLOATS | {DType.I32}, _fn, f"comparison ({_name}); a mask for select",
        cmp=_name.upper(), scalar_c=f"(static_cast<float>({{0}}) {_sym} static_cast<float>({{1}}))",
        int_c=f"({{0}} {_sym} {{1}})", host_c=f"({{0}} {_sym} {{1}})")
_op("select", 3, Rule.SELECT, FLOATS - {DType.BF16}, lambda m, a, b: _torch().where(m, a, b), "mask ? a : b",
    scalar_c="({0} ? {1} : {2})", host_c="({0} ? {1} : {2})")
_op("copy", 1, Rule.SAME, DType, lambda a: a.clone(), "a copy of a tile, any dtype (allocate_buffers: a stored "
    "value Muls cannot copy, e.g. bf16 and u8)", api="DataCopy")
_op("broadcast_rows", 1, Rule.SAME, FLOATS | {DType.I32}, lambda a: a.clone(), "per-row values or a row vector as "
    "whole rows (a comparison or select operand in a row loop: ascend_dsl/parser_broadcast.py)", api="BroadcastRows")
_op("cast", 2, Rule.CAST, NUMERIC, None, "convert to another dtype (round to nearest even)", scalar_c="{0}",
    host_c="static_cast<{T}>({0})")  # float -> int truncates and saturates (launch_scalars.py)
_op("reduce_sum", 1, Rule.REDUCE, FLOATS | {DType.I32}, lambda a: a.sum(dim=1, keepdim=True, dtype=a.dtype),
    "sum over each row (axis=1)", api="ReduceSum", chunk=("reduce_sum", Combine.ADD), call="sum")
_op("reduce_mean", 1, Rule.REDUCE, FLOATS, lambda a: a.mean(dim=1, keepdim=True), "mean over each row (axis=1)",
    api="ReduceSum", chunk=("reduce_sum", Combine.ADD), call="mean")  # then times 1 / D
_op("reduce_max", 1, Rule.REDUCE, FLOATS | {DType.I32}, lambda a: a.amax(dim=1, keepdim=True),
    "maximum over each row (axis=1)", api="ReduceMax", chunk=("reduce_max", Combine.MAX), call="max")
_op("reduce_min", 1, Rule.REDUCE, FLOATS | {DType.I32}, lambda a: a.amin(dim=1, keepdim=True),
    "minimum over each row (axis=1)", api="ReduceMin", chunk=("reduce_min", Combine.MIN), call="min")

_op("gather", 2, Rule.GATHER, FLOATS | {DType.I32},
    lambda a, idx: _torch().gather(a, 1, idx.long()), "per row: the element of each row at a column index")
# the lowering's form of gather with whole rows of indices (lowering/passes/legalize.py): i32 byte offsets
_op("gather_bytes", 2, Rule.GATHER, FLOATS | {DType.I32},
    lambda a, off: _torch().gather(a, 1, off.long() // a.element_size()), "gather at byte offsets (lowering only)")

# index_select along the last dim with K indices (ascend_dsl/parser_select.py): (index row, x's name, D); x is
# read whole from GM, so the interpreter evaluates it by hand (lowering/emit/col_select.py).
_op("index_select_cols", 3, Rule.GATHER, FLOATS - {DType.BF16} | {DType.I32}, None,
    "torch.index_select(x, -1, idx) with any number of indices: row b holds x[b, idx[k]]", call="index_select")
_op("gather_middle", 4, Rule.GATHER, FLOATS - {DType.BF16} | {DType.I32}, None,
    "torch.gather(x, 1, idx) of x [A, R, C], idx [A, K, C]: y[a, k, c] = x[a, idx[a, k, c], c]", call="gather")


def scatter_ref(op: str, rows, idx, src):
    """torch.scatter / scatter_add(rows, 1, idx, src) with idx broadcast to the rows' shape (a [1, D] index row
    is index_copy / index_add along the last dim); a scalar src is scatter's value=. Sequential in column order,
    so duplicates are deterministic: scatter keeps the last column's value, scatter_add adds in column order."""
    idx = idx.long().expand(rows.shape)
    src = src.expand(rows.shape) if src.dim() else src.reshape(1, 1).expand(rows.shape)
    out = rows.clone()
    for j in range(rows.shape[1]):  # column order: the lowering's order (scalar loop per row)
        col = idx[:, j:j + 1]
        val = src[:, j:j + 1].to(out.dtype)
        out.scatter_(1, col, out.gather(1, col) + val if op == "scatter_add" else val)
    return out


_op("scatter", 3, Rule.SCATTER, FLOATS - {DType.BF16} | {DType.I32}, lambda a, i, s: scatter_ref("scatter", a, i, s),
    "per row: a copy of the rows with element idx[i, j] set to src[i, j] (torch.scatter(x, 1, idx, src))")
_op("scatter_add", 3, Rule.SCATTER, FLOATS - {DType.BF16} | {DType.I32},
    lambda a, i, s: scatter_ref("scatter_add", a, i, s),
    "per row: a copy of the rows with src[i, j] added to element idx[i, j] (torch.scatter_add(x, 1, idx, src))")


def row_scatter_ref(op: str, rows, first: int, index, src, v: int, alpha):
    """The tile's rows (global rows first..) after torch.index_add / index_copy(x, 0, index, src) or
    x.index_put((index,), src, accumulate) (index_put*: negative numbers count from the end), applied in index
    order (repeats: adds in that order, the last copy wins). Numbers must be valid (checked by the caller)."""
    out = rows.clone()
    numbers = index.long() + (v if op.startswith("index_put") else 0) * (index < 0).long()
    for i in range(numbers.shape[0]):
        k = int(numbers[i]) - first
        if 0 <= k < out.shape[0]:
            if op in ("index_add", "index_put_acc"):
                out[k] = out[k] + (src[i] * alpha).to(out.dtype) if op == "index_add" else out[k] + src[i]
            else:
                out[k] = src[i]
    return out


def element_scatter_ref(op: str, rows, first: int, index, src):
    """The tile's rows (global rows first..) after torch.scatter / scatter_add(x, 0, index, src) with index and src
    [N, D] (element (i, j) of src into row index[i, j], column j), applied in source-row order i (repeats: adds
    in that order, the last copy wins). Numbers must be in [0, V) (checked by the caller)."""
    out = rows.clone()
    cols = _torch().arange(out.shape[1])
    for i in range(index.shape[0]):
        k = index[i].long() - first
        hit = (k >= 0) & (k < out.shape[0])
        at, val = (k[hit], cols[hit]), src[i][hit].to(out.dtype)
        out[at] = out[at] + val if op == "scatter_add_dim0" else val
    return out


for _name, _doc in (("index_add", "torch.index_add(x, 0, index, src, alpha): source rows added into the rows index names"),
                    ("index_copy", "torch.index_copy(x, 0, index, src): source rows copied into the rows index names"),
                    ("index_put", "x.index_put((index,), src): rows copied in; negative index numbers count from the end"),
                    ("index_put_acc", "x.index_put((index,), src, accumulate=True): rows added in")):
    _op(_name, 5, Rule.ROW_SCATTER, FLOATS - {DType.BF16} | {DType.I32}, None, _doc,
        call="index_put" if _name.startswith("index_put") else None)
#: Elements scattered along dim 0 (index and src [N, D], ascend_dsl/parser_scatter.py `element_scatter`): the same
#: operands as the row scatters (alpha always 1); the DSL calls are scatter / scatter_add with named tensors.
_op("scatter_dim0", 5, Rule.ROW_SCATTER, FLOATS - {DType.BF16} | {DType.I32}, None,
    "torch.scatter(x, 0, index, src): src[i, j] written to row index[i, j], column j", call="scatter")
_op("scatter_add_dim0", 5, Rule.ROW_SCATTER, FLOATS - {DType.BF16} | {DType.I32}, None,
    "torch.scatter_add(x, 0, index, src): src[i, j] added to row index[i, j], column j", call="scatter_add")
_op("argmax", 1, Rule.ARG_REDUCE, FLOATS - {DType.BF16}, lambda a: a.argmax(dim=1, keepdim=True),
    "per row (axis=1): the column of the first maximum, i64", api="ReduceMax")
_op("argmin", 1, Rule.ARG_REDUCE, FLOATS - {DType.BF16}, lambda a: a.argmin(dim=1, keepdim=True),
    "per row (axis=1): the column of the first minimum, i64", api="ReduceMin")
#: Positions in a row loop (ascend_dsl/intrinsics.py `_position`): whole rows of i32. col_index(D): element j of
#: each row holds j; row_index(P, D): every element of global row g holds g % P (P: the loop's last row symbol,
#: so a [B, N, M] tensor's rows hold their index along N). The interpreter builds them from the tile's rows.
_op("col_index", 1, Rule.POSITION, {DType.I32}, None, "the column index of each element of whole rows (i32)")
_op("row_index", 2, Rule.POSITION, {DType.I32}, None, "the row index (along the rows' last dim) of each element (i32)")
# the lowering's fusion of col_index() - row_index() (lowering/passes/legalize.py): one CreateVecIndex per row
_op("col_minus_row", 2, Rule.POSITION, {DType.I32}, None, "col_index() - row_index() (lowering only)")
_op("reduce_prod", 1, Rule.REDUCE, FLOATS, lambda a: a.float().prod(dim=1, keepdim=True),
    "product over each row (axis=1); f16 multiplies in f32", chunk=("reduce_prod", Combine.MUL), call="prod")


# ----------------------------------------------------------------------------- scans (cumsum / cumprod)
#: `cumsum(v, axis=1, reverse=True, exclusive=True)`: one op per (kind, reverse, exclusive), named
#: scan_<kind>[_rev][_excl], so the IR needs no attributes. f16 accumulates in f32.
SCANS = {"cumsum": "sum", "cumprod": "prod"}


def scan_op(call: str, reverse: bool = False, exclusive: bool = False) -> str:
    return f"scan_{SCANS[call]}" + ("_rev" if reverse else "") + ("_excl" if exclusive else "")


def _scan(a, kind: str, reverse: bool, exclusive: bool, running):
    """`running(x, kind)` (the inclusive running sum / product along dim 1) framed as the scan asks: from the end
    of the row when `reverse`, shifted by one element when `exclusive`. f16 rows accumulate in f32, as the lowering
    does."""
    torch = _torch()
    x = a.float()
    if reverse:
        x = x.flip(1)
    y = running(x, kind)
    if exclusive:
        first = torch.zeros_like(y[:, :1]) if kind == "sum" else torch.ones_like(y[:, :1])
        y = torch.cat([first, y[:, :-1]], dim=1)
    return y.flip(1) if reverse else y


def _running_torch(x, kind: str):
    return x.cumsum(1) if kind == "sum" else x.cumprod(1)


def _running_f32_loop(x, kind: str):
    """One element after another in f32, each step rounded (numpy's cumsum / cumprod of f32 is that loop)."""
    import numpy as np

    run = np.cumsum if kind == "sum" else np.cumprod
    return _torch().from_numpy(run(x.cpu().numpy(), axis=1, dtype=np.float32))


def _scan_ref(kind: str, reverse: bool, exclusive: bool):
    return lambda a: _scan(a, kind, reverse, exclusive, _running_torch)


def scan_in_order(info: OpInfo, a):
    """The scan `info` of `a` added (multiplied) one element after another in f32, each step rounded: the order a
    plain loop takes. torch's CPU cumsum / cumprod of f32 accumulate in double, nearly exact; over a long row a
    device's f32 scan is off by many units of the running value (seed 3032's reverse cumsum of 21,719 elements:
    0.033 at a running sum of 7,000), and this run shows the fuzz oracle how far an f32 loop goes."""
    return _scan(a, SCANS[info.call], info.reverse, info.exclusive, _running_f32_loop)


for _call, _kind in SCANS.items():
    for _rev in (False, True):
        for _excl in (False, True):
            _op(scan_op(_call, _rev, _excl), 1, Rule.SCAN, FLOATS, _scan_ref(_kind, _rev, _excl),
                f"{'reverse ' if _rev else ''}{'exclusive ' if _excl else ''}running {_kind} along each row (axis=1)",
                call=_call, reverse=_rev, exclusive=_excl)


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


# ----------------------------------------------------------------------------- resize (interpolation)
#: op -> (PyTorch mode of a rank-1, rank-2, rank-3 plane, align_corners). The call is the op's name but
#: for `resize_linear(v, align_corners=True)`, op resize_linear_ac. The output size is the stored tensor's
#: (PyTorch's `size=`), so the ref takes it as an argument.
RESIZES = {"resize_nearest": ("nearest", "nearest", "nearest", None),
           "resize_nearest_exact": ("nearest-exact", "nearest-exact", "nearest-exact", None),
           "resize_linear": ("linear", "bilinear", "trilinear", False),
           "resize_linear_ac": ("linear", "bilinear", "trilinear", True),
           "resize_cubic": (None, "bicubic", None, False), "resize_cubic_ac": (None, "bicubic", None, True),
           # antialias=True (2-D planes only, as PyTorch): lowering/emit/antialias.py
           "resize_linear_aa": (None, "bilinear", None, False), "resize_linear_aa_ac": (None, "bilinear", None, True),
           "resize_cubic_aa": (None, "bicubic", None, False), "resize_cubic_aa_ac": (None, "bicubic", None, True)}
RESIZE_CALLS = ("resize_nearest", "resize_nearest_exact", "resize_linear", "resize_cubic")
#: PyTorch functions a user may reach for that are not lowered yet: (why, a working alternative)
NOT_LOWERED: dict[str, tuple[str, str]] = {}
#: the calls that take align_corners=, and their op when it is True
RESIZE_ALIGNED = {"resize_linear": "resize_linear_ac", "resize_cubic": "resize_cubic_ac"}


def resize_ref(op: str, x, size: tuple[int, ...]):
    """Resample a plane tile (planes x spatial dims) to `size` as F.interpolate(size=...) does, in x's dtype."""
    torch = _torch()
    rank = x.dim() - 1
    mode, align = RESIZES[op][rank - 1], RESIZES[op][3]
    kw = {} if align is None else {"align_corners": align}
    if "_aa" in op:
        kw["antialias"] = True
    return torch.nn.functional.interpolate(x.unsqueeze(1), size=tuple(size), mode=mode, **kw).squeeze(1)


_op("resize_nearest", 1, Rule.RESIZE, FLOATS, lambda x, size: resize_ref("resize_nearest", x, size),
    "nearest-neighbour resample of each plane to the stored size (source index floor(o * in / out))")
_op("resize_nearest_exact", 1, Rule.RESIZE, FLOATS, lambda x, size: resize_ref("resize_nearest_exact", x, size),
    "nearest-exact resample (source index floor((o + 0.5) * in / out))", call="resize_nearest_exact")
_op("resize_linear", 1, Rule.RESIZE, FLOATS - {DType.BF16}, lambda x, size: resize_ref("resize_linear", x, size),
    "linear / bilinear / trilinear resample, align_corners=False (half-pixel centres)")
_op("resize_linear_ac", 1, Rule.RESIZE, FLOATS - {DType.BF16}, lambda x, size: resize_ref("resize_linear_ac", x, size),
    "linear / bilinear / trilinear resample, align_corners=True", call="resize_linear")
_op("resize_cubic", 1, Rule.RESIZE, FLOATS - {DType.BF16}, lambda x, size: resize_ref("resize_cubic", x, size),
    "bicubic resample (A = -0.75, 4 x 4 taps, clamped), align_corners=False", call="resize_cubic")
for _aa in ("resize_linear_aa", "resize_linear_aa_ac", "resize_cubic_aa", "resize_cubic_aa_ac"):
    _op(_aa, 1, Rule.RESIZE, {DType.F32}, lambda x, size, _aa=_aa: resize_ref(_aa, x, size),
        f"antialiased {RESIZES[_aa][1]} resample (F.interpolate(..., antialias=True)), "
        f"align_corners={RESIZES[_aa][3]}: a triangle / Keys (A = -0.5) filter widened by the scale when downsampling",
        call=_aa.split("_aa")[0])
_op("resize_cubic_ac", 1, Rule.RESIZE, FLOATS - {DType.BF16}, lambda x, size: resize_ref("resize_cubic_ac", x, size),
    "bicubic resample, align_corners=True", call="resize_cubic")

# ----------------------------------------------------------------------------- grid_sample
#: grid_sample(plane, grid, mode=, padding_mode=, align_corners=) -> op grid_sample_<mode>_<padding>[_ac]; operands
#: (plane, the grid tensor's name as a string Const). ascend_dsl/parser_grid.py types the call.
GRID_MODES = ("bilinear", "nearest")
GRID_PADDINGS = ("zeros", "border")


def grid_op(mode: str, padding: str, align_corners: bool) -> str:
    return f"grid_sample_{mode}_{padding}{'_ac' if align_corners else ''}"


def grid_params(op: str) -> tuple[str, str, bool]:
    """(mode, padding_mode, align_corners) of a grid_sample op."""
    parts = op.removeprefix("grid_sample_").split("_")
    return parts[0], parts[1], parts[-1] == "ac"


def grid_sample_ref(op: str, planes, grid):
    """Planes [P, H, W] sampled at grid [P, OH, OW, 2] (x then y in [-1, 1]) as F.grid_sample does, in planes' dtype."""
    mode, padding, align = grid_params(op)
    return _torch().nn.functional.grid_sample(planes.unsqueeze(1), grid.to(planes.dtype), mode=mode,
                                              padding_mode=padding, align_corners=align).squeeze(1)


for _mode in GRID_MODES:
    for _pad in GRID_PADDINGS:
        for _ac in (False, True):
            _g = grid_op(_mode, _pad, _ac)
            _op(_g, 2, Rule.RESIZE, {DType.F32}, lambda x, g, _g=_g: grid_sample_ref(_g, x, g),
                f"F.grid_sample(x, grid, mode={_mode!r}, padding_mode={_pad!r}, align_corners={_ac}): each plane "
                "sampled at its batch's grid positions", call="grid_sample")

#: `name(v, axis=1)` -> reduction op.
REDUCTIONS = {i.call: i.name for i in OPS.values() if i.rule is Rule.REDUCE}

BINARY_OPERATORS = {"+": "add", "-": "sub", "*": "mul", "/": "div"}
COMPARE_OPERATORS = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}

#: The DSL's calls of ops: every op by its call name, but those written only as operators (a + b, -a, a < b,
#: a ** b) and the lowering's own (copy).
CALLABLE = tuple(sorted({i.call or i.name for i in OPS.values()
                         if i.name not in {*BINARY_OPERATORS.values(), *COMPARE_OPERATORS.values(), "neg", "pow", "copy",
                                           "gather_bytes", "col_minus_row",
                                           "broadcast_rows"}}))

#: Constant exponents `x ** c` accepted, with the op sequence they expand to.
POW_EXPONENTS = (2, 3, 4, 0.5, -0.5, -1, 1)

