"""Front end for grid_sample: planes sampled at positions read from a grid tensor.

    x: Tensor[f32, "N, C, H, W"], grid: Tensor[f32, "N, OH, OW, 2"], y: Tensor[f32, "N, C, OH, OW"]
    for blk in split(N * C, cores=AIV):
        for p in tile(blk, size=auto, buffers=2):
            store(y[p], grid_sample(load(x[p]), grid, mode="bilinear", padding_mode="zeros", align_corners=False))

`grid_sample(plane, grid, mode=, padding_mode=, align_corners=)` is F.grid_sample(x, grid, ...) for the loop's
planes: plane (n, c) is sampled at grid[n]'s positions (x, then y, normalised to [-1, 1]). The grid is named, not
loaded (the lowering reads its rows in chunks, lowering/emit/grid_sample.py). PyTorch's defaults: bilinear, zeros,
align_corners=False. IR: Op(grid_sample_<mode>_<padding>[_ac], (plane, Const(grid name))), a RESIZE-rule op: it
is stored directly, and its shape check (grid [N, OH, OW, 2] against the planes and the stored tensor) is in
lowering/passes/select_kind.py, where the stored tensor is known.
"""

from __future__ import annotations

from lark import Token, Tree

from . import ir
from .diagnostics import ErrorCode as E
from .dtypes import DType
from .ops import GRID_MODES, GRID_PADDINGS, grid_op

_EXAMPLE = 'grid_sample(load(x[p]), grid, mode="bilinear", padding_mode="zeros", align_corners=False)'


def _choice(b, v, what: str, choices: tuple[str, ...]) -> str:
    text = str(v)[1:-1] if isinstance(v, Token) and v.type == "STRING" else None
    if text not in choices:
        if text in ("reflection", "bicubic"):
            raise b.err(E.UNSUPPORTED, f"grid_sample {what}={text!r} is not lowered", v,
                        f"{what}= one of {', '.join(map(repr, choices))}")
        raise b.err(E.ARGS, f"{what}= takes a string, one of {', '.join(map(repr, choices))}", v, _EXAMPLE)
    return text


def _flag(b, v) -> bool:
    if isinstance(v, Tree) and v.data == "name" and str(v.children[0]) in ("True", "False"):
        return str(v.children[0]) == "True"
    raise b.err(E.ARGS, "align_corners= takes True or False", v, _EXAMPLE)


def grid_sample(b, c) -> ir.Expr:
    """Type `grid_sample(load(x[p]), grid, mode=, padding_mode=, align_corners=)` in a plane loop."""
    pos, kw, e, tile = c.pos, c.kw, c.node, c.tile
    if len(pos) != 2 or set(kw) - {"mode", "padding_mode", "align_corners"}:
        raise b.err(E.ARGS, "grid_sample takes a loaded plane, the grid tensor (by name) and optionally mode=, "
                    "padding_mode=, align_corners=", e, _EXAMPLE)
    v = b.expr(pos[0], tile)
    if v.type.kind is not ir.Kind.TILE or v.type.layout is not ir.Layout.PLANE:
        raise b.err(E.TYPE, "grid_sample needs a loaded plane (load(x[p]) of a [N, C, H, W] tensor in a loop over "
                    "split(N * C))", pos[0], "for blk in split(N * C, cores=AIV): for p in tile(blk): "
                    f"store(y[p], {_EXAMPLE})")
    rank = b.scope.tile.shape.rank
    if rank != 2:
        raise b.err(E.UNSUPPORTED, f"grid_sample samples 2 spatial dims ([N, C, H, W]); this plane has {rank}", e,
                    "5-D (volumetric) grid_sample is not lowered: sample each depth slice as a 2-D plane")
    g = pos[1]
    if not (isinstance(g, Tree) and g.data == "name"):
        raise b.err(E.TYPE, "grid_sample's grid is a tensor parameter named as is (read in chunks), not a loaded "
                    "value", g, _EXAMPLE)
    grid = b.tensor_param(g.children[0])
    mode = _choice(b, kw["mode"], "mode", GRID_MODES) if "mode" in kw else "bilinear"
    padding = _choice(b, kw["padding_mode"], "padding_mode", GRID_PADDINGS) if "padding_mode" in kw else "zeros"
    align = _flag(b, kw["align_corners"]) if "align_corners" in kw else False
    if v.type.dtype is not DType.F32 or grid.dtype is not DType.F32:
        bad = v.type.dtype if v.type.dtype is not DType.F32 else grid.dtype
        raise b.err(E.DTYPE_UNSUPPORTED, f"grid_sample is lowered for f32 planes and grids; got {bad}",
                    pos[0] if v.type.dtype is not DType.F32 else g,
                    "declare x, grid and y f32 (convert f16 data in the task, or cast in a separate kernel)")
    span = b.o.span(e)
    return ir.Op(grid_op(mode, padding, align), (v, ir.Const(grid.name, ir.scalar_of(DType.F32), span)),
                 ir.tile_of(DType.F32, ir.Layout.POOLED), span)
