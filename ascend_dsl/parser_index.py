"""Front end for reading rows chosen by an index tensor (a row gather: embedding, index_select on dim 0).

    idx: Tensor[i64, "N"], w: Tensor[T, "V, D"], y: Tensor[T, "N, D"]
    for blk in split(N, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], load(w[idx[r], :]))     # row i of the tile is row idx[i] of w

Inside a row loop over `split(N)`, `w[idx[r], :]` names whole rows of `w` (`[V, *row]`, the loop's row
shape) at the row numbers that `idx` (an `i32`/`i64` tensor over the loop's rows, as `load(idx[r])`
reads) holds. The value is ordinary whole rows (Layout.ROWS). Negative numbers count from the end
(`w[idx]` in PyTorch); numbers outside [-V, V) are out of range: the interpreter reports them
(`INDEX`), the emulator reports the copy outside `w` (`GM-OOB`), and on hardware the result is
undefined. With a split over several row symbols (A * K), a table [A, R, *row] is gathered along its middle dim:
idx [A, K] picks per row (take_along_dim with an [A, K, 1] index), idx [K] the same R-rows for every a
(index_select(x, 1, idx)); numbers in [-R, R). Storing through an index is not a form (scatters: parser_scatter.py). Non-goals: lowering (TileIndex.by:
lowering/emit/row_gather.py reads the row numbers and copies the rows).
"""

from __future__ import annotations

from lark import Tree

from . import ir
from .diagnostics import ErrorCode as E
from .dtypes import DType

INDEX_DTYPES = (DType.I32, DType.I64)


def is_index_subscript(node) -> bool:
    """`idx[r]` used as the first index of a tensor slice (`w[idx[r], :]`)."""
    return isinstance(node, Tree) and node.data == "subscript"


def row_gather_slice(b, e, tile: str, p: ir.TensorParam, idx: list) -> tuple[str, ir.TileIndex, ir.Layout]:
    """`w[idx[r], :]` in a row loop: the rows of `w` at the row numbers idx holds for the tile's rows."""
    rows = b.scope.tile.shape
    inner = idx[0]
    by_tok, *by_idx = inner.children
    form = f"{p.name}[{by_tok}[{tile}], :]"
    if rows.kind is not ir.LoopKind.ROWS:
        raise b.err(E.INDEX, f"'{form}' (rows chosen by an index tensor) needs a row loop: a split over the rows of "
                    f"'{by_tok}' with 2-D tensors of whole rows", e,
                    f"e.g. for blk in split(N, cores=AIV) with {by_tok}: [N] and the output [N, D]")
    if len(idx) != 2 or not (isinstance(idx[1], Tree) and idx[1].data == "full_slice"):
        raise b.err(E.INDEX, f"an index tensor picks whole rows: {form}", e,
                    "gather single elements per row with gather(rows, load(idx[r]))")
    if len(by_idx) != 1 or not (isinstance(by_idx[0], Tree) and by_idx[0].data == "name"
                                and str(by_idx[0].children[0]) == tile):
        raise b.err(E.INDEX, f"the index tensor is read at the tile's rows: {form}", inner)
    by = b.tensor_param(by_tok)
    if by.dtype not in INDEX_DTYPES:
        raise b.err(E.TYPE, f"'{by.name}' holds {by.dtype}; row numbers are i32 or i64", inner)
    if p.name == by.name:
        raise b.err(E.INDEX, f"'{p.name}' cannot index itself", inner)
    group = _group(b, e, form, p, by, rows, inner)
    if group is None and tuple(map(str, by.shape)) != rows.rows:
        raise b.err(E.INDEX, f"the index tensor '{by.name}' must hold one row number per row of the loop "
                    f"({' * '.join(rows.rows)}); it has shape {list(by.shape)}", inner)
    if group is None and (len(p.shape) != len(rows.row) + 1 or tuple(map(str, p.shape[1:])) != rows.row
                          or not isinstance(p.shape[0], str)):
        raise b.err(E.INDEX, f"'{form}' needs a tensor [V, {', '.join(rows.row)}] (rows as long as the loop's); "
                    f"'{p.name}' has shape {list(p.shape)}", e)
    return p.name, ir.TileIndex(tile, True, b.o.span(idx[0]), by=by.name, group=group), ir.Layout.ROWS


def _group(b, e, form: str, p: ir.TensorParam, by: ir.TensorParam, rows: ir.RowTiles, inner) -> ir.GroupGather | None:
    """A table [*rows[:-1], R, *row] under a loop over rows (A.., K): a gather along a middle dim. idx [A.., K] picks
    per row (take_along_dim(x, idx[..., None], dim)); idx [K] picks the same R-rows for every A (index_select). None
    for a plain [V, *row] table."""
    lead = rows.rows[:-1]
    if not lead or len(p.shape) != len(rows.rows) + len(rows.row) or tuple(map(str, p.shape[:len(lead)])) != lead:
        return None
    if tuple(map(str, p.shape[len(rows.rows):])) != rows.row or not isinstance(p.shape[len(lead)], str):
        raise b.err(E.INDEX, f"'{form}' gathers along dim {len(lead)} of a tensor [{', '.join(lead)}, R, "
                    f"{', '.join(rows.row)}]; '{p.name}' has shape {list(p.shape)}", e)
    if tuple(map(str, by.shape)) not in (rows.rows, rows.rows[-1:]):
        raise b.err(E.INDEX, f"the index tensor '{by.name}' holds a row number per row of the loop "
                    f"[{', '.join(rows.rows)}] or one per {rows.rows[-1]} ([{rows.rows[-1]}], index_select); it has "
                    f"shape {list(by.shape)}", inner)
    return ir.GroupGather(rows.rows[-1], str(p.shape[len(lead)]), " * ".join(rows.row),
                          tuple(map(str, by.shape)) != rows.rows)
