"""Map each three-address assignment to AscendC instructions (count forms), and every scalar expression
to a form the scalar unit can compute.

Goals: tensor-tensor vs tensor-scalar forms (Add vs Adds, Compare vs Compares, Select modes), scalar-
first operands (c - x, c / x), casts with a rounding mode, loads/stores as CopyIn/CopyOut (instructions
from the op registry, ascend_dsl/ops.py); in row loops, whole rows against per-row values or row vectors
as PerRow instructions (row by row; the per-row value as a scalar); scalar ops the scalar unit lacks
(sqrt, exp, ln, abs, pow) as VectorMath (one element on the vector unit) in kernel-scope values and the
per-row values of chunked rows; every scalar expression the emitter cannot write, and comparisons of
per-row values, reported as located UNSUPPORTED errors (collected). Runs after allocate_buffers, so every
tile operand is a buffer name. Non-goals: writing the C++ (lowering/emit/).
"""

from __future__ import annotations

import math
from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.diagnostics import DiagnosticSink, DslError
from ascend_dsl.diagnostics import ErrorCode as E
from ascend_dsl.dtypes import DType
from ascend_dsl.ops import OPS, Rule

from ..context import PassContext
from ..rewrite import map_tile_bodies
from ..scalar_loops import SCALAR_LOOP_APIS, SCALAR_LOOP_OPS, scalar_loop_op
from ..vector_scan import SCAN_APIS, SCAN_OPS, scan_op

_SWAPPED = {"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE", "EQ": "EQ", "NE": "NE"}
#: Tensor-tensor instruction -> its tensor-scalar form (Add -> Adds), for per-row values.
_SCALAR_FORM = {o.api: o.scalar_api for o in OPS.values() if o.scalar_api}
#: Instructions a row loop runs row by row against per-row values or row vectors.
_PER_ROW_APIS = ("Add", "Sub", "Mul", "Div", "Max", "Min")


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
    # c / x: Duplicate(dst, c) before Div reads x. (c - x is Muls(dst, x, -1) then Adds(dst, dst, c): x is read by the
    # first, element-wise, instruction, so dst may be x's buffer.) An extern op's slot may read sources late.
    if (op.op == "div" and not _tile(a)) or OPS[op.op].extern:
        return True
    if OPS[op.op].rule in (Rule.SCATTER, Rule.ROW_SCATTER):  # the copy of the rows lands in dst before idx and src are read
        return True
    if op.op in ("index_select_cols", "gather_middle"):  # dst is written while the index is still read
        return True
    return op.op == "select" and not _tile(op.args[1])


def _round_mode(src: DType, dst: DType) -> str:
    if src.is_float and not dst.is_float:
        return "CAST_TRUNC"  # torch .to(int) truncates toward zero
    if (src, dst) in ((DType.F32, DType.BF16), (DType.I64, DType.F32)):
        return "CAST_RINT"  # these pairs document RINT..TRUNC only
    return "CAST_NONE"  # f32 -> f16: CAST_NONE rounds to nearest even (documented on A2 and 310P; RINT is A2 only)


