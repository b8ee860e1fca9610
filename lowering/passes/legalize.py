"""Rewrite ops the vector unit lacks into ones it has.

Goals: tanh, sigmoid, erf, neg become exp/div/mul/select sequences over AscendC primitives
(ascendc.md 4.2 lists the primitives: Add..Min, Adds/Muls/Maxs/Mins, Exp, Ln, Abs, Sqrt, Rsqrt,
Reciprocal, Relu, Compare, Select, Cast). Non-goals: choosing tensor vs tensor-scalar
instructions (select_instructions.py).
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from ..context import PassContext
from ..rewrite import map_tile_bodies, rewrite_expr
from .softmax_division import exp_sum_division

# Abramowitz & Stegun 7.1.26: erf(x) = 1 - (a1 t + ... + a5 t^5) e^{-x^2}, t = 1 / (1 + p x), x >= 0;
# |error| <= 1.5e-7 (Handbook of Mathematical Functions, 1964, p. 299).
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
# Near 0 that form keeps its absolute error but loses the relative one (1 - q cancels: erf(1e-7) would come
# out as 0 or 1.2e-7), so |x| < _ERF_SERIES_BELOW uses the Maclaurin series erf(x) = 2/sqrt(pi) *
# sum_k (-1)^k x^(2k+1) / (k! (2k+1)) to k = 4 (truncation < 1e-7 relative there). The two together: relative
# error < 7.3e-7 over all f32 (measured against float64 erf on 2e5 points of [1e-12, 5]).
_ERF_SERIES_BELOW = 0.4
_ERF_SERIES = (1.1283791670955126, -0.37612638903183754, 0.11283791670955126, -0.026866170645131252,
               0.005223977625442188)
# tanh of f32 (session 35): (p - m) / (p + m) with p = exp(c), m = exp(-c), c = x clamped to +-10: 16 vector
# instructions where the form below took 24. Exactly odd: tanh(-x) swaps p and m, and p - m, p + m round
# symmetrically, so sums over symmetric data cancel as PyTorch's do (a one-Exp (e - 1) / (e + 1), 14 instructions,
# rounds x > 0 and x < 0 differently: in f16 it brought back the 8% bias of fuzz case mismatch-f16-tanh-bias).
# p - m is exact for |x| <= 0.34 (Sterbenz), so the form's relative error is the Exps' roundings over p - m plus two
# roundings: below |x| = 0.12 that passes 4e-7 and the Maclaurin series x (1 - x^2/3 + 2x^4/15) takes over
# (truncation 17x^6/315 < 1.6e-7 relative there). The clamp keeps p, m finite (inf / inf would be NaN): tanh(10) =
# 1 - 4e-9 already rounds to 1, and p +- m round to p there, so the quotient is exactly 1. Measured against float64
# tanh: relative error < 4.1e-7 (tests/test_tanh_expansion.py), within the documented 1e-6.
# f16 / bf16 keep sign(x) (1 - 2 / (exp(2|x|) + 1)) (in f16 arithmetic the two-Exp form rounds p - m and p + m to
# 11 bits each: tanh(1) came out a unit high, and the sum of that fuzz case moved past its slack) with the series
# below 0.3, where three terms suffice for f16 (truncation < 4e-5 relative; five before session 35).
_TANH_SERIES = (1.0, -1.0 / 3.0, 2.0 / 15.0)
_TANH_SERIES_BELOW, _TANH_SERIES_BELOW_16 = 0.12, 0.3
_TANH_CLAMP = 10.0


def _c(v: float, like: ir.Expr) -> ir.Const:
    v = float(f"{v:.15g}")  # folded constants: 0.7071067811865476 ** 2 prints as 0.5, not 0.5000000000000001
    return ir.Const(v, ir.scalar_of(like.type.dtype), like.span)


def _op(op: str, like: ir.Expr, *args: ir.Expr) -> ir.Op:
    # a mask keeps the kind and layout of its operand (whole rows in row and cube epilogues)
    ty = like.type if op not in ("lt", "gt") else ir.ValType(like.type.kind, ir.DType.BOOL, like.type.layout)
    return ir.Op(op, args, ty, like.span)


def _widened(x: ir.Expr) -> ir.Expr:
    """cast(x, f32) of an f16 value, keeping its kind and layout (a constant becomes an f32 constant)."""
    if isinstance(x, ir.Const):
        return ir.Const(x.value, ir.scalar_of(DType.F32), x.span)
    return ir.Op("cast", (x,), ir.ValType(x.type.kind, DType.F32, x.type.layout), x.span)


def _legalize(e: ir.Expr, env: dict[str, ir.Expr] | None = None) -> ir.Expr | None:
    """`env`: the tile body's names and the values assigned to them before the statement (softmax_division.py)."""
    if not isinstance(e, ir.Op) or e.type.kind is not ir.Kind.TILE:
        return None
    (x, *_) = e.args if e.args else (None,)
    match e.op:
        case "cast" if x.type.dtype is e.type.dtype:
            # cast(x, T) of an x that is already T is x: the vector Cast has no same-dtype form except
            # f32 -> f32, which rounds to an integer (CANN "Cast" tables, docs/design.md)
            return x
        case "reduce_sum" | "reduce_mean" if x.type.dtype is DType.F16:
            # Sums of f16 in f32, as PyTorch accumulates them: ReduceSum on half adds in half (a binary tree whose
            # partial sums round and saturate at 65504; ascendc_next.md, WholeReduceSum), which loses the result
            # of long rows that cancel.
            red = ir.Op(e.op, (_widened(x),), ir.ValType(e.type.kind, DType.F32, e.type.layout), e.span)
            return ir.Op("cast", (red,), e.type, e.span)
        case "sigmoid" | "erf" if x.type.dtype is DType.F16:
            # In f32, as PyTorch computes them. sigmoid: in f16, exp(-x) overflows to inf below x = -11.09, and
            # 1 / (1 + inf) flushes to 0 where PyTorch gives a subnormal (sigmoid(-15) = 3.1e-7; rsqrt of it was
            # inf, not 1800). erf: its polynomial evaluated in f16 arithmetic rounds at every step; the sum of 2048
            # f16 erf values moved enough to flip a comparison with it (fuzz seed 26000).
            wide = ir.Op(e.op, (_widened(x),), ir.ValType(e.type.kind, DType.F32, e.type.layout), e.span)
            return ir.Op("cast", (wide,), e.type, e.span)
        case "div" if e.type.dtype is DType.F16 and not _f16_division_exact(*e.args) and not exp_sum_division(
                *e.args, env or {}):
            a, b = e.args
            f32 = ir.Op("div", (_widened(a), _widened(b)), ir.ValType(e.type.kind, DType.F32, e.type.layout), e.span)
            return ir.Op("cast", (f32,), e.type, e.span)
        case "abs" if not e.type.dtype.is_float:  # Abs takes f16/f32 only: |x| = max(x, -x)
            return _op("max", e, x, _op("mul", e, x, ir.Const(-1, ir.scalar_of(e.type.dtype), e.span)))
        case "gather" if e.type.layout is ir.Layout.ROWS:
            # whole rows of indices: the vector Gather reads i32 byte offsets (ascendc_next.md §3.1)
            idx = e.args[1]
            i32 = ir.ValType(idx.type.kind, DType.I32, idx.type.layout)
            if idx.type.dtype is not DType.I32:
                idx = ir.Op("cast", (idx,), i32, e.span)
            offsets = ir.Op("mul", (idx, ir.Const(x.type.dtype.size, ir.scalar_of(DType.I32), e.span)), i32, e.span)
            return ir.Op("gather_bytes", (x, offsets), e.type, e.span)
        case "sub" | "lt" | "le" | "gt" | "ge" | "eq" | "ne" if (fused := _col_minus_row(e)) is not None:
            return fused
        case "pow":
            return _power(e)
        case "cast" if (steps := _cast_steps(x.type.dtype, e.type.dtype)):
            for dt in steps:
                x = ir.Op("cast", (x,), ir.ValType(x.type.kind, dt, x.type.layout), e.span)
            return ir.Op("cast", (x,), e.type, e.span)
    return _expand(e)


