"""Decide whether the rows of chunked row loops may be split over a group of cores (fewer rows than cores).

Goals: `ChunkPlan.row_groups` on every chunked row loop of the kernel, when every split loop has a
chunked form (a core group has one row, and a loop holding whole rows would need it whole) and no pass
folds more reductions than one core's 32-byte partial slot holds. The host tiling then picks the group
size from the runtime shapes (1: a core per row). Non-goals: the combine code (lowering/emit/row_groups.py).
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir

from ..context import PassContext
from ..rewrite import map_tile_bodies

#: Floats of one core's partial slot (32 bytes); a pass with more reductions keeps whole rows per core.
SLOT_FLOATS = 8


def _slot_floats(p: ir.ChunkPass) -> int:
    """Floats of a pass's partial slot: one per reduction, a count per mean / M2 pair, an error per compensated sum."""
    return (len(p.reductions) + len({f.moments for f in p.reductions if f.moments})
            + sum(1 for f in p.reductions if f.prefix and f.combine is ir.Combine.ADD))


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    plans = [tl.shape.chunked if tl.kind is ir.LoopKind.ROWS else None for s in kernel.phases for tl in s.body]
    if not plans or not all(isinstance(p, ir.ChunkPlan) and all(_slot_floats(q) <= SLOT_FLOATS for q in p.passes)
                            for p in plans):
        return kernel  # (scans: each core's carry starts from the group's offsets, scan_offsets.py)

    def grouped(tl: ir.TileLoop) -> ir.TileLoop:
        if tl.kind is ir.LoopKind.ROWS and isinstance(tl.shape.chunked, ir.ChunkPlan):
            return replace(tl, shape=replace(tl.shape, chunked=replace(tl.shape.chunked, row_groups=True)))
        return tl

    return map_tile_bodies(kernel, grouped, chunks=False)
