"""Front end for scatters of whole rows along dim 0 (`index_add`, `index_copy`, `index_put` on rows).

    x: Tensor[T, "V, D"], index: Tensor[i64, "N"], src: Tensor[T, "N, D"], y: Tensor[T, "V, D"]
    for blk in split(V, cores=AIV):                 # the destination rows: each core owns its share
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], index_add(load(x[r, :]), index, src, alpha=0.5))

`index_add(rows, index, src, alpha=1)`, `index_copy(rows, index, src)` and `index_put(rows, index, src,
accumulate=False)` are the tile's rows with the rows of `src` whose `index` entry names one of them added
(alpha times) or copied in: torch.index_add / index_copy(x, 0, index, src) and x.index_put((index,), src,
accumulate) for the rows of the tile. `index` ([N], i32/i64) and `src` ([N, *row]) are named, not loaded: the
op reads them whole (the lowering scans the index in order for every tile, lowering/emit/row_scatter.py), so
repeated rows are deterministic (index order: adds in that order; copies keep the last). Numbers outside
[0, V) (index_put: [-V, V), negative ones count from the end) are an INDEX error in the interpreter and stop
the kernel (`AscendC::Trap()`) on the device. IR: the op's operands are (rows, the index tensor's name, the
source's name, V, alpha), the names as string constants (Const, i64 / the rows' dtype) that only this op reads.

Single elements along dim 0 (`element_scatter`): `scatter / scatter_add(load(x[r, :]), index, src)` with index and
src named [N, *row] tensors are torch.scatter / scatter_add(x, 0, index, src): src[i, j] into row index[i, j] at
column j (ops scatter_dim0 / scatter_add_dim0, the same operands with alpha 1). Numbers outside [0, V) (PyTorch
accepts no negative ones here) are an INDEX error in the interpreter and a Trap on the device; repeats apply in
source-row order i (adds in that order; the last copy wins). `scatter(load(x[r, :]), index, value)` with a scalar
value is x.scatter(0, index, value) (the op's source operand is then the scalar, not a name: `named`).
"""

from __future__ import annotations

from lark import Tree

from . import ir
from .diagnostics import ErrorCode as E
from .dtypes import DType

ROW_SCATTER_CALLS = ("index_add", "index_copy", "index_put")


def named(arg: ir.Expr) -> bool:
    """Whether a row scatter's operand is a tensor's name (else scatter's scalar value=, dim 0)."""
    return isinstance(arg, ir.Const) and isinstance(arg.value, str)


def tensor_name(arg: ir.Expr) -> str:
    """The tensor a row scatter's name operand holds."""
    assert isinstance(arg, ir.Const) and isinstance(arg.value, str), arg
    return arg.value


def _flag(b, v, node) -> bool:
    value = v.children[0] if isinstance(v, Tree) and v.data == "name" else None
    if str(value) not in ("True", "False"):
        raise b.err(E.ARGS, "accumulate= takes True or False", node)
    return str(value) == "True"


def row_scatter(b, c, ops) -> ir.Expr:
    """Type `index_add / index_copy / index_put(rows, index, src[, alpha= | accumulate=])` in a row loop."""
    name, pos, kw, e, tile = c.name, c.pos, c.kw, c.node, c.tile
    allowed = {"index_add": {"alpha"}, "index_copy": set(), "index_put": {"accumulate"}}[name]
    if len(pos) != 3 or set(kw) - allowed:
        extra = {"index_add": ", alpha=a", "index_copy": "", "index_put": ", accumulate=True"}[name]
        raise b.err(E.ARGS, f"{name} takes whole rows, an index tensor and a source tensor (by name){extra}", e,
                    f"{name}(load(x[r, :]), index, src{extra})")
    shape = b.scope.tile.shape
    if shape.kind is not ir.LoopKind.ROWS or len(shape.rows) != 1:
        raise b.err(E.UNSUPPORTED, f"{name} runs in a row loop over one symbol (split(V)) of the destination rows", e,
                    "for blk in split(V, cores=AIV): with x and y [V, D]")
    rows = b.expr(pos[0], tile)
    if rows.type.kind is not ir.Kind.TILE or rows.type.layout is not ir.Layout.ROWS:
        raise b.err(E.TYPE, f"{name}'s first argument is whole rows (a value loaded with x[r, :])", pos[0])
    for a, what in ((pos[1], "index"), (pos[2], "source")):
        if not (isinstance(a, Tree) and a.data == "name"):
            raise b.err(E.TYPE, f"{name}'s {what} is a tensor parameter named as is (read whole), not a loaded value",
                        a, f"{name}(load(x[r, :]), index, src)")
    index, src = b.tensor_param(pos[1].children[0]), b.tensor_param(pos[2].children[0])
    if index.dtype not in (DType.I32, DType.I64) or len(index.shape) != 1:
        raise b.err(E.TYPE, f"'{index.name}' must be a 1-D i32 / i64 tensor of row numbers; it is "
                    f"{index.dtype} {list(index.shape)}", pos[1])
    if tuple(map(str, src.shape[1:])) != shape.row or str(src.shape[0]) != str(index.shape[0]):
        raise b.err(E.INDEX, f"'{src.name}' must be [{index.shape[0]}, {', '.join(shape.row)}] (one row per index "
                    f"entry, rows as long as the loop's); it has shape {list(src.shape)}", pos[2])
    if src.dtype is not rows.type.dtype:
        raise b.err(E.DTYPE_MISMATCH, f"{name}: '{src.name}' holds {src.dtype}, the rows {rows.type.dtype}", pos[2])
    op = name
    if name == "index_put":
        op = "index_put_acc" if "accumulate" in kw and _flag(b, kw["accumulate"], kw["accumulate"]) else "index_put"
    if rows.type.dtype not in ops[op].dtypes:
        raise b.err(E.DTYPE_UNSUPPORTED, f"{name} does not support {rows.type.dtype}", pos[0],
                    f"supported: {', '.join(sorted(map(str, ops[op].dtypes)))}")
    span = b.o.span(e)
    alpha = ir.Const(1, ir.scalar_of(rows.type.dtype), span)
    if "alpha" in kw:
        alpha = b.expr(kw["alpha"], tile)
        if alpha.type.kind is not ir.Kind.SCALAR:
            raise b.err(E.TYPE, "alpha= is a scalar", kw["alpha"])
        alpha = b.unify([rows, alpha], e, None)[1]
    v = shape.rows[0]
    v_value = ir.Const(int(v), ir.scalar_of(DType.I32), span) if v.isdigit() else ir.Ref(v, ir.scalar_of(DType.I32), span)
    names = (ir.Const(index.name, ir.scalar_of(index.dtype), b.o.span(pos[1])),
             ir.Const(src.name, ir.scalar_of(src.dtype), b.o.span(pos[2])))
    return ir.Op(op, (rows, *names, v_value, alpha), ir.tile_of(rows.type.dtype, ir.Layout.ROWS), span)