_SMALL_INTS = (DType.U8, DType.I8)


def _cast_steps(src: DType, dst: DType) -> tuple[DType, ...]:
    """The intermediate dtypes of a cast the vector Cast has no documented instruction for, on A2 and 310P
    alike (CANN "Cast" page, tables 5 and 6; docs/design.md "Cast pairs"); () when one instruction does it.
    Each step is exact or is the one rounding torch also does (it converts integers to f16 / bf16 through
    float too)."""
    if src in _SMALL_INTS and dst in (DType.F32, DType.BF16, DType.I16, DType.I32):
        return (DType.F16,)  # u8 / i8 convert to half only; exact for every 8-bit value
    if src is DType.I16 and dst in (DType.BF16, DType.I32):
        return (DType.F32,)  # exact
    if {src, dst} == {DType.F16, DType.BF16} or (src in (DType.I32, DType.I64) and dst in (DType.F16, DType.BF16)):
        return (DType.F32,)  # no f16 <-> bf16 pair; int32 -> half is the SetDeqScale form, not a plain conversion
    if src is DType.BF16 and dst in (*_SMALL_INTS, DType.I16):
        return (DType.F32,)
    if src in (DType.F16, DType.F32) and dst is DType.I16:
        return (DType.I32,)  # truncate to i32, then i32 -> i16 saturates (310P has no TRUNC for f16 -> i16)
    if src is DType.F32 and dst in _SMALL_INTS:
        # no f32 -> 8-bit pair: truncate to i32 first (rounding to f16 first would turn 2.9999 into 3), then
        # the integer goes to half (exact up to 2048, beyond that it saturates anyway) and half -> 8 bits
        return (DType.I32, DType.F32, DType.F16)
    return ()


