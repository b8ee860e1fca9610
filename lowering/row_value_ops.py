"""A row loop's per-row op (`x op c[r]`, ir.PerRow with a per-row column) read back as one binary instruction.

select_instructions writes `x op v` (v the row's value, read by the scalar unit) as scalar forms: `Adds(x, v)`,
`Muls(x, v)`, `Maxs`, `Mins`, `Adds(x, -v)` for x - v, `Muls(x, 1 / v)` for x / v, and for v - x and v / x two
ops (`Muls(x, -1)`, `Adds(dst, v)`; `Duplicate(dst, v)`, `Div(dst, dst, x)`, or `Reciprocal(x)`, `Muls(dst, v)` when dst is
x's buffer). With the values spread to a 32-byte block per
row (Brcb, lowering/emit/row_value_broadcast.py) the same op is one vector instruction per strip of columns and
up to 255 rows: `Add`, `Mul`, `Max`, `Min`, `Sub`, `Div` with the blocks as one operand. `binary()` names it, or
None for any other form (those stay row by row).
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir

_PLAIN = {"Adds": "Add", "Muls": "Mul", "Maxs": "Max", "Mins": "Min"}


@dataclass(frozen=True)
class RowValueBinary:
    """dst = x api v per row (`values_first`: dst = v api x)."""

    api: str
    dst: str
    x: str
    values_first: bool = False


def _of_value(e: ir.Operand, wrap: str | None = None) -> bool:
    """`e` is the row's value (`wrap`: that op of it, e.g. neg / reciprocal)."""
    if wrap is None:
        return isinstance(e, ir.RowValue)
    return isinstance(e, ir.Op) and e.op == wrap and len(e.args) == 1 and isinstance(e.args[0], ir.RowValue)


def binary(s: ir.PerRow) -> RowValueBinary | None:
    if s.col is None:
        return None
    ops = s.ops
    if len(ops) == 1 and len(ops[0].srcs) == 2 and isinstance(ops[0].srcs[0], str):
        op, (x, v) = ops[0], ops[0].srcs
        if op.api in _PLAIN and _of_value(v):
            return RowValueBinary(_PLAIN[op.api], op.dst, x)
        if op.api == "Adds" and _of_value(v, "neg"):
            return RowValueBinary("Sub", op.dst, x)
        if op.api == "Muls" and _of_value(v, "reciprocal"):
            return RowValueBinary("Div", op.dst, x)
        return None
    if len(ops) == 2 and ops[0].api == "Duplicate" and len(ops[0].srcs) == 1 and _of_value(ops[0].srcs[0]) \
            and ops[1].api == "Div" and ops[1].dst == ops[0].dst and ops[1].srcs[0] == ops[0].dst \
            and isinstance(ops[1].srcs[1], str):
        return RowValueBinary("Div", ops[1].dst, ops[1].srcs[1], values_first=True)
    if len(ops) == 2 and len(ops[1].srcs) == 2 and ops[1].srcs[0] == ops[0].dst == ops[1].dst \
            and _of_value(ops[1].srcs[1]) and isinstance(ops[0].srcs[0], str):
        first, x = ops[0], ops[0].srcs[0]
        if first.api == "Muls" and isinstance(first.srcs[1], ir.Const) and first.srcs[1].value == -1.0 \
                and ops[1].api == "Adds":
            return RowValueBinary("Sub", first.dst, x, values_first=True)
        if first.api == "Reciprocal" and len(first.srcs) == 1 and ops[1].api == "Muls":
            return RowValueBinary("Div", first.dst, x, values_first=True)
    return None
