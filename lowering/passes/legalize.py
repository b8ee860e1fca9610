"""Rewrite ops the vector unit lacks into ones it has.

Goals: tanh, sigmoid, erf, neg become exp/div/mul/select sequences over AscendC primitives
(ascendc.md 4.2 lists the primitives: Add..Min, Adds/Muls/Maxs/Mins, Exp, Ln, Abs, Sqrt, Rsqrt,
Reciprocal, Relu, Compare, Select, Cast). Non-goals: choosing tensor vs tensor-scalar
instructions (select_instructions.py).
"""

from __future__ import annotations

from ascend_dsl import ir

from ..context import PassContext
from ..rewrite import map_exprs

# Abramowitz & Stegun 7.1.26: erf(x) = 1 - (a1 t + ... + a5 t^5) e^{-x^2}, t = 1 / (1 + p x), x >= 0;
# |error| <= 1.5e-7 (Handbook of Mathematical Functions, 1964, p. 299).
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _c(v: float, like: ir.Expr) -> ir.Const:
    return ir.Const(v, ir.scalar_of(like.type.dtype), like.span)


def _op(op: str, like: ir.Expr, *args: ir.Expr) -> ir.Op:
    # a mask keeps the layout of its operand (whole rows in row and cube epilogues)
    ty = like.type if op not in ("lt", "gt") else ir.tile_of(ir.DType.BOOL, like.type.layout)
    return ir.Op(op, args, ty, like.span)


def _legalize(e: ir.Expr) -> ir.Expr | None:
    if not isinstance(e, ir.Op) or e.type.kind is not ir.Kind.TILE:
        return None
    (x, *_) = e.args if e.args else (None,)
    match e.op:
        case "neg":
            return _op("mul", e, x, _c(-1.0, e))
        case "sigmoid":  # 1 / (1 + exp(-x))
            return _op("reciprocal", e, _op("add", e, _op("exp", e, _op("mul", e, x, _c(-1.0, e))), _c(1.0, e)))
        case "tanh":  # 1 - 2 / (exp(2x) + 1); exp overflow to inf gives the right limit 1
            denom = _op("add", e, _op("exp", e, _op("mul", e, x, _c(2.0, e))), _c(1.0, e))
            return _op("sub", e, _c(1.0, e), _op("div", e, _c(2.0, e), denom))
        case "erf":
            ax = _op("abs", e, x)
            t = _op("reciprocal", e, _op("add", e, _op("mul", e, ax, _c(_ERF_P, e)), _c(1.0, e)))
            poly: ir.Expr = _op("mul", e, t, _c(_ERF_A[4], e))
            for a in reversed(_ERF_A[:4]):
                poly = _op("mul", e, _op("add", e, poly, _c(a, e)), t)
            gauss = _op("exp", e, _op("mul", e, _op("mul", e, ax, ax), _c(-1.0, e)))
            y = _op("sub", e, _c(1.0, e), _op("mul", e, poly, gauss))
            return _op("select", e, _op("lt", e, x, _c(0.0, e)), _op("mul", e, y, _c(-1.0, e)), y)
    return None


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    return map_exprs(kernel, _legalize)