#: f16 limits: the largest finite value and the smallest normal one.
_F16_MAX, _F16_MIN_NORMAL = 65504.0, 2.0 ** -14


def _f16_division_exact(a: ir.Expr, b: ir.Expr) -> bool:
    """Whether a / b of f16 may stay in f16: Div of two tiles, or a constant that f16 holds. A division by a
    scalar or by one value per row is x * (1 / d), and 1 / d overflows f16 for |d| < 1.5e-5 (then 0 / d gave
    NaN and x / x gave inf where PyTorch, computing in f32, gives 0 and 1); such divisions run in f32."""
    tiles = a.type.kind is ir.Kind.TILE, b.type.kind is ir.Kind.TILE
    if all(tiles):
        return a.type.layout is b.type.layout or ir.Layout.COL not in (a.type.layout, b.type.layout)
    if tiles[0]:
        d = _const(b)
        return d is not None and d != 0 and _F16_MIN_NORMAL <= abs(1.0 / d) <= _F16_MAX
    n = _const(a)
    return n is not None and abs(n) <= _F16_MAX and b.type.layout is not ir.Layout.COL


_SWAPPED_CMP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


def _col_minus_row(e: ir.Op) -> ir.Expr | None:
    """col_index() - row_index() is one CreateVecIndex per row starting at -row (lowering/emit/positions.py), and
    col_index() OP row_index() is (col_index() - row_index()) OP 0 (exact: i32 positions are far from overflow)."""
    a, b = e.args
    if not (isinstance(a, ir.Op) and isinstance(b, ir.Op) and {a.op, b.op} == {"col_index", "row_index"}):
        return None
    col, row = (a, b) if a.op == "col_index" else (b, a)
    fused = ir.Op("col_minus_row", row.args, col.type, e.span)
    if e.op == "sub":
        return fused if a is col else None
    zero = ir.Const(0, ir.scalar_of(DType.I32), e.span)
    return ir.Op(e.op if a is col else _SWAPPED_CMP[e.op], (fused, zero), e.type, e.span)


