"""The DSL's built-in calls, in one table: `INTRINSICS[name](builder, call)` types a call of `name`.

A call in an expression goes to its entry here when there is one, else to the op registry (ops.py:
element-wise ops). An entry returns the typed expression, or None to leave the call to the op registry
(`max(a, b)` without axis= is the element-wise op). Front-end plug-ins add theirs with @intrinsic
(parser_cube: matmul). Entries read the builder's scope (`b.scope`) and report errors with `b.err`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lark import Tree

from . import ir
from .diagnostics import ErrorCode as E
from .dtypes import DType
from .ops import OPS, POOLS, REDUCTIONS, RESIZE_ALIGNED, RESIZE_CALLS, SCANS, scan_op
from .parser_box import box_reduction
from .parser_grid import grid_sample
from .parser_scatter import ROW_SCATTER_CALLS, element_scatter, row_scatter
from .parser_select import gather_named, index_select


@dataclass(frozen=True)
class Call:
    name: str
    pos: list
    kw: dict
    node: Tree
    tile: str  # the tile loop variable ("" at kernel scope)


INTRINSICS: dict[str, Callable[[object, Call], ir.Expr | None]] = {}


def intrinsic(*names: str):
    """Register a function as the typing of calls of `names`."""
    def register(fn):
        INTRINSICS.update(dict.fromkeys(names, fn))
        return fn
    return register


@intrinsic("load")
def _load(b, c: Call) -> ir.Expr:
    if len(c.pos) != 1 or c.kw:
        raise b.err(E.ARGS, "load takes one tensor slice", c.node, "load(x[t])")
    if not c.tile and b.scope.tile.cube is None:  # kernel scope: no tile to index
        raise b.err(E.INDEX, "outside the split loops, a load is a statement of its own: s = load(x[0])",
                    c.node, "name the element, then use the name in expressions")
    tensor, index, layout = b.slice_of(c.pos[0], c.tile)
    return ir.Load(tensor, index, ir.tile_of(b.scope.params[tensor].dtype, layout), b.o.span(c.node))


@intrinsic("store", "split", "tile")
def _statement(b, c: Call) -> ir.Expr:
    raise b.err(E.KERNEL_STRUCTURE, f"{c.name}(...) cannot be used inside an expression", c.node)


@intrinsic("cast")
def _cast(b, c: Call) -> ir.Expr:
    pos, e = c.pos, c.node
    if c.kw:
        raise b.err(E.ARGS, "cast() takes no keyword arguments", e)
    if len(pos) != 2:
        raise b.err(E.ARGS, "cast takes a value and a dtype", e, "cast(x, f16)")
    target = pos[1]
    if not (isinstance(target, Tree) and target.data == "name"):
        raise b.err(E.ARGS, "cast's second argument is a dtype name", target)
    value = b.expr(pos[0], c.tile)
    dt = b.dtype(target.children[0])
    b.no_planes([value], e)
    if value.type.dtype is DType.BOOL:
        raise b.err(E.TYPE, "cannot cast a mask", pos[0], "use select(mask, 1.0, 0.0)")
    if isinstance(value, ir.Const):
        return ir.Const(value.value, ir.scalar_of(dt), value.span)
    if b.scope.tile.shape.kind is ir.LoopKind.BOX and value.type.dtype is dt:
        return value  # box loops drop identity casts (e.g. cast(x, f32) with T=f32)
    return ir.Op("cast", (value,), ir.ValType(value.type.kind, dt, value.type.layout), b.o.span(e))


@intrinsic(*REDUCTIONS)
def _reduction(b, c: Call) -> ir.Expr | None:
    """sum / mean / max / min / prod(v, axis=...); max and min without axis= are element-wise ops."""
    if "axis" in c.kw:
        return _axis_reduction(b, c)
    if c.kw:
        raise b.err(E.ARGS, f"{c.name}() takes no keyword arguments", c.node)
    if c.name in ("sum", "mean", "prod"):
        raise b.err(E.ARGS, f"{c.name}() needs axis=1: {c.name}(v, axis=1)", c.node)
    return None


def _axis_reduction(b, c: Call) -> ir.Expr:
    name, pos, kw, e, tile = c.name, c.pos, c.kw, c.node, c.tile
    if len(pos) != 1 or set(kw) != {"axis"}:
        raise b.err(E.ARGS, f"{name}(v, axis=1) takes one value and axis=", e)
    axis = kw["axis"]
    v = b.expr(pos[0], tile)
    if v.type.kind is ir.Kind.TILE and v.type.layout is ir.Layout.BOX:
        if v.type.dtype not in OPS[REDUCTIONS[name]].dtypes:
            raise b.err(E.DTYPE_UNSUPPORTED, f"'{name}' does not support {v.type.dtype}", e)
        return box_reduction(b, name, REDUCTIONS[name], v, axis, b.o.span(e))
    if b.axis_value(axis) not in (1, -1):
        raise b.err(E.UNSUPPORTED, "reductions run over the last axis of a row tile: axis=1", axis)
    if v.type.kind is not ir.Kind.TILE or v.type.layout is not ir.Layout.ROWS:
        raise b.err(E.TYPE, f"{name}(v, axis=1) needs whole rows (a value loaded with x[r, :])", pos[0],
                    "split the rows of a 2-D tensor: for blk in split(B, cores=AIV)")
    op = REDUCTIONS[name]
    if v.type.dtype not in OPS[op].dtypes:
        raise b.err(E.DTYPE_UNSUPPORTED, f"'{name}' does not support {v.type.dtype}", e)
    if v.type.dtype is DType.I32:  # boxes fold with Add / Max / Min, which take int32; rows need ReduceSum & co.
        raise b.err(E.DTYPE_UNSUPPORTED, f"'{name}(v, axis=1)' over i32 rows is not supported: AscendC's ReduceSum / "
                    "ReduceMax / ReduceMin take half and float only (A2)", e,
                    f"{name}(cast(v, f32), axis=1) is exact while the values and sums stay below 2^24")
    return ir.Op(op, (v,), ir.tile_of(v.type.dtype, ir.Layout.COL), b.o.span(e))


@intrinsic("gather")
def _gather(b, c: Call) -> ir.Expr:
    pos, kw, e, tile = c.pos, c.kw, c.node, c.tile
    if len(pos) == 2 and not kw and isinstance(pos[0], Tree) and pos[0].data == "name" \
            and isinstance(b.scope.params.get(str(pos[0].children[0])), ir.TensorParam):
        return gather_named(b, c, OPS)  # a named table: along its middle dim (ascend_dsl/parser_select.py)
    if len(pos) != 2 or kw:
        raise b.err(E.ARGS, "gather takes whole rows and a per-row column index", e, "gather(xt, load(idx[r]))")
    rows, index = b.expr(pos[0], tile), b.expr(pos[1], tile)
    if rows.type.kind is not ir.Kind.TILE or rows.type.layout is not ir.Layout.ROWS:
        raise b.err(E.TYPE, "gather's first argument is whole rows (a value loaded with x[r, :])", pos[0])
    if index.type.kind is not ir.Kind.TILE or index.type.layout not in (ir.Layout.COL, ir.Layout.ROWS, ir.Layout.ROW) \
            or index.type.dtype not in (DType.I32, DType.I64):
        raise b.err(E.TYPE, "gather's index is i32 or i64: one column per row (loaded with idx[r]), one per element "
                    "(whole rows, loaded with idx[r, :]) or the same columns for every row (idx[:] of a [D] tensor)",
                    pos[1])
    if rows.type.dtype not in OPS["gather"].dtypes:
        raise b.err(E.DTYPE_UNSUPPORTED, f"gather does not support {rows.type.dtype}", pos[0])
    # whole rows of indices: torch.gather(x, 1, idx) with idx shaped like x (lowering: Gather per row in UB); a row
    # vector of indices: the same columns of every row (index_select(x, -1, idx) with idx as long as the rows)
    layout = ir.Layout.ROWS if index.type.layout is ir.Layout.ROW else index.type.layout
    return ir.Op("gather", (rows, index), ir.tile_of(rows.type.dtype, layout), b.o.span(e))


@intrinsic("scatter", "scatter_add")
def _scatter(b, c: Call) -> ir.Expr:
    """scatter / scatter_add(rows, idx, src) along the last axis of whole rows (torch.scatter(x, 1, idx, src)): idx
    whole i32/i64 rows (load(idx[r, :])) or one row for every row (load(idx[:]): index_copy / index_add along
    the last dim); src whole rows or a scalar (scatter's value=)."""
    pos, kw, e, tile, name = c.pos, c.kw, c.node, c.tile, c.name
    if len(pos) == 3 and isinstance(pos[1], Tree) and pos[1].data == "name" \
            and isinstance(b.scope.params.get(str(pos[1].children[0])), ir.TensorParam):
        return element_scatter(b, c, OPS)  # along dim 0: index and src named (ascend_dsl/parser_scatter.py)
    if len(pos) != 3 or kw:
        raise b.err(E.ARGS, f"{name} takes whole rows, their column indices and the source", e,
                    f"{name}(load(x[r, :]), load(idx[r, :]), load(src[r, :]))")
    rows, index, src = (b.expr(a, tile) for a in pos)
    if rows.type.kind is not ir.Kind.TILE or rows.type.layout is not ir.Layout.ROWS:
        raise b.err(E.TYPE, f"{name}'s first argument is whole rows (a value loaded with x[r, :])", pos[0])
    if index.type.kind is not ir.Kind.TILE or index.type.layout not in (ir.Layout.ROWS, ir.Layout.ROW) \
            or index.type.dtype not in (DType.I32, DType.I64):
        raise b.err(E.TYPE, f"{name}'s index is i32 or i64 whole rows shaped like the rows (loaded with idx[r, :]) or "
                    "one row for all rows (loaded with idx[:])", pos[1],
                    "indices along dim 0 (index_add / index_copy on rows) are not supported")
    if src.type.kind is ir.Kind.TILE and src.type.layout is not ir.Layout.ROWS:
        raise b.err(E.TYPE, f"{name}'s source is whole rows shaped like the rows (loaded with src[r, :]) or a scalar",
                    pos[2])
    if rows.type.dtype not in OPS[name].dtypes:
        raise b.err(E.DTYPE_UNSUPPORTED, f"{name} does not support {rows.type.dtype}", pos[0],
                    f"supported: {', '.join(sorted(map(str, OPS[name].dtypes)))}")
    if src.type.kind is ir.Kind.TILE and src.type.dtype is not rows.type.dtype:
        raise b.err(E.DTYPE_MISMATCH, f"{name}: the source holds {src.type.dtype}, the rows {rows.type.dtype}", pos[2],
                    f"cast(v, {rows.type.dtype})")
    if src.type.kind is ir.Kind.SCALAR:
        src = b.unify([rows, src], e, None)[1]
    return ir.Op(name, (rows, index, src), ir.tile_of(rows.type.dtype, ir.Layout.ROWS), b.o.span(e))


@intrinsic("grid_sample")
def _grid_sample(b, c: Call) -> ir.Expr:
    """grid_sample(plane, grid, mode=, padding_mode=, align_corners=) (ascend_dsl/parser_grid.py)."""
    return grid_sample(b, c)


@intrinsic(*ROW_SCATTER_CALLS)
def _row_scatter(b, c: Call) -> ir.Expr:
    """index_add / index_copy / index_put(rows, index, src) along dim 0 (ascend_dsl/parser_scatter.py)."""
    return row_scatter(b, c, OPS)


@intrinsic("index_select")
def _index_select(b, c: Call) -> ir.Expr:
    """index_select(x, load(idx[:])) along the last dim, K indices (ascend_dsl/parser_select.py)."""
    return index_select(b, c, OPS)


@intrinsic("argmax", "argmin")
def _arg_reduce(b, c: Call) -> ir.Expr:
    """argmax / argmin(v, axis=1): per row of whole rows, the column (i64) of the first max / min, as PyTorch."""
    if len(c.pos) != 1 or set(c.kw) != {"axis"}:
        raise b.err(E.ARGS, f"{c.name}(v, axis=1) takes one value and axis=", c.node, f"{c.name}(xt, axis=1)")
    if b.axis_value(c.kw["axis"]) not in (1, -1):
        raise b.err(E.UNSUPPORTED, f"{c.name} runs over the last axis of a row tile: axis=1", c.kw["axis"],
                    "make the reduced dim the last one of the tensor's declaration")
    if b.scope.tile.cube is not None:
        raise b.err(E.UNSUPPORTED, f"{c.name} is not supported in a matmul epilogue", c.node,
                    "store the result, then take its argmax in a second kernel")
    v = b.expr(c.pos[0], c.tile)
    if v.type.kind is not ir.Kind.TILE or v.type.layout is not ir.Layout.ROWS:
        raise b.err(E.TYPE, f"{c.name}(v, axis=1) needs whole rows (a value loaded with x[r, :])", c.pos[0],
                    "split the rows of a 2-D tensor: for blk in split(B, cores=AIV)")
    if v.type.dtype not in OPS[c.name].dtypes:
        raise b.err(E.DTYPE_UNSUPPORTED, f"'{c.name}' does not support {v.type.dtype}", c.pos[0],
                    f"supported: {', '.join(sorted(map(str, OPS[c.name].dtypes)))}; cast first")
    return ir.Op(c.name, (v,), ir.tile_of(DType.I64, ir.Layout.COL), b.o.span(c.node))


def _symbol_value(name: str, span) -> ir.Expr:
    """A shape dim as a scalar operand: a symbol's runtime value (i32), or a literal dim."""
    if name.isdigit():
        return ir.Const(int(name), ir.scalar_of(DType.I32), span)
    return ir.Ref(name, ir.scalar_of(DType.I32), span)


@intrinsic("col_index", "row_index")
def _position(b, c: Call) -> ir.Expr:
    """col_index() / row_index() in a row loop: whole i32 rows holding each element's column, or its row's index
    along the rows' last dim (the loop's last split symbol), as torch.arange builds them for tril / triu masks."""
    if c.pos or c.kw:
        raise b.err(E.ARGS, f"{c.name}() takes no arguments", c.node, f"{c.name}()")
    rows = b.scope.tile.shape
    if rows.kind is not ir.LoopKind.ROWS:  # (in a cube epilogue: the flash-attention form only, plan_cube says)
        raise b.err(E.UNSUPPORTED, f"{c.name}() is a position inside whole rows: it needs a row loop (a split over "
                    "the rows of 2-D or higher tensors)", c.node,
                    "for blk in split(B, cores=AIV): for r in tile(blk, size=auto): ... select(col_index() <= "
                    "row_index(), load(x[r, :]), 0.0)")
    span = b.o.span(c.node)
    length = _symbol_value(rows.row[0], span)
    for d in rows.row[1:]:
        length = ir.Op("mul", (length, _symbol_value(d, span)), ir.scalar_of(DType.I32), span)
    args = (length,) if c.name == "col_index" else (_symbol_value(rows.rows[-1], span), length)
    return ir.Op(c.name, args, ir.tile_of(DType.I32, ir.Layout.ROWS), span)


def _flag(b, v, node) -> bool:
    if isinstance(v, Tree) and v.data == "name" and str(v.children[0]) in ("True", "False"):
        return str(v.children[0]) == "True"
    raise b.err(E.ARGS, "expected True or False", v, "e.g. cumsum(v, axis=1, reverse=True)")


@intrinsic(*SCANS)
def _scan(b, c: Call) -> ir.Expr:
    """cumsum / cumprod(v, axis=1[, reverse=True][, exclusive=True]) along each row of a row tile."""
    name, pos, kw, e, tile = c.name, c.pos, c.kw, c.node, c.tile
    if len(pos) != 1 or "axis" not in kw or set(kw) - {"axis", "reverse", "exclusive"}:
        raise b.err(E.ARGS, f"{name}(v, axis=1) takes one value, axis= and optionally reverse=, exclusive=", e,
                    f"{name}(v, axis=1, reverse=False, exclusive=False)")
    if b.axis_value(kw["axis"]) not in (1, -1):
        raise b.err(E.UNSUPPORTED, "scans run along the last axis of a row tile: axis=1", kw["axis"])
    reverse = _flag(b, kw["reverse"], e) if "reverse" in kw else False
    exclusive = _flag(b, kw["exclusive"], e) if "exclusive" in kw else False
    v = b.expr(pos[0], tile)
    if v.type.kind is not ir.Kind.TILE or v.type.layout is not ir.Layout.ROWS:
        raise b.err(E.TYPE, f"{name}(v, axis=1) needs whole rows (a value loaded with x[r, :])", pos[0],
                    "split the rows of a 2-D tensor: for blk in split(B, cores=AIV)")
    op = scan_op(name, reverse, exclusive)
    if v.type.dtype not in OPS[op].dtypes:
        raise b.err(E.DTYPE_UNSUPPORTED, f"'{name}' does not support {v.type.dtype}", e,
                    f"supported: {', '.join(sorted(map(str, OPS[op].dtypes)))}; cast first")
    return ir.Op(op, (v,), v.type, b.o.span(e))


def _pool_param(b, v, what: str, tile: str) -> ir.Expr:
    """kernel= / stride= / padding=: an integer literal or an integer scalar parameter."""
    x = b.expr(v, tile)
    if isinstance(x, ir.Const) and float(x.value).is_integer():
        return ir.Const(int(x.value), ir.scalar_of(DType.I32), x.span)
    if isinstance(x, ir.Ref) and x.type.kind is ir.Kind.SCALAR and not x.type.dtype.is_float:
        return x
    raise b.err(E.TYPE, f"{what}= takes an integer literal or an integer scalar parameter", v,
                   f"declare it as a kernel parameter, e.g. {what}: i32 = 2")


@intrinsic(*POOLS)
def _pool(b, c: Call) -> ir.Expr:
    """max_pool / avg_pool(plane, kernel=K, stride=S, padding=P[, dilation=D]) over a plane tile's spatial dims."""
    name, pos, kw, e, tile = c.name, c.pos, c.kw, c.node, c.tile
    allowed = {"kernel", "stride", "padding"} | ({"dilation"} if name == "max_pool" else set())
    if len(pos) != 1 or "kernel" not in kw or set(kw) - allowed:
        raise b.err(E.ARGS, f"{name} takes one loaded plane and kernel=, optionally "
                    f"{', '.join(f'{a}=' for a in sorted(allowed - {'kernel'}))}", e,
                    f"{name}(xt, kernel=kernel_size, stride=stride, padding=padding)"
                    + ("" if name == "max_pool" else "; avg_pool has no dilation (PyTorch neither)"))
    v = b.expr(pos[0], tile)
    if v.type.kind is not ir.Kind.TILE or v.type.layout is not ir.Layout.PLANE:
        raise b.err(E.TYPE, f"{name} needs a loaded plane (load(x[p]) of a [N, C, ...] tensor in a loop over "
                    "split(N * C))", pos[0], "for blk in split(N * C, cores=AIV): for p in tile(blk): "
                    "xt = load(x[p])")
    kernel = _pool_param(b, kw["kernel"], "kernel", tile)
    stride = _pool_param(b, kw["stride"], "stride", tile) if "stride" in kw else kernel  # PyTorch default
    padding = _pool_param(b, kw["padding"], "padding", tile) if "padding" in kw else \
        ir.Const(0, ir.scalar_of(DType.I32), b.o.span(e))
    dilation = _pool_param(b, kw["dilation"], "dilation", tile) if "dilation" in kw else \
        ir.Const(1, ir.scalar_of(DType.I32), b.o.span(e))
    if v.type.dtype not in OPS[name].dtypes:
        raise b.err(E.DTYPE_UNSUPPORTED, f"'{name}' does not support {v.type.dtype}", e,
                    f"supported: {', '.join(sorted(map(str, OPS[name].dtypes)))}")
    return ir.Op(name, (v, kernel, stride, padding, dilation), ir.tile_of(v.type.dtype, ir.Layout.POOLED),
                 b.o.span(e))



@intrinsic(*RESIZE_CALLS)
def _resize(b, c: Call) -> ir.Expr:
    """resize_nearest / resize_nearest_exact / resize_linear / resize_cubic(plane[, align_corners=True]): the plane
    resampled to the spatial size of the tensor it is stored into (F.interpolate(x, size=y.shape[2:], mode=...))."""
    name, pos, kw, e, tile = c.name, c.pos, c.kw, c.node, c.tile
    allowed = {"align_corners", "antialias"} if name in RESIZE_ALIGNED else set()
    if "antialias" in kw and name not in RESIZE_ALIGNED:
        raise b.err(E.ARGS, f"{name} has no antialias= (PyTorch's antialias=True is for bilinear and bicubic)",
                    kw["antialias"], "resize_linear(load(x[p]), antialias=True)")
    if len(pos) != 1 or set(kw) - allowed:
        raise b.err(E.ARGS, f"{name} takes one loaded plane" + (", optionally align_corners=True, antialias=True"
                                                                if allowed else ""),
                    e, f"store(y[p], {name}(load(x[p])))")
    v = b.expr(pos[0], tile)
    if v.type.kind is not ir.Kind.TILE or v.type.layout is not ir.Layout.PLANE:
        raise b.err(E.TYPE, f"{name} needs a loaded plane (load(x[p]) of a [N, C, ...] tensor in a loop over "
                    "split(N * C))", pos[0], "for blk in split(N * C, cores=AIV): for p in tile(blk): "
                    f"store(y[p], {name}(load(x[p])))")
    rank = b.scope.tile.shape.rank
    if name == "resize_cubic" and rank != 2:
        raise b.err(E.UNSUPPORTED, f"resize_cubic resamples 2 spatial dims (PyTorch's bicubic); this plane has {rank}",
                    e, "resize_linear(load(x[p])) resamples 1 to 3 spatial dims (linear, trilinear)")
    op = RESIZE_ALIGNED[name] if "align_corners" in kw and _flag(b, kw["align_corners"], e) else name
    if "antialias" in kw and _flag(b, kw["antialias"], e):
        if rank != 2:
            raise b.err(E.UNSUPPORTED, f"antialias=True resamples 2 spatial dims (as PyTorch); this plane has {rank}",
                        kw["antialias"], f"{name}(load(x[p])) without antialias")
        op = f"{name}_aa" + ("_ac" if op.endswith("_ac") else "")
    if v.type.dtype not in OPS[op].dtypes:
        raise b.err(E.DTYPE_UNSUPPORTED, f"'{name}' does not support {v.type.dtype}", e,
                    f"supported: {', '.join(sorted(map(str, OPS[op].dtypes)))}")
    return ir.Op(op, (v,), ir.tile_of(v.type.dtype, ir.Layout.POOLED), b.o.span(e))