def element_scatter(b, c, ops) -> ir.Expr:
    """Type `scatter / scatter_add(rows, index, src)` with index and src named [N, *row] tensors (dim 0)."""
    name, pos, kw, e, tile = c.name, c.pos, c.kw, c.node, c.tile
    form = f"{name}(load(x[r, :]), index, src)"
    if len(pos) != 3 or kw:
        raise b.err(E.ARGS, f"{name} along dim 0 takes whole rows, an index tensor and a source tensor (by name)", e,
                    form)
    shape = b.scope.tile.shape
    if shape.kind is not ir.LoopKind.ROWS or len(shape.rows) != 1:
        raise b.err(E.UNSUPPORTED, f"{name} along dim 0 runs in a row loop over one symbol (split(V)) of the "
                    "destination rows", e, "for blk in split(V, cores=AIV): with x and y [V, D]")
    rows = b.expr(pos[0], tile)
    if rows.type.kind is not ir.Kind.TILE or rows.type.layout is not ir.Layout.ROWS:
        raise b.err(E.TYPE, f"{name}'s first argument is whole rows (a value loaded with x[r, :])", pos[0])
    value = None
    if not (isinstance(pos[2], Tree) and pos[2].data == "name"
            and isinstance(b.scope.params.get(str(pos[2].children[0])), ir.TensorParam)):
        value = b.expr(pos[2], tile) if name == "scatter" else None
        if value is None or value.type.kind is not ir.Kind.SCALAR:
            raise b.err(E.TYPE, f"with an index tensor named as is (dim 0), {name}'s source is a tensor named as is "
                        "too" + (" or a scalar (scatter's value=)" if name == "scatter" else ""), pos[2], form)
    index = b.tensor_param(pos[1].children[0])
    src = index if value is not None else b.tensor_param(pos[2].children[0])
    want = [index.shape[0] if index.shape else "N", *shape.row]
    if index.dtype not in (DType.I32, DType.I64) or tuple(map(str, index.shape[1:])) != shape.row \
            or not isinstance(index.shape[0], str):
        raise b.err(E.TYPE, f"'{index.name}' must be an i32 / i64 tensor [{', '.join(map(str, want))}] of row numbers "
                    f"(rows as long as the loop's); it is {index.dtype} {list(index.shape)}", pos[1])
    if list(map(str, src.shape)) != list(map(str, index.shape)):
        raise b.err(E.INDEX, f"'{src.name}' must have the index's shape {list(index.shape)} (one value per index "
                    f"entry); it has {list(src.shape)}", pos[2])
    if value is None and src.dtype is not rows.type.dtype:
        raise b.err(E.DTYPE_MISMATCH, f"{name}: '{src.name}' holds {src.dtype}, the rows {rows.type.dtype}", pos[2])
    op = f"{name}_dim0"
    if rows.type.dtype not in ops[op].dtypes:
        raise b.err(E.DTYPE_UNSUPPORTED, f"{name} does not support {rows.type.dtype}", pos[0],
                    f"supported: {', '.join(sorted(map(str, ops[op].dtypes)))}")
    span = b.o.span(e)
    v = shape.rows[0]
    v_value = ir.Const(int(v), ir.scalar_of(DType.I32), span) if v.isdigit() else ir.Ref(v, ir.scalar_of(DType.I32), span)
    names = (ir.Const(index.name, ir.scalar_of(index.dtype), b.o.span(pos[1])),
             ir.Const(src.name, ir.scalar_of(src.dtype), b.o.span(pos[2])) if value is None
             else b.unify([rows, value], e, None)[1])
    return ir.Op(op, (rows, *names, v_value, ir.Const(1, ir.scalar_of(rows.type.dtype), span)),
                 ir.tile_of(rows.type.dtype, ir.Layout.ROWS), span)