#: |b| from here on: every f32 is an even integer (the spacing of f32 is 2 or more); below it, b fits an i32 exactly.
_POW_EVEN_ABOVE = 16777216.0


def _power(e: ir.Op) -> ir.Expr:
    """a ** b with a tile operand, as torch.pow: exp(b * ln|a|), negated for a < 0 and an odd integer b, NaN for
    a < 0 and a fractional b (but a = -inf: inf or 0); b = 0 gives 1 (even for a NaN a); |a| = 1 takes exp(0) = 1
    (so 1 ** nan = 1 and (-1) ** inf = 1, where b * ln|a| is NaN; (-1) ** b then gets its sign or NaN). In f32 (f16 operands are widened, the result rounded once, as PyTorch does). Whether b is an integer and
    odd: trunc by the float -> i32 -> float casts (exact below 2^24; above, every float is even: b taken as 0)."""
    a, b = e.args
    if e.type.dtype is not DType.F32:
        wide = ir.Op("pow", (_widened(a), _widened(b)), ir.ValType(e.type.kind, DType.F32, e.type.layout), e.span)
        return ir.Op("cast", (_power(wide),), e.type, e.span)
    ty = e.type
    mask_ty = ir.ValType(ty.kind, DType.BOOL, ty.layout)

    def op(name: str, *args: ir.Expr) -> ir.Op:
        return ir.Op(name, args, mask_ty if name in ("lt", "ge", "eq", "ne") else ty, e.span)

    def c(v: float) -> ir.Const:
        return ir.Const(v, ir.scalar_of(DType.F32), e.span)

    def tile(v: ir.Expr, other: ir.Expr) -> ir.Expr:  # a scalar operand as a tile (the masks below are tiles)
        return v if v.type.kind is ir.Kind.TILE else op("select", op("eq", other, other), v, v)

    a, b = tile(a, b), tile(b, a)
    ab = op("abs", a)
    # the tile first in each select (Select's tensor-scalar form: no Duplicate; ne is true for NaN, as eq's else side)
    m = op("exp", op("select", op("ne", ab, c(1.0)), op("mul", b, op("log", ab)), c(0.0)))  # |a| = 1: 1 (b = inf, nan)
    bs = op("select", op("ge", op("abs", b), c(_POW_EVEN_ABOVE)), c(0.0), b)
    i32 = ir.ValType(ty.kind, DType.I32, ty.layout)

    def trunc(v: ir.Expr) -> ir.Expr:
        return op("cast", ir.Op("cast", (v,), i32, e.span))

    half = op("mul", bs, c(0.5))
    signed = op("select", op("eq", trunc(half), half), m, op("mul", m, c(-1.0)))  # even: m, odd: -m
    fractional = op("select", op("eq", a, c(float("-inf"))), m, c(float("nan")))
    negative = op("select", op("eq", trunc(bs), bs), signed, fractional)
    r = op("select", op("lt", a, c(0.0)), negative, m)
    return op("select", op("ne", b, c(0.0)), r, c(1.0))


def legalize_scalar(e: ir.Expr) -> ir.Expr | None:
    """The same rewrites for a scalar the device computes (hoist_scalars.py); relu is max(x, 0) there."""
    if not isinstance(e, ir.Op) or e.type.kind is not ir.Kind.SCALAR:
        return None
    if e.op == "relu":
        return _op("max", e, e.args[0], _c(0.0, e))
    return _expand(e)


