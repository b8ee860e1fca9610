"""Front end for index_select along the last dim with any number of indices: `index_select(x, load(idx[:]))`.

    x: Tensor[T, "B, D"], idx: Tensor[i64, "K"], y: Tensor[T, "B, K"]
    for blk in split(B, cores=AIV):                  # the output rows: rows of K
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], index_select(x, load(idx[:])))     # y[b, k] = x[b, idx[k]]

The loop's rows are the output's (length K); `x` is named, not loaded: a tensor over the loop's row symbols whose
rows (length D, any) the op reads whole from GM, so its row length need not be the loop's (row_shape_for leaves
the tensors `selected_tables` names out). The index is a row vector of the loop's length (`load(idx[:])`, i32 /
i64). Numbers in [0, D) (PyTorch's index_select rejects negative ones); others are an INDEX error in the
interpreter and stop the kernel on the device (Trap). IR: op `index_select_cols` (index row, x's name as a string
Const, D); lowering: lowering/emit/col_select.py.

`gather(x, load(idx[r, :]))` with x named [rows.., D] and idx [rows.., K] (the loop's rows, K any: narrower or wider
than D) is torch.gather(x, -1, idx): y[g, k] = x[g, idx[g, k]] (`_gather_last`; the same op index_select_cols, with
whole rows of indices instead of one row vector); numbers in [0, D) (PyTorch's gather rejects negative ones).
Chosen over the middle-dim form below when the loop splits one symbol, or when x's last dim is not the loop's.

`gather(x, load(idx[r, :]))` with x named ([A.., R, C]) under a split over (A.., K) of y and idx [A.., K, C] is
torch.gather(x, dim, idx) along the middle dim: y[a, k, c] = x[a, idx[a, k, c], c] (`gather_named`; op
`gather_middle` (index rows, x's name, R, K)); numbers in [0, R) (PyTorch's gather rejects negative ones).
"""

from __future__ import annotations

from lark import Tree

from . import ir
from .diagnostics import ErrorCode as E
from .dtypes import DType

CALL = "index_select"


def selected_tables(node) -> set[str]:
    """The tensors a loop names as index_select's / gather's first argument (read whole: not row tensors of the loop)."""
    out = set()
    for t in node.iter_subtrees() if isinstance(node, Tree) else ():
        if t.data == "call" and str(t.children[0]) in (CALL, "gather") and len(t.children) > 1:
            first = t.children[1]
            if isinstance(first, Tree) and first.data == "name":
                out.add(str(first.children[0]))
    return out


def index_select(b, c, ops) -> ir.Expr:
    """Type `index_select(x, load(idx[:]))` in a row loop: row b of the result holds x[b, idx[k]] for k < K."""
    pos, kw, e, tile = c.pos, c.kw, c.node, c.tile
    form = "index_select(x, load(idx[:]))"
    if len(pos) != 2 or kw:
        raise b.err(E.ARGS, "index_select takes a tensor (by name) and a row of column indices", e, form)
    shape = b.scope.tile.shape
    if shape.kind is not ir.LoopKind.ROWS:
        raise b.err(E.UNSUPPORTED, "index_select runs in a row loop over the output rows", e,
                    "for blk in split(B, cores=AIV): with x [B, D] and y [B, K]")
    if not (isinstance(pos[0], Tree) and pos[0].data == "name"):
        raise b.err(E.TYPE, "index_select's first argument is a tensor parameter named as is (read whole)", pos[0], form)
    x = b.tensor_param(pos[0].children[0])
    n = len(shape.rows)
    if tuple(map(str, x.shape[:n])) != shape.rows or len(x.shape) != n + 1 or not isinstance(x.shape[n], str):
        raise b.err(E.INDEX, f"index_select picks columns of a tensor [{', '.join(shape.rows)}, D] (the loop's rows, "
                    f"any row length); '{x.name}' has shape {list(x.shape)}", pos[0])
    index = b.expr(pos[1], tile)
    if index.type.kind is not ir.Kind.TILE or index.type.layout is not ir.Layout.ROW \
            or index.type.dtype not in (DType.I32, DType.I64):
        raise b.err(E.TYPE, "index_select's index is one i32 / i64 row as long as the loop's rows (load(idx[:]) of "
                    f"a [{', '.join(shape.row)}] tensor)", pos[1], form)
    if x.dtype not in ops["index_select_cols"].dtypes:
        raise b.err(E.DTYPE_UNSUPPORTED, f"index_select does not support {x.dtype}", pos[0])
    return _select_cols(b, e, x, n, index, pos)