def lower_op(dst: str, e: ir.Op) -> list[ir.VecOp]:
    def name(o: ir.Expr) -> ir.Operand:
        return o.name if isinstance(o, ir.Ref) and _tile(o) else o

    args = [name(a) for a in e.args]
    span = e.span
    op, info = e.op, OPS[e.op]

    def v(api, *srcs, **attrs) -> ir.VecOp:
        return ir.VecOp(api, dst, tuple(srcs), tuple(attrs.items()), span)

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
    if info.scalar_api:  # add, mul, max, min
        a, b = e.args
        if _tile(a) and _tile(b):
            return [v(info.api, args[0], args[1])]
        tile_arg, s = (args[0], b) if _tile(a) else (args[1], a)
        return [v(info.scalar_api, tile_arg, s)]
    if info.cmp:
        a, b = e.args
        if _tile(a) and _tile(b):
            return [v("Compare", args[0], args[1], cmp=info.cmp)]
        if _tile(a):
            return [v("Compares", args[0], b, cmp=info.cmp)]
        return [v("Compares", args[1], a, cmp=_SWAPPED[info.cmp])]
    if op == "select":
        m, a, b = e.args
        if _tile(a):
            mode = "VSEL_TENSOR_TENSOR_MODE" if _tile(b) else "VSEL_TENSOR_SCALAR_MODE"
            return [v("Select", args[0], args[1], args[2], mode=mode)]
        if _tile(b):  # select(m, s, x) == select(!m, x, s): materialise s instead of inverting the mask
            return [v("Duplicate", a), v("Select", args[0], dst, args[2], mode="VSEL_TENSOR_TENSOR_MODE")]
        return [v("Duplicate", a), v("Select", args[0], dst, b, mode="VSEL_TENSOR_SCALAR_MODE")]
    if op == "reduce_mean":
        d = ir.RowLength(ir.scalar_of(e.type.dtype), span)
        return [v("ReduceSum", args[0]), v("Muls", dst, ir.Op("reciprocal", (d,), d.type, span))]
    if info.rule is Rule.POSITION:  # per row: CreateVecIndex / Duplicate (lowering/emit/positions.py)
        return [v({"col_index": "ColIndex", "row_index": "RowIndex", "col_minus_row": "ColMinusRow"}[op], *args)]
    if op == "gather_bytes":  # per row: the row copied to a row scratch, then Gather (lowering/emit/shared.py)
        return [v("GatherElems", args[0], args[1])]
    if op == "gather":  # a scalar loop over the rows (emitted by the row stage writer)
        return [v("GatherRows", args[0], args[1])]
    if op in ("index_select_cols", "gather_middle"):  # per element on the scalar unit, x read whole (emit/col_select.py)
        return [v("SelectCols" if op == "index_select_cols" else "GatherMiddle", *args)]
    if info.rule is Rule.ROW_SCATTER:  # the tile's rows, then the matching source rows (lowering/emit/row_scatter.py)
        api = "RowScatterAdd" if op in ("index_add", "index_put_acc", "scatter_add_dim0") else "RowScatterCopy"
        elems = {"elems": "1"} if op.endswith("_dim0") else {}  # single elements (emit/row_scatter.py)
        return [v(api, *args, wrap="1" if op.startswith("index_put") else "0", **elems)]
    if info.rule is Rule.SCATTER:  # per row: a copy of the rows, then a scalar loop (lowering/emit/scatter.py)
        return [v("ScatterAdd" if op == "scatter_add" else "Scatter", *args)]
    if op in ("argmax", "argmin"):  # ReduceMax / ReduceMin with calIndex per row (lowering/emit/arg_reduce.py)
        return [v("ArgMax" if op == "argmax" else "ArgMin", args[0])]
    if op == "cast":
        (a,) = e.args
        return [v("Cast", args[0], round=_round_mode(a.type.dtype, e.type.dtype))]
    if info.rule is Rule.RESIZE:  # Gather per output row (lowering/emit/resize.py)
        if len(e.args) == 2:  # grid_sample: (plane, the grid's name) (lowering/emit/grid_sample.py)
            return [v("Resize", args[0], mode=op, grid=e.args[1].value)]
        return [v("Resize", args[0], mode=op)]
    if op in SCAN_OPS:  # a blocked prefix on the vector unit, expanded by the emitter (lowering/vector_scan.py)
        return [scan_op(dst, e, args[0])]
    if op in SCALAR_LOOP_OPS:  # no AscendC instruction: the emitter writes a scalar loop (lowering/scalar_loops.py)
        return [scalar_loop_op(dst, e, args)]
    if info.api and len(args) == 1:  # unary ops and the vector reductions
        return [v(info.api, args[0])]
    if info.extern:  # a model-written compute stage (lowering/assist/construct.py): dst and the tile sources
        return [v(info.api, *args)]
    raise DslError.at(E.INTERNAL, f"no instruction for op '{op}' (missing legalization?)", span)