def _odd_series(x: ir.Expr, coeffs: tuple[float, ...], like: ir.Expr, x2: ir.Expr | None = None) -> ir.Expr:
    """x * (c0 + c1 x^2 + c2 x^4 + ...) in Horner form (x2: x * x when the caller has it)."""
    x2 = x2 if x2 is not None else _op("mul", like, x, x)
    acc: ir.Expr = _op("mul", like, x2, _c(coeffs[-1], like))
    for a in reversed(coeffs[1:-1]):
        acc = _op("mul", like, _op("add", like, acc, _c(a, like)), x2)
    return _op("mul", like, _op("add", like, acc, _c(coeffs[0], like)), x)


def _expand(e: ir.Op) -> ir.Expr | None:
    (x, *_) = e.args if e.args else (None,)
    match e.op:
        case "neg":
            return _op("mul", e, x, _c(-1.0, e))
        case "sigmoid":  # 1 / (1 + exp(-x))
            return _op("reciprocal", e, _op("add", e, _op("exp", e, _op("mul", e, x, _c(-1.0, e))), _c(1.0, e)))
        case "tanh" if e.type.dtype is DType.F32:  # (p - m) / (p + m), p = exp(c), m = exp(-c), c = clamped x
            x2 = _op("mul", e, x, x)  # shared by the series and the test (x^2 < below^2: no Abs)
            cx = _op("max", e, _op("min", e, x, _c(_TANH_CLAMP, e)), _c(-_TANH_CLAMP, e))
            p, m = _op("exp", e, cx), _op("exp", e, _op("mul", e, cx, _c(-1.0, e)))
            y = _op("div", e, _op("sub", e, p, m), _op("add", e, p, m))
            small = _op("lt", e, x2, _c(_TANH_SERIES_BELOW * _TANH_SERIES_BELOW, e))
            return _op("select", e, small, _odd_series(x, _TANH_SERIES, e, x2), y)
        case "tanh":  # f16 / bf16: sign(x) (1 - 2 / (exp(2|x|) + 1)); exp overflow to inf gives the right limit 1
            # (on |x|: for x < 0, 2 / (exp(2x) + 1) is near 2, where f16 is 4x coarser than near 0, and the
            # rounding was biased: a sum of 30,000 f16 tanh values came out 8% off)
            ax = _op("abs", e, x)
            denom = _op("add", e, _op("exp", e, _op("mul", e, ax, _c(2.0, e))), _c(1.0, e))
            y = _op("sub", e, _c(1.0, e), _op("div", e, _c(2.0, e), denom))
            y = _op("select", e, _op("lt", e, x, _c(0.0, e)), _op("mul", e, y, _c(-1.0, e)), y)
            return _op("select", e, _op("lt", e, ax, _c(_TANH_SERIES_BELOW_16, e)), _odd_series(x, _TANH_SERIES, e), y)
        case "erf":
            ax = _op("abs", e, x)
            t = _op("reciprocal", e, _op("add", e, _op("mul", e, ax, _c(_ERF_P, e)), _c(1.0, e)))
            poly: ir.Expr = _op("mul", e, t, _c(_ERF_A[4], e))
            for a in reversed(_ERF_A[:4]):
                poly = _op("mul", e, _op("add", e, poly, _c(a, e)), t)
            x2 = _op("mul", e, ax, ax)
            gauss = _op("exp", e, _op("mul", e, x2, _c(-1.0, e)))
            y = _op("sub", e, _c(1.0, e), _op("mul", e, poly, gauss))
            y = _op("select", e, _op("lt", e, x, _c(0.0, e)), _op("mul", e, y, _c(-1.0, e)), y)
            return _op("select", e, _op("lt", e, ax, _c(_ERF_SERIES_BELOW, e)), _odd_series(x, _ERF_SERIES, e), y)
    return None


#: |x| is clamped here in the GELU form: q(c|x|) underflows long before (exp(-50) ~ 2e-22), and an
#: infinite |x| would otherwise meet a zero factor (inf * 0 = NaN) instead of giving gelu(+inf) = +inf.
_GELU_ABS_CLAMP = 10.0


