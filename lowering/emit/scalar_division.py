"""x / d for a scalar d (a per-row value, a kernel scalar, a chunked row's sum) on an f32 tile.

select_instructions lowers it to a Muls by 1 / d: the vector unit has no division by a scalar, and one Muls is a
quarter of a Div (ascendc.md §5.5). That is x / d within two roundings only where 1 / d is a normal float. For
|d| < 2^-126 it is not: below 2^-128 it overflows (softmax's e / sum(e) of a row whose exps are all subnormal gave
inf * 0 = NaN where the quotient is at most 1; fuzz seed 3606, session 36), and for |d| > 2^126 it is subnormal and
short of bits. Those divisors are first scaled into range by k = 2^64 or 2^-64, exactly: x / d = (x * k) * (1 / (d * k)).
x * k is exact unless it overflows (|x| > 2^64 with |d| < 2^-126: the quotient overflows too) or underflows (|x| <
2^-62 with |d| > 2^126: the quotient is below 2^-188, zero in f32). d = 0, +-inf and NaN keep the single Muls:
x * (1 / d) is then what x / d is (+-inf or NaN, 0 or NaN, NaN). The test runs on the scalar unit, so the usual
divisor costs one comparison and nothing on the vector unit. 16-bit tiles are divided in f32 (legalize.py), except
the softmax rows whose divisor is at least 1 (lowering/passes/softmax_division.py): those keep the single Muls.
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.dtypes import DType


def divisor(op: ir.VecOp, dtype: DType) -> ir.Expr | None:
    """d, when `op` is a Muls of an f32 tile by 1 / d (a scalar reciprocal); None otherwise."""
    if op.api != "Muls" or dtype is not DType.F32 or len(op.srcs) != 2:
        return None
    s = op.srcs[1]
    if not (isinstance(s, ir.Op) and s.op == "reciprocal") or isinstance(s.args[0], ir.RowLength):
        return None  # a mean's 1 / rowLen_: a count of at least 1, its reciprocal a normal float
    return s.args[0]


def lines(dst: str, src: str, d: str, count: str) -> list[str]:
    """C++ lines: dst = src / d over `count` elements, d a float expression (see the module docstring)."""
    return [
        "{",
        f"    const float divD = {d};  // x / d as x * (1 / d): emit/scalar_division.py",
        "    const float divA = divD < 0.0f ? -divD : divD;",
        "    if ((divA > 0.0f && divA < 1.17549435e-38f) || (divA > 8.50705917e37f && divA <= 3.40282347e38f)) {",
        "        const float divK = divA < 1.0f ? 18446744073709551616.0f : 5.42101086e-20f;  // 2^64 or 2^-64",
        f"        Muls({dst}, {src}, divK, {count});",
        f"        Muls({dst}, {dst}, 1.0f / (divD * divK), {count});",
        "    } else {",
        f"        Muls({dst}, {src}, 1.0f / divD, {count});",
        "    }",
        "}",
    ]
