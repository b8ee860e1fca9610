"""Softmax's normalisation of f16 rows, e / sum(e, axis=1) with e = exp(v - max(v, axis=1)), kept in f16.

An f16 division by one value per row is e * (1 / s), and legalize.py runs such divisions in f32 because 1 / s
overflows f16 for |s| < 1.5e-5. Here it cannot: every e is in [0, 1] (exp of v - max(v) <= 0) and the row holds
an e = exp(0) = 1, so s >= 1 and 1 / s is in (0, 1] (session 36). The f16 form rounds twice, 1 / s to f16 on the
scalar unit and the product on the vector unit, where the f32 form rounded once: the result is within one unit of
the f16 result (for s > 16384, 1 / s is subnormal, but so is e / s <= 1 / s, and both errors are under one
subnormal unit). The f32 form cast e to f32, multiplied and cast back (softmax f16 at 128 x 4096: V 1.51 -> 1.29 us).
NaN and infinite inputs give NaN rows either way (max(v) = inf or NaN makes every v - max(v) NaN).
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.dtypes import DType


def _resolve(e: ir.Expr, env: dict[str, ir.Expr]) -> ir.Expr:
    return env.get(e.name, e) if isinstance(e, ir.Ref) else e


def _is_op(e: ir.Expr, op: str, n: int = 1) -> bool:
    return isinstance(e, ir.Op) and e.op == op and len(e.args) == n


def _exp_minus_row_max(e: ir.Expr) -> bool:
    """exp(v - max(v, axis=1)) of whole f16 rows (the same v on both sides)."""
    if not (_is_op(e, "exp") and e.type.dtype is DType.F16 and e.type.layout is ir.Layout.ROWS):
        return False
    d = e.args[0]
    if not _is_op(d, "sub", 2):
        return False
    v, m = d.args
    return (v.type.layout is ir.Layout.ROWS and _is_op(m, "reduce_max") and m.args[0] == v
            and m.type.layout is ir.Layout.COL)


def _row_sum_of(b: ir.Expr, a: ir.Expr) -> bool:
    """b is sum(a, axis=1): as written, or as legalize.py widens it (cast(sum(cast(a, f32)), f16))."""
    if _is_op(b, "cast") and b.type.dtype is DType.F16:
        inner = b.args[0]
        if not (_is_op(inner, "reduce_sum") and _is_op(inner.args[0], "cast")):
            return False
        return inner.args[0].args[0] == a and inner.type.layout is ir.Layout.COL
    return _is_op(b, "reduce_sum") and b.args[0] == a and b.type.layout is ir.Layout.COL


def exp_sum_division(a: ir.Expr, b: ir.Expr, env: dict[str, ir.Expr]) -> bool:
    """Whether a / b is e / sum(e, axis=1) with e = exp(v - max(v, axis=1)) of f16 rows (a may be a Ref to e:
    `env` maps the tile body's names to the values assigned to them before the division)."""
    return _row_sum_of(b, a) and _exp_minus_row_max(_resolve(a, env))