def per_row(s: ir.VecOp, buffers: dict[str, ir.Buffer], sink: DiagnosticSink) -> ir.VecOp | ir.PerRow:
    """A row loop's instruction whose tile operands mix whole rows with per-row values or row vectors."""
    if s.api in SCALAR_LOOP_APIS or s.api in SCAN_APIS.values() or s.api.startswith("Reduce") \
            or s.api in ("GatherRows", "GatherElems", "ArgMax", "ArgMin", "ColIndex", "RowIndex", "ColMinusRow",
                         "Scatter", "ScatterAdd", "RowScatterAdd", "RowScatterCopy", "SelectCols", "GatherMiddle"):
        return s  # row by row by construction (scalar loops, reductions per row)
    dst_layout = buffers[s.dst].layout
    tiles = [o for o in s.srcs if isinstance(o, str)]
    if all(buffers[o].layout is dst_layout for o in tiles):
        if s.api in ("Compare", "Compares") and dst_layout is not ir.Layout.ROWS:
            sink.error(E.UNSUPPORTED, "comparisons of per-row values are not supported yet", s.span,
                       "compare whole rows instead")
        return s
    if dst_layout is not ir.Layout.ROWS or s.api not in _PER_ROW_APIS:
        sink.error(E.UNSUPPORTED, f"{s.api} mixing whole rows with per-row values or row vectors is not "
                   "supported yet", s.span)
        return s
    a, b = s.srcs
    cols = [o for o in (a, b) if buffers[o].layout is ir.Layout.COL]
    if not cols:  # a row vector: the same D elements against every row
        return ir.PerRow(None, (s,), s.span)
    col_first = buffers[a].layout is ir.Layout.COL
    x, dtype = (b if col_first else a), buffers[cols[0]].dtype
    v = ir.RowValue(ir.scalar_of(dtype), s.span)

    def op(api: str, *srcs: ir.Operand) -> ir.VecOp:
        return ir.VecOp(api, s.dst, srcs, (), s.span)

    if s.api in _SCALAR_FORM:
        ops = [op(_SCALAR_FORM[s.api], x, v)]
    elif s.api == "Sub":  # v - x as -x + v, so dst may alias x
        ops = ([op("Muls", x, ir.Const(-1.0, v.type, s.span)), op("Adds", s.dst, v)] if col_first
               else [op("Adds", x, ir.Op("neg", (v,), v.type, s.span))])
    elif not col_first:  # Div: x / v as x * (1 / v) (emit/scalar_division.py where 1 / v is not a normal float)
        ops = [op("Muls", x, ir.Op("reciprocal", (v,), v.type, s.span))]
    elif s.dst != x:  # v / x: v spread over the row, then Div (1 / x is inf or subnormal for |x| outside 2^-126..2^126)
        ops = [op("Duplicate", v), op("Div", s.dst, x)]
    else:  # v / x into x's own buffer: v * (1 / x) (see docs/design.md: wrong where 1 / x is not a normal float)
        ops = [op("Reciprocal", x), op("Muls", s.dst, v)]
    return ir.PerRow(cols[0], tuple(ops), s.span)


def _broadcast_rows(vo: ir.VecOp, buffers: dict[str, ir.Buffer]) -> ir.VecOp | ir.PerRow:
    """broadcast_rows (ascend_dsl/parser_broadcast.py): per-row values Duplicated over each row, a row vector
    copied to each row (Muls by 1: exact, keeps -0.0 and NaN); in a chunk pass (flat chunks) the per-row value is
    a scalar and the row vector a chunk of it."""
    (src,) = vo.srcs
    one = ir.Const(1.0, ir.scalar_of(buffers[vo.dst].dtype), vo.span)
    if not isinstance(src, str):
        return replace(vo, api="Duplicate")
    if buffers[src].layout is ir.Layout.COL:
        return ir.PerRow(src, (replace(vo, api="Duplicate", srcs=(ir.RowValue(ir.scalar_of(buffers[src].dtype),
                                                                                vo.span),)),), vo.span)
    if buffers[vo.dst].layout is ir.Layout.ROWS:
        return ir.PerRow(None, (replace(vo, api="Muls", srcs=(src, one)),), vo.span)
    return replace(vo, api="Muls", srcs=(src, one))


