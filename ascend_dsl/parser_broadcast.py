"""Front end for two-sided broadcasts in a row loop: tensors over a run of the split's symbols.

    a: Tensor[T, "A, D"], b: Tensor[T, "R, D"], y: Tensor[T, "A, R, D"]      # [A, 1, D] * [1, R, D]
    for blk in split(A * R, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], load(a[r, :]) * load(b[r, :]))   # row a*R + i reads a[a, :] and b[i, :]

In a row loop over `split(S1 * ... * Sk)`, a tensor whose leading dims are a run `Si..Sj` of the split's
symbols (not all of them) followed by the loop's row dims is read as whole rows: global row q of the loop
reads row `(q / stride) % period` of it, where `period` is the product of the run and `stride` the product
of the split's symbols after it (PyTorch's broadcast of the size-1 dims outside the run). A 1-D or rank-k
tensor over such a run is read as one value per row the same way (`load(s[r])` of `[A]` under
`split(A * R)`: row a*R + i reads s[a]). A run that is a suffix (`[C]` under `split(N * C)`) needs no
stride (TileIndex.period alone, as before). Runs that skip a symbol (`[A, C]` under `split(A * B * C)`)
are not a form (`INDEX`, naming the merge that works). Non-goals: lowering (TileIndex.stride:
lowering/emit/row_broadcast.py).
"""

from __future__ import annotations

from . import ir
from .diagnostics import ErrorCode as E
from .dtypes import DType
from .ops import OPS, Rule


def _run_at(dims: tuple[str, ...], extent: tuple[str, ...]) -> int | None:
    """Where `dims` (non-empty, shorter than the extent) sits as a contiguous run of `extent`, else None."""
    n = len(dims)
    if not dims or n >= len(extent):
        return None
    starts = [i for i in range(len(extent) - n + 1) if extent[i:i + n] == dims]
    return starts[-1] if starts else None  # the last: a suffix keeps the plain period form


def _index(tile: str, span, extent: tuple[str, ...], start: int, n: int, rows: bool) -> ir.TileIndex:
    after = extent[start + n:]
    return ir.TileIndex(tile, rows, span, period=" * ".join(extent[start:start + n]),
                        stride=" * ".join(after) if after else None)


def broadcast_slice(b, e, tile: str, p: ir.TensorParam, idx: list, is_tile: list[bool],
                    is_full: list[bool]) -> tuple[str, ir.TileIndex, ir.Layout] | None:
    """`a[r, :]` / `a[r]` of a tensor over a run of the row loop's split symbols, or None (not this form)."""
    shape = b.scope.tile.shape
    if shape.kind is not ir.LoopKind.ROWS or not all(isinstance(d, str) for d in p.shape):
        return None
    extent, dims = tuple(b.scope.split_extent), tuple(map(str, p.shape))
    span = b.o.span(idx[0])
    if len(idx) == 2 and is_tile[0] and is_full[1]:
        k = len(dims) - len(shape.row)
        if k < 1 or dims[k:] != shape.row:
            return None
        start = _run_at(dims[:k], extent)
        if start is None and set(dims[:k]) <= set(extent) and len(dims[:k]) < len(extent):
            raise _skip_error(b, e, p, dims[:k], extent, f"{p.name}[{tile}, :]")
        if start is None:
            return None
        return p.name, _index(tile, span, extent, start, k, True), ir.Layout.ROWS
    if len(idx) == 1 and is_tile[0]:
        start = _run_at(dims, extent)
        if start is None:
            return None
        return p.name, _index(tile, span, extent, start, len(dims), False), ir.Layout.COL
    return None


def _skip_error(b, e, p: ir.TensorParam, run: tuple[str, ...], extent: tuple[str, ...], form: str):
    return b.err(E.INDEX, f"'{form}': the dims {list(run)} of '{p.name}' are not adjacent in the split "
                 f"{' * '.join(extent)}; a broadcast tensor's leading dims must be a run of the split's symbols",
                 e, "order the split so they are adjacent, or expand the tensor in the task (x.expand(...)"
                 ".contiguous()) and declare it over all of the split's dims")


_SPREAD = (ir.Layout.COL, ir.Layout.ROW)


def broadcast_operands(b, args: list[ir.Expr], force: bool = False) -> list[ir.Expr]:
    """A comparison's or select's operands in a row loop: of mixed shapes (or `force`), per-row values
    and row vectors made whole rows (`broadcast_rows`); other loops and operands unchanged."""
    if b.scope.tile.shape.kind is not ir.LoopKind.ROWS:
        return args
    layouts = {a.type.layout for a in args if a.type.kind is ir.Kind.TILE}
    if not layouts & set(_SPREAD) or not layouts <= {ir.Layout.ROWS, *_SPREAD} \
            or not (force or len(layouts) > 1):
        return args
    return [ir.Op("broadcast_rows", (a,), ir.tile_of(a.type.dtype, ir.Layout.ROWS), a.span)
            if a.type.kind is ir.Kind.TILE and a.type.layout in _SPREAD else a for a in args]


def select_operands(b, mask: ir.Expr, x: ir.Expr, y: ir.Expr, node) -> list[ir.Expr]:
    """select's operands in a row loop: a mask of per-row values or row vectors between whole rows
    (`select(load(m[r]) > 0.0, load(x[r, :]), load(z[r, :]))`, torch.where with a [B, 1] condition) is compared
    as whole rows; the mask must then be written in the select (a named one has its shape already)."""
    if b.scope.tile.shape.kind is not ir.LoopKind.ROWS or mask.type.layout not in _SPREAD \
            or ir.Layout.ROWS not in {v.type.layout for v in (x, y) if v.type.kind is ir.Kind.TILE}:
        return broadcast_operands(b, [mask, x, y])
    if not (isinstance(mask, ir.Op) and OPS[mask.op].rule is Rule.COMPARE):
        raise b.err(E.UNSUPPORTED, "a named mask of per-row values or row vectors cannot select between whole rows",
                    node, "write the comparison inside the select: select(load(m[r]) > 0.0, rows_a, rows_b)")
    args = broadcast_operands(b, list(mask.args), force=True)
    return broadcast_operands(b, [ir.Op(mask.op, tuple(args), ir.tile_of(DType.BOOL, ir.Layout.ROWS), mask.span),
                                  x, y])
