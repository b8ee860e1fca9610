"""Choose the largest tile that fits the Unified Buffer and check explicit sizes against it.

UB use per tile = sum over buffers of num x alignUp(tile x bits / 8, 32 B) (ascendc.md 8 rule 1);
the budget is the target's UB minus the API scratch reserve. `auto` takes the largest multiple of
AUTO_TILE_GRANULE that fits; the host tiling code later shrinks it for short core shares.
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.diagnostics import DiagnosticSink

from ..context import PassContext
from ..rewrite import map_tile_bodies
from ..tiling_rules import AUTO_TILE_GRANULE


def ub_bytes(buffers: tuple[ir.Buffer, ...], tile: int) -> int:
    return sum(b.num * b.bytes_for(tile) for b in buffers)


def _breakdown(buffers: tuple[ir.Buffer, ...], tile: int) -> str:
    return ", ".join(f"{b.name} {b.num}x{b.bytes_for(tile)} B" for b in buffers)


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    t = ctx.target
    budget = t.ub_budget
    sink = DiagnosticSink()

    def plan(tl: ir.TileLoop) -> ir.TileLoop:
        bufs = tl.buffers_decl
        count = sum(b.num for b in bufs)
        if count > t.max_buffers:
            sink.error("BUFFER-COUNT", f"the tile needs {count} UB buffers; {t.name} allows {t.max_buffers}",
                       tl.span, "fewer live temporaries or buffers=1")
        if tl.kind is not ir.LoopKind.FLAT:
            return tl  # rows / planes / boxes per tile depend on runtime shapes: the host tiling code sizes them
        per_elem_bits = sum(b.num * b.bits for b in bufs)
        if tl.size is not None:
            need = ub_bytes(bufs, tl.size)
            if need > budget:
                fit = (budget * 8 // per_elem_bits) // AUTO_TILE_GRANULE * AUTO_TILE_GRANULE
                sink.error("UB-CAPACITY", f"tiles need {need} B of Unified Buffer; {t.name} allows {budget} B "
                           f"({t.ub_bytes} B minus {t.ub_reserved_bytes} B API scratch)", tl.span,
                           f"use size=auto or size <= {fit}" if fit else "use fewer temporaries or buffers=1",
                           notes=[_breakdown(bufs, tl.size)])
            return replace(tl, max_tile=tl.size)
        size = (budget * 8 // per_elem_bits) // AUTO_TILE_GRANULE * AUTO_TILE_GRANULE
        while size > 0 and ub_bytes(bufs, size) > budget:
            size -= AUTO_TILE_GRANULE
        if size <= 0:
            sink.error("UB-CAPACITY", f"even a {AUTO_TILE_GRANULE}-element tile needs "
                       f"{ub_bytes(bufs, AUTO_TILE_GRANULE)} B of Unified Buffer; {t.name} allows {budget} B",
                       tl.span, "reduce the number of live temporaries or use buffers=1",
                       notes=[_breakdown(bufs, AUTO_TILE_GRANULE)])
            return tl
        return replace(tl, max_tile=size)

    out = map_tile_bodies(kernel, plan)
    sink.raise_if_any()
    return out