def _const(e: ir.Expr) -> float | None:
    return float(e.value) if isinstance(e, ir.Const) and e.type.kind is ir.Kind.SCALAR else None


def _scaled(e: ir.Expr) -> tuple[ir.Expr, float]:
    """(x, k) for e = x * k or k * x with a constant k; (e, 1.0) otherwise."""
    if isinstance(e, ir.Op) and e.op == "mul":
        a, b = e.args
        if _const(b) is not None and _const(a) is None:
            return a, _const(b)
        if _const(a) is not None and _const(b) is None:
            return b, _const(a)
    return e, 1.0


def _one_plus_erf(e: ir.Expr) -> tuple[ir.Expr, float] | None:
    """(x, c) when e is 1 + erf(c * x) (either operand order) with a constant c > 0."""
    if not (isinstance(e, ir.Op) and e.op == "add"):
        return None
    a, b = e.args
    one, rest = (a, b) if _const(a) == 1.0 else (b, a) if _const(b) == 1.0 else (None, None)
    if one is None or not (isinstance(rest, ir.Op) and rest.op == "erf"):
        return None
    x, c = _scaled(rest.args[0])
    return (x, c) if c > 0 else None


def _gelu_form(e: ir.Expr) -> ir.Expr | None:
    """k * x * (1 + erf(c * x)), c > 0 (GELU is k = 1/2, c = 1/sqrt(2)) without a sign mask or select:

    for x >= 0 it is k * x * (2 - q) and for x < 0 k * x * q, where q = erfc(c|x|) = t P(t) exp(-c^2 x^2)
    (A&S 7.1.26, t = 1 / (1 + p c |x|)); both are 2k * relu(x) - k |x| q. The -k is folded into the
    polynomial's coefficients: 21 vector instructions instead of 26 (and no mask buffer); 20 since session 36 (t
    in u = 1 / (|x| + 1 / (p c)), p c's Muls folded into the coefficients; tests/test_gelu_form.py)."""
    if not (isinstance(e, ir.Op) and e.op == "mul" and e.type.kind is ir.Kind.TILE and e.type.dtype.is_float):
        return None
    for lhs, rhs in (e.args, e.args[::-1]):
        m = _one_plus_erf(rhs)
        if m is None:
            continue
        x, c = m
        x2, k = _scaled(lhs)
        if x2 != x or x.type != e.type:
            continue
        ax = _op("min", e, _op("abs", e, x), _c(_GELU_ABS_CLAMP, e))
        # t = 1 / (1 + p c |x|) = s / (|x| + s) with s = 1 / (p c): the polynomial in u = 1 / (|x| + s), its
        # coefficients times s^i (session 36: one Muls fewer)
        sc = 1.0 / (_ERF_P * c)
        u = _op("reciprocal", e, _op("add", e, ax, _c(sc, e)))
        npoly: ir.Expr = _op("mul", e, u, _c(-k * _ERF_A[4] * sc ** 5, e))
        for i, a in reversed(list(enumerate(_ERF_A[:4], start=1))):
            npoly = _op("mul", e, _op("add", e, npoly, _c(-k * a * sc ** i, e)), u)
        gauss = _op("exp", e, _op("mul", e, _op("mul", e, ax, ax), _c(-c * c, e)))
        relu = _op("relu", e, x)
        if 2 * k != 1.0:
            relu = _op("mul", e, relu, _c(2 * k, e))
        return _op("add", e, relu, _op("mul", e, ax, _op("mul", e, npoly, gauss)))
    return None


