"""Map each three-address assignment to AscendC instructions (count forms).

Goals: tensor-tensor vs tensor-scalar forms (Add vs Adds, Compare vs Compares, Select modes),
scalar-first operands (c - x, c / x), casts with a rounding mode, loads/stores as CopyIn/CopyOut.
Runs after allocate_buffers, so every tile operand is a buffer name.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from ascend_dsl.dtypes import DType

from ..context import PassContext
from ..rewrite import map_tile_bodies
from ..scalar_loops import SCALAR_LOOP_OPS, scalar_loop_op

#: The row length of a row loop as a scalar operand (emitted as the kernel's D_ member).
ROW_LENGTH = "@row_length"

_BINARY = {"add": ("Add", "Adds"), "mul": ("Mul", "Muls"), "max": ("Max", "Maxs"), "min": ("Min", "Mins")}
_UNARY = {"abs": "Abs", "exp": "Exp", "log": "Ln", "sqrt": "Sqrt", "rsqrt": "Rsqrt", "reciprocal": "Reciprocal",
          "relu": "Relu"}
_CMP = {"lt": "LT", "le": "LE", "gt": "GT", "ge": "GE", "eq": "EQ", "ne": "NE"}
_SWAPPED = {"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE", "EQ": "EQ", "NE": "NE"}


def _tile(o: ir.Expr) -> bool:
    return o.type.kind is ir.Kind.TILE


def _scalar(op: str, a: ir.Expr) -> ir.Expr:
    """-a or 1/a on a scalar operand, folded when constant."""
    if isinstance(a, ir.Const):
        if op == "neg":
            return replace(a, value=-a.value)
        # x / 0.0 is x * inf (IEEE, as torch: +-inf, NaN for 0 / 0); -0.0 keeps its sign
        return replace(a, value=1.0 / a.value if a.value else math.copysign(math.inf, a.value))
    return ir.Op(op, (a,), a.type, a.span)


def writes_dst_early(op: ir.Op) -> bool:
    """True when the lowering writes dst before it has read every tile source (dst must not alias them)."""
    a = op.args[0] if op.args else None
    if op.op in ("sub", "div") and not _tile(a):
        return True
    return op.op == "select" and not _tile(op.args[1])


def _round_mode(src: DType, dst: DType) -> str:
    if src.is_float and not dst.is_float:
        return "CAST_TRUNC"  # torch .to(int) truncates toward zero
    if src.is_float and dst.is_float and dst.size < src.size:
        return "CAST_RINT"
    return "CAST_NONE"


def lower_op(dst: str, e: ir.Op, row_length: str | None = None) -> list[ir.VecOp]:
    def name(o: ir.Expr) -> ir.Operand:
        return o.name if isinstance(o, ir.Ref) and _tile(o) else o

    args = [name(a) for a in e.args]
    span = e.span
    op = e.op

    def v(api, *srcs, **attrs) -> ir.VecOp:
        return ir.VecOp(api, dst, tuple(srcs), tuple(attrs.items()), span)

    if op in _BINARY:
        vv, vs = _BINARY[op]
        a, b = e.args
        if _tile(a) and _tile(b):
            return [v(vv, args[0], args[1])]
        tile_arg, s = (args[0], b) if _tile(a) else (args[1], a)
        return [v(vs, tile_arg, s)]
    if op == "sub":
        a, b = e.args
        if _tile(a) and _tile(b):
            return [v("Sub", args[0], args[1])]
        if _tile(a):
            return [v("Adds", args[0], _scalar("neg", b))]
        return [v("Muls", args[1], ir.Const(-1.0, ir.scalar_of(b.type.dtype), span)), v("Adds", dst, a)]
    if op == "div":
        a, b = e.args
        if _tile(a) and _tile(b):
            return [v("Div", args[0], args[1])]
        if _tile(a):
            return [v("Muls", args[0], _scalar("reciprocal", b))]
        return [v("Duplicate", a), v("Div", dst, args[1])]
    if op in _UNARY:
        return [v(_UNARY[op], args[0])]
    if op in _CMP:
        a, b = e.args
        if _tile(a) and _tile(b):
            return [v("Compare", args[0], args[1], cmp=_CMP[op])]
        if _tile(a):
            return [v("Compares", args[0], b, cmp=_CMP[op])]
        return [v("Compares", args[1], a, cmp=_SWAPPED[_CMP[op]])]
    if op == "select":
        m, a, b = e.args
        if _tile(a):
            mode = "VSEL_TENSOR_TENSOR_MODE" if _tile(b) else "VSEL_TENSOR_SCALAR_MODE"
            return [v("Select", args[0], args[1], args[2], mode=mode)]
        if _tile(b):  # select(m, s, x) == select(!m, x, s): materialise s instead of inverting the mask
            return [v("Duplicate", a), v("Select", args[0], dst, args[2], mode="VSEL_TENSOR_TENSOR_MODE")]
        return [v("Duplicate", a), v("Select", args[0], dst, b, mode="VSEL_TENSOR_SCALAR_MODE")]
    if op in ("reduce_sum", "reduce_max", "reduce_min"):
        return [v({"reduce_sum": "ReduceSum", "reduce_max": "ReduceMax", "reduce_min": "ReduceMin"}[op], args[0])]
    if op == "reduce_mean":
        (a,) = e.args
        d = ir.Ref(ROW_LENGTH, ir.scalar_of(e.type.dtype), span)
        return [v("ReduceSum", args[0]), v("Muls", dst, ir.Op("reciprocal", (d,), d.type, span))]
    if op == "gather":  # a scalar loop over the rows (emitted by the row stage writer)
        return [v("GatherRows", args[0], args[1])]
    if op == "copy":  # UB -> UB, any dtype (allocate_buffers: a stored value Muls cannot copy)
        return [v("DataCopy", args[0])]
    if op == "cast":
        (a,) = e.args
        return [v("Cast", args[0], round=_round_mode(a.type.dtype, e.type.dtype))]
    if op in SCALAR_LOOP_OPS:  # no AscendC instruction: the emitter writes a scalar loop (lowering/scalar_loops.py)
        return [scalar_loop_op(dst, e, args)]
    raise DslError.at("INTERNAL", f"no instruction for op '{op}' (missing legalization?)", span)


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    def body(tl: ir.TileLoop) -> ir.TileLoop:
        out: list[ir.Stmt] = []
        for s in tl.body:
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Load):
                out.append(ir.CopyIn(s.name, s.value.tensor, s.value.index, s.span))
            elif isinstance(s, ir.Assign):
                row_length = tl.row_shape[1] if tl.row_shape else None
                out.extend(replace(vo, span=s.span) for vo in lower_op(s.name, s.value, row_length))
            elif isinstance(s, ir.Store):
                out.append(ir.CopyOut(s.tensor, s.index, s.value.name, s.span))
            else:  # Accumulate: reduced and combined by the emitter (reduce + scalar update)
                out.append(s)
        return replace(tl, body=tuple(out))

    return map_tile_bodies(kernel, body)
