"""Front end for box loops: reductions over a chosen, non-last dimension.

    x: Tensor[T, "A, R, C"], y: Tensor[T, "A, C"]
    for blk in split(A * C, cores=AIV):            # the output positions
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], sum(load(x[t]), axis=1))   # load(x[t]): t's positions x all of R

A tile loop is a box loop when a tensor's dims are the split's (two or more) with one more symbol inserted before
the last one (`[A, R, C]` under `split(A * C)`: R at axis 1; `[A, R, C]` under `split(R * C)`: A at
axis 0). `load(x[t])` of such a tensor is a box (Layout.BOX): the tile's positions times the whole
extra axis, with x's axis order, so `axis=` names the reduced dim as in PyTorch. Boxes take
element-wise ops, casts and scalars; a reduction over the extra axis (sum, mean, max, min, prod)
turns a box into an ordinary flat tile of t. Tensors whose dims are the split's dims load and store
flat tiles. Non-goals: lowering (lowering/emit/box.py).
"""

from __future__ import annotations

from . import ir
from .diagnostics import ErrorCode as E


def box_for(b, extent: tuple[str, ...], node) -> ir.BoxTiles | None:
    """The extra dim (axis, symbol) of the box tensors of a split over `extent`, or None."""
    k = len(extent)
    found: dict[tuple[int, str], list[str]] = {}
    for p in b.loop_params(node):
        if not isinstance(p, ir.TensorParam) or len(p.shape) != k + 1 or k < 2:  # boxes of rank >= 3 tensors
            continue
        for j in range(k):  # the extra dim is never the last one (that is a row loop)
            if isinstance(p.shape[j], str) and tuple(p.shape[:j]) + tuple(p.shape[j + 1:]) == extent:
                found.setdefault((j, p.shape[j]), []).append(p.name)
    if not found:
        return None
    if len(found) > 1:
        what = "; ".join(f"{', '.join(ns)} at axis {j} ({d})" for (j, d), ns in found.items())
        raise b.err(E.INDEX, f"the tensors of a reduction loop over {' * '.join(extent)} must share the reduced axis: "
                    f"{what}", node, "reduce one axis per kernel; a gather along a non-last dim splits the output's rows, split(A * K): "
                    "torch.gather(x, 1, idx) of [A, R, C] is gather(x, load(idx[r, :])) with x named, whole rows "
                    "(index_select, take_along_dim with an [A, K, 1] index) load(x[idx[r], :]); along the last dim, "
                    "gather(rows, load(idx[r, :]))")
    ((axis, dim),) = found
    return ir.BoxTiles(axis, dim)


def is_box_tensor(p: ir.TensorParam, extent: tuple[str, ...], box: ir.BoxTiles) -> bool:
    j, dim = box.axis, box.dim
    return len(p.shape) == len(extent) + 1 and p.shape[j] == dim and \
        tuple(p.shape[:j]) + tuple(p.shape[j + 1:]) == extent


def box_slice(b, e, tile: str, p: ir.TensorParam, idx: list) -> tuple[str, ir.TileIndex, ir.Layout]:
    """`x[t]` inside a box loop: a box of a [.., R, ..] tensor or a flat tile of a tensor over the split's dims."""
    extent, box = b.scope.split_extent, b.scope.tile.shape
    j, dim = box.axis, box.dim
    is_tile = len(idx) == 1 and idx[0].data == "name" and str(idx[0].children[0]) == tile
    box_shape = list(extent[:j]) + [dim] + list(extent[j:])
    if not is_tile:
        raise b.err(E.INDEX, f"in a reduction loop, index tensors with the tile variable alone: {p.name}[{tile}]", e,
                    f"load({p.name}[{tile}]) of a {box_shape} tensor gives the tile's positions x all of {dim}")
    if is_box_tensor(p, extent, box):
        return p.name, ir.TileIndex(tile, False, b.o.span(idx[0])), ir.Layout.BOX
    if tuple(p.shape) == extent:
        return p.name, ir.TileIndex(tile, False, b.o.span(idx[0])), ir.Layout.FLAT
    raise b.err(E.INDEX, f"'{p.name}[{tile}]' in a loop over split({' * '.join(extent)}) needs a tensor "
                f"{list(extent)} (one value per position) or {box_shape} (a box, reduced over axis {j}); "
                f"'{p.name}' has shape {list(p.shape)}", e,
                "the split runs over the output's dims: the input's dims without the reduced one")


def box_reduction(b, name: str, op: str, v: ir.Expr, axis, span) -> ir.Expr:
    """`sum(v, axis=j)` of a box: one value per position of the tile (a flat tile)."""
    j, dim = b.scope.tile.shape.axis, b.scope.tile.shape.dim
    rank = len(b.scope.split_extent) + 1
    value = b.axis_value(axis)
    if value not in (j, j - rank):
        raise b.err(E.INDEX, f"{name}(v, axis={value}) of a box reduces axis {value}, but the box's extra axis is "
                    f"{j} ({dim})", axis, f"use {name}(v, axis={j}); to reduce another dim, split over the others")
    return ir.Op(op, (v,), ir.tile_of(v.type.dtype, ir.Layout.FLAT), span)