def _negated(z: ir.Expr) -> ir.Expr:
    """-z as one Muls: t * s (a scalar s) becomes t * (-s), the scalar unit negating s (exact, as -(t * s) is)."""
    if isinstance(z, ir.Op) and z.op == "mul":
        for t, sc in (z.args, z.args[::-1]):
            if t.type.kind is ir.Kind.TILE and sc.type.kind is ir.Kind.SCALAR:
                neg = (ir.Const(-sc.value, sc.type, sc.span) if isinstance(sc, ir.Const)
                       else ir.Op("mul", (sc, ir.Const(-1, sc.type, sc.span)), sc.type, sc.span))
                return ir.Op("mul", (t, neg), z.type, z.span)
    return _op("mul", z, z, _c(-1.0, z))


def _times_sigmoid(e: ir.Expr) -> ir.Expr | None:
    """a * sigmoid(z) of float tiles (swish / SiLU: a = z) as a / (1 + exp(-z)): a Div where the expansion took a
    Reciprocal and a Mul (session 35), one rounding instead of two. f16 in f32 as sigmoid of f16 (one cast of a
    shared with z, one back). Limits as before: 1 + exp(-z) = inf gives a / inf = 0 where a * 0 was 0, and an
    infinite a gives NaN (inf / inf) where inf * 0 did. Scalar or other-layout factors keep the generic form."""
    if not (isinstance(e, ir.Op) and e.op == "mul" and e.type.kind is ir.Kind.TILE and e.type.dtype.is_float):
        return None
    for a, sig in (e.args, e.args[::-1]):
        if not (isinstance(sig, ir.Op) and sig.op == "sigmoid" and a.type == e.type and sig.type == e.type
                and sig.args[0].type == e.type):
            continue
        z = sig.args[0]
        if e.type.dtype is DType.F32:
            return _op("div", e, a, _op("add", e, _op("exp", e, _negated(z)), _c(1.0, e)))
        if e.type.dtype is not DType.F16:
            return None
        wa = _widened(a)
        wz = wa if z == a else _widened(z)
        wide = ir.Op("mul", (wa, ir.Op("sigmoid", (wz,), wz.type, sig.span)), wa.type, e.span)
        return ir.Op("cast", (_times_sigmoid(wide),), e.type, e.span)
    return None


def _top_down(e: ir.Expr, fn) -> ir.Expr:
    """Apply `fn` at the outermost matching nodes (children of a replaced node are not revisited)."""
    new = fn(e)
    if new is not None:
        return new
    if isinstance(e, ir.Op):
        args = tuple(_top_down(a, fn) for a in e.args)
        if any(a is not b for a, b in zip(args, e.args, strict=True)):
            return replace(e, args=args)
    return e


def _legalize_body(tl: ir.TileLoop) -> ir.TileLoop:
    """_legalize over every value statement, bottom-up, each seeing the values assigned before it."""
    env: dict[str, ir.Expr] = {}
    out = []
    for s in tl.body:
        if isinstance(s, ir.VALUE_STMTS):
            out.append(replace(s, value=rewrite_expr(s.value, lambda e: _legalize(e, env))))
            if isinstance(s, ir.Assign):
                env[s.name] = s.value
            elif hasattr(s, "name"):  # an accumulator: no longer the value an Assign gave the name
                env.pop(s.name, None)
        else:
            out.append(s)
    return replace(tl, body=tuple(out))


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    kernel = map_tile_bodies(kernel, lambda tl: replace(tl, body=tuple(
        replace(s, value=_top_down(_top_down(s.value, _gelu_form), _times_sigmoid))
        if isinstance(s, (ir.Assign, ir.Store)) else s
        for s in tl.body)))
    kernel = map_tile_bodies(kernel, _legalize_body)
    return map_tile_bodies(kernel, lambda tl: replace(tl, body=tuple(  # `acc += sum(v)` of f16 v: summed in f32 too
        replace(s, value=_widened(s.value)) if isinstance(s, ir.Accumulate) and s.reduce == "reduce_sum"
        and s.value.type.dtype is DType.F16 else s for s in tl.body)))
