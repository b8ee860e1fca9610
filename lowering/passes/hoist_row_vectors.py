"""A whole `[D]` vector read by every row of a row loop is copied into UB once per core, not once per tile.

`load(w[:])` in `for r in tile(blk)` over rows of D elements (a bias, a weight, a row to broadcast) reads
the same D values for every tile of rows. allocate_buffers gives it a VECIN queue like any load, so the
vector crossed GM once per tile (add_row f32 at 4096 x 4096: 43 tiles per core, GM traffic 1.25 x the
tensors; scale_shift 1.5 x, one row per tile). Here its buffer becomes a TBuf (VECCALC, one buffer,
role ROW_VECTOR) that the emitter fills before the core's first tile (lowering/emit/vector.py): the
vector crosses GM once per core, and the UB it takes drops from two rows (double buffered) to one,
which leaves more rows per tile.

Only the whole-row loops of VECTOR kernels (the chunked passes of rows longer than UB read a column
chunk of `w` per chunk; other kinds have their own emitters), and only buffers that nothing but
`w[:]` loads write.
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir

from ..context import PassContext
from ..rewrite import map_tile_bodies


def is_row_vector_load(e: ir.Expr) -> bool:
    """`w[:]`: all of a tensor over the row (no tile variable, no gather, period or slot)."""
    return (isinstance(e, ir.Load) and e.index.var is None and e.index.by is None and e.index.period is None
            and not e.index.acc)


def row_vector_buffers(tl: ir.TileLoop) -> set[str]:
    """The VECIN buffers of a whole-row loop that only `w[:]` loads write."""
    writers: dict[str, list[ir.Expr]] = {}
    for s in tl.body:
        if isinstance(s, ir.Assign):
            writers.setdefault(s.name, []).append(s.value)
    decls = {b.name: b for b in tl.buffers_decl}
    return {name for name, values in writers.items()
            if name in decls and decls[name].position is ir.Position.VECIN and decls[name].layout is ir.Layout.ROW
            and all(is_row_vector_load(v) for v in values)}


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    if kernel.kind is not ir.KernelKind.VECTOR:
        return kernel

    def hoist(tl: ir.TileLoop) -> ir.TileLoop:
        if tl.kind is not ir.LoopKind.ROWS:
            return tl
        names = row_vector_buffers(tl)
        if not names:
            return tl
        decls = tuple(replace(b, position=ir.Position.VECCALC, num=1, role=ir.BufferRole.ROW_VECTOR)
                      if b.name in names else b for b in tl.buffers_decl)
        return replace(tl, buffers_decl=decls)

    return map_tile_bodies(kernel, hoist, chunks=False)