def _row_index_period(vo: ir.VecOp, row: tuple[str, ...]) -> ir.VecOp:
    """row_index()'s period is the loop's last row symbol; when that is also the row length (square matrices,
    `[B, S, S]`), it is the loop's row length (the kernel's rowLen_ member holds it)."""
    period, *rest = vo.srcs
    if isinstance(period, ir.Ref) and (period.name,) == row:
        period = ir.RowLength(period.type, period.span)
    return replace(vo, srcs=(period, *rest))


def scalar_form(e: ir.Expr, sink: DiagnosticSink, lift: bool) -> ir.Expr:
    """`e` as the scalar unit computes it: ops it lacks on one element of the vector unit (VectorMath, when
    `lift`); an op with neither form is a located error."""
    if not isinstance(e, ir.Op):
        return e
    e = replace(e, args=tuple(scalar_form(a, sink, lift) for a in e.args))
    info = OPS[e.op]
    if info.scalar_c is not None:
        return e
    if lift and info.vector_math is not None:
        return ir.VectorMath(e.op, e.args, e.type, e.span)
    sink.error(E.UNSUPPORTED, f"scalar expression '{e.op}' cannot be lowered", e.span, "compute it on a tile instead")
    return e


def _steps(plan: ir.ChunkPlan, sink: DiagnosticSink) -> ir.ChunkPlan:
    """The per-row values of a chunked row loop, in scalar form."""
    steps = tuple(replace(st, value=scalar_form(st.value, sink, True)) if isinstance(st, (ir.RowScalar, ir.RowStore))
                  else st for st in plan.steps)
    return replace(plan, steps=steps)


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    sink = DiagnosticSink()

    row_shape: list[tuple[str, ...]] = [()]  # the row of the last row loop (its chunk passes come right after it)

    def body(tl: ir.TileLoop) -> ir.TileLoop:
        if tl.kind is ir.LoopKind.ROWS:
            row_shape[0] = tl.shape.row
        buffers = {b.name: b for b in tl.buffers_decl}
        out: list[ir.Stmt] = []
        for s in tl.body:
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Load):
                out.append(ir.CopyIn(s.name, s.value.tensor, s.value.index, s.span))
            elif isinstance(s, ir.Assign):
                for vo in lower_op(s.name, s.value):
                    vo = replace(vo, span=s.span, srcs=tuple(o if isinstance(o, str) else scalar_form(o, sink, False)
                                                             for o in vo.srcs))
                    if vo.api in ("RowIndex", "ColMinusRow"):
                        vo = _row_index_period(vo, row_shape[0])
                    if vo.api == "BroadcastRows":
                        out.append(_broadcast_rows(vo, buffers))
                        continue
                    out.append(per_row(vo, buffers, sink) if tl.kind is ir.LoopKind.ROWS else vo)
            elif isinstance(s, ir.Store):
                out.append(ir.CopyOut(s.tensor, s.index, s.value.name, s.span))
            else:  # Accumulate, SlotAccumulate: reduced and combined by the emitter (reduce + scalar update)
                out.append(s)
        if tl.kind is ir.LoopKind.ROWS and isinstance(tl.shape.chunked, ir.ChunkPlan):
            tl = replace(tl, shape=replace(tl.shape, chunked=_steps(tl.shape.chunked, sink)))
        return replace(tl, body=tuple(out))

    kernel = map_tile_bodies(kernel, body)
    scope = tuple(replace(s, value=scalar_form(s.value, sink, True))
                  if isinstance(s, (ir.ScalarAssign, ir.ScalarStore)) and not getattr(s, "launch", False)
                  else s for s in kernel.body)  # launch scalars: the host computes them (emit/launch_scalars.py)
    sink.raise_if_any()
    return replace(kernel, body=scope)
