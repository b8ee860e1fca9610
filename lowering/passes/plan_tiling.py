"""Choose the largest tile that fits the Unified Buffer and check explicit sizes against it.

UB use per tile = sum over buffers of num x alignUp(tile x bits / 8, 32 B) (ascendc.md 8 rule 1);
the budget is the target's UB minus the API scratch reserve. `auto` takes the largest multiple of
AUTO_TILE_GRANULE that fits; the host tiling code later shrinks it for short core shares. The passes
of a chunked row loop get their largest chunk the same way, beside the row-level blocks; one that does
not fit leaves the loop without a chunked variant (ir.NoChunk) instead of failing the kernel. An explicit
`chunk=` on the row loop is every pass's chunk length instead (an upper bound: the host balances chunks
below it), checked against each pass's UB plan like an explicit tile size.
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.diagnostics import DiagnosticSink
from ascend_dsl.diagnostics import ErrorCode as E

from ..context import PassContext
from ..rewrite import map_tile_bodies
from ..tiling_rules import AUTO_TILE_GRANULE
from .plan_chunks import row_level_bytes


def ub_bytes(buffers: tuple[ir.Buffer, ...], tile: int) -> int:
    return sum(b.num * b.bytes_for(tile) for b in buffers)


def _breakdown(buffers: tuple[ir.Buffer, ...], tile: int) -> str:
    return ", ".join(f"{b.name} {b.num}x{b.bytes_for(tile)} B" for b in buffers)


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    t = ctx.target
    budget = t.ub_budget
    sink = DiagnosticSink()

    def plan(tl: ir.TileLoop, sink: DiagnosticSink = sink) -> ir.TileLoop:
        bufs = tl.buffers_decl
        count = sum(b.num for b in bufs)
        if count > t.max_buffers:
            sink.error(E.BUFFER_COUNT, f"the tile needs {count} UB buffers; {t.name} allows {t.max_buffers}",
                       tl.span, "fewer live temporaries or buffers=1")
        if tl.kind is ir.LoopKind.ROWS and isinstance(tl.shape.chunked, ir.ChunkPlan):
            return replace(tl, shape=replace(tl.shape, chunked=plan_chunks(tl.shape.chunked, tl)))
        if tl.chunk is not None:  # chunk= on a row loop without a chunked variant (plan_chunks says why)
            chunked = getattr(tl.shape, "chunked", None)
            why = chunked.reason if isinstance(chunked, ir.NoChunk) else "it does not tile rows"
            sink.error(E.UNSUPPORTED, f"chunk={tl.chunk}, but this loop cannot run in column chunks: {why}", tl.span,
                       "drop chunk=")
        if tl.kind not in (ir.LoopKind.FLAT, ir.LoopKind.CHUNKS):
            return tl  # rows / planes / boxes per tile depend on runtime shapes: the host tiling code sizes them
        per_elem_bits = sum(b.num * b.bits for b in bufs)
        if tl.size is not None:
            need = ub_bytes(bufs, tl.size)
            if need > budget:
                fit = (budget * 8 // per_elem_bits) // AUTO_TILE_GRANULE * AUTO_TILE_GRANULE
                sink.error(E.UB_CAPACITY, f"tiles need {need} B of Unified Buffer; {t.name} allows {budget} B "
                           f"({t.ub_bytes} B minus {t.ub_reserved_bytes} B API scratch)", tl.span,
                           f"use size=auto or size <= {fit}" if fit else "use fewer temporaries or buffers=1",
                           notes=[_breakdown(bufs, tl.size)])
            return replace(tl, max_tile=tl.size)
        size = (budget * 8 // per_elem_bits) // AUTO_TILE_GRANULE * AUTO_TILE_GRANULE
        # per_elem_bits counts the fixed small blocks (a reduction's result block, an accumulator's slot, its
        # per-repeat scratch) as if they grew with the tile: grow to what UB holds (session 34), then shrink
        while size > 0 and ub_bytes(bufs, size + AUTO_TILE_GRANULE) <= budget:
            size += AUTO_TILE_GRANULE
        while size > 0 and ub_bytes(bufs, size) > budget:
            size -= AUTO_TILE_GRANULE
        if size <= 0:
            sink.error(E.UB_CAPACITY, f"even a {AUTO_TILE_GRANULE}-element tile needs "
                       f"{ub_bytes(bufs, AUTO_TILE_GRANULE)} B of Unified Buffer; {t.name} allows {budget} B",
                       tl.span, "reduce the number of live temporaries or use buffers=1",
                       notes=[_breakdown(bufs, AUTO_TILE_GRANULE)])
            return tl
        return replace(tl, max_tile=size)

    def plan_chunks(chunks: ir.ChunkPlan, row_loop: ir.TileLoop) -> ir.ChunkPlan | ir.NoChunk:
        """Each pass's largest chunk beside the row-level blocks; a pass that does not fit UB leaves the
        row loop without a chunked variant (the host tiling reports the reason when a row does not fit).
        The row loop's `chunk=` replaces the largest chunk of every pass and must fit each of them."""
        rest = budget - row_level_bytes(chunks)
        passes = []
        for k, p in enumerate(chunks.passes):
            problems = DiagnosticSink()
            loop = plan(p.loop, problems)
            if problems.items:
                return ir.NoChunk(f"pass {k} cannot be lowered: {problems.items[0].message}")
            size = loop.max_tile  # the estimate counts the small blocks (reduction scratch) per element: grow, shrink
            while ub_bytes(loop.buffers_decl, size + AUTO_TILE_GRANULE) <= rest:
                size += AUTO_TILE_GRANULE
            while size > 0 and ub_bytes(loop.buffers_decl, size) > rest:
                size -= AUTO_TILE_GRANULE
            if size <= 0:
                return ir.NoChunk(f"even a {AUTO_TILE_GRANULE}-element column chunk does not fit UB")
            if row_loop.chunk is not None:
                need = ub_bytes(loop.buffers_decl, row_loop.chunk)
                if need > rest:
                    sink.error(E.UB_CAPACITY, f"chunk={row_loop.chunk}: pass {k}'s column chunks need {need} B of "
                               f"Unified Buffer; {t.name} allows {rest} B beside the row-level blocks "
                               f"({t.ub_bytes} B minus {t.ub_reserved_bytes} B API scratch and "
                               f"{row_level_bytes(chunks)} B)", row_loop.span,
                               f"use chunk <= {size} (pass {k}'s largest) or drop chunk=",
                               notes=[_breakdown(loop.buffers_decl, row_loop.chunk)])
                    continue
                size, loop = row_loop.chunk, replace(loop, max_tile=row_loop.chunk)
            passes.append(replace(p, loop=loop, max_chunk=size))
        return replace(chunks, passes=tuple(passes))

    out = map_tile_bodies(kernel, plan, chunks=False)
    sink.raise_if_any()
    return out
