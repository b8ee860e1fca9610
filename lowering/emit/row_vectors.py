"""The `[D]` vectors of a row loop that every row reads (ROW_VECTOR buffers, lowering/passes/hoist_row_vectors.py):
copied from GM into their TBuf once per core, before the core's first tile, instead of in every CopyIn."""

from __future__ import annotations

from ascend_dsl import ir

from . import period_cache
from .shared import BufferView, TensorView, copy_call, loc, sync


def preload_lines(ctx, tl: ir.TileLoop, buffers: tuple[BufferView, ...], tensors: dict[str, TensorView]) -> list[str]:
    """Lines before a row loop's tiles: each ROW_VECTOR buffer filled from its tensor (rowLen_ elements), then the
    MTE2 -> V and MTE2 -> S waits before the first Compute reads them (vector ops; the scalar unit reads an
    index vector such as index_add's). The template runs them only on a core with whole rows
    to process (no rows, or rows on the chunked path: the whole-row buffers were never set up)."""
    by_name = {b.name: b for b in buffers}
    sources = {s.buffer: s for st in tl.body if isinstance(st, ir.Stage) for s in st.body
               if isinstance(s, ir.CopyIn) and by_name[s.buffer].buffer.role is ir.BufferRole.ROW_VECTOR}
    lines = []
    for name, s in sources.items():
        b = by_name[name]
        c = b.buffer.dtype.ctype
        lines += [f"// {loc(ctx, s.span)}: every row reads it: copied in once per core, not per tile",
                  f"LocalTensor<{c}> {name} = {b.member}.Get<{c}>();",
                  copy_call("GmToUb", "", name, tensors[s.tensor].gm, "rowLen_")]
    lines += period_cache.preload_lines(ctx, buffers, tensors, loc)
    if not lines:
        return []
    return lines + sync("MTE2_V", "the tiles' vector ops read them") + sync("MTE2_S", "scalar reads (index vectors)")