def gather_named(b, c, ops) -> ir.Expr:
    """Type `gather(x, load(idx[r, :]))` with x a named [A.., R, *row] tensor: per element along its middle dim."""
    pos, e, tile = c.pos, c.node, c.tile
    shape = b.scope.tile.shape
    form = "gather(x, load(idx[r, :]))"
    x = b.tensor_param(pos[0].children[0])
    n = len(shape.rows)
    if shape.kind is ir.LoopKind.ROWS and len(shape.row) == 1 and len(x.shape) == n + 1 \
            and tuple(map(str, x.shape[:n])) == shape.rows and (n == 1 or str(x.shape[n]) != shape.row[0]):
        return _gather_last(b, c, ops, x)
    if shape.kind is not ir.LoopKind.ROWS or len(shape.rows) < 2:
        raise b.err(E.UNSUPPORTED, "gather from a named tensor (along a middle dim) runs in a row loop over the "
                    "output's rows (a split over two or more symbols: split(A * K))", e,
                    "y[A, K, C] = torch.gather(x[A, R, C], 1, idx[A, K, C]): for blk in split(A * K, cores=AIV)")
    lead = shape.rows[:-1]
    if len(x.shape) != len(shape.rows) + len(shape.row) or tuple(map(str, x.shape[:len(lead)])) != lead \
            or tuple(map(str, x.shape[len(shape.rows):])) != shape.row or not isinstance(x.shape[len(lead)], str):
        raise b.err(E.INDEX, f"gather along a middle dim reads a tensor [{', '.join(lead)}, R, {', '.join(shape.row)}]; "
                    f"'{x.name}' has shape {list(x.shape)}", pos[0])
    index = b.expr(pos[1], tile)
    if index.type.kind is not ir.Kind.TILE or index.type.layout is not ir.Layout.ROWS \
            or index.type.dtype not in (DType.I32, DType.I64):
        raise b.err(E.TYPE, "gather's index along a middle dim is i32 / i64 whole rows of the loop (load(idx[r, :]) "
                    f"of a [{', '.join(shape.rows)}, {', '.join(shape.row)}] tensor)", pos[1], form)
    if x.dtype not in ops["gather_middle"].dtypes:
        raise b.err(E.DTYPE_UNSUPPORTED, f"gather does not support {x.dtype}", pos[0])
    span = b.o.span(e)

    def size(d: str) -> ir.Expr:
        return ir.Const(int(d), ir.scalar_of(DType.I32), span) if d.isdigit() else ir.Ref(d, ir.scalar_of(DType.I32), span)

    return ir.Op("gather_middle", (index, ir.Const(x.name, ir.scalar_of(x.dtype), b.o.span(pos[0])),
                                   size(str(x.shape[len(lead)])), size(shape.rows[-1])),
                 ir.tile_of(x.dtype, ir.Layout.ROWS), span)


def _gather_last(b, c, ops, x) -> ir.Expr:
    """Type `gather(x, load(idx[r, :]))` with x [rows.., D] named and idx [rows.., K] (K any): torch.gather(x, -1,
    idx), y[g, k] = x[g, idx[g, k]]. Op index_select_cols with whole rows of indices (one index row per output row)."""
    pos, e, tile = c.pos, c.node, c.tile
    shape, n = b.scope.tile.shape, len(b.scope.tile.shape.rows)
    index = b.expr(pos[1], tile)
    if index.type.kind is not ir.Kind.TILE or index.type.layout is not ir.Layout.ROWS \
            or index.type.dtype not in (DType.I32, DType.I64):
        raise b.err(E.TYPE, "gather's index along the last dim of a named tensor is i32 / i64 whole rows of the loop "
                    f"(load(idx[r, :]) of a [{', '.join(shape.rows)}, {shape.row[0]}] tensor)", pos[1],
                    "gather(x, load(idx[r, :]))")
    if x.dtype not in ops["index_select_cols"].dtypes:
        raise b.err(E.DTYPE_UNSUPPORTED, f"gather does not support {x.dtype}", pos[0])
    return _select_cols(b, e, x, n, index, pos)


def _select_cols(b, e, x, n: int, index: ir.Expr, pos) -> ir.Op:
    """`index_select_cols` of x's dim n (its length a constant or a shape symbol) by `index`."""
    span = b.o.span(e)
    d = str(x.shape[n])
    cols = ir.Const(int(d), ir.scalar_of(DType.I32), span) if d.isdigit() else ir.Ref(d, ir.scalar_of(DType.I32), span)
    return ir.Op("index_select_cols", (index, ir.Const(x.name, ir.scalar_of(x.dtype), b.o.span(pos[0])), cols),
                 ir.tile_of(x.dtype, ir.Layout.ROWS), span)
