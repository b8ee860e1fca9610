"""One tile or two for a flat loop's short core share: a static estimate the host tiling evaluates.

A flat loop's share is cut into at least `MIN_TILES_PER_CORE` (2) tiles so that copy-in, compute and copy-out
overlap. For a short share that overlap is worth less than it costs: the second tile hides half of the other
pipes' work but adds one DMA latency per copy stream. So mse_loss at 16 x 16384 (two streams in, no copy-out,
5,461 f32 per core) is faster with one tile (docs/cost_model.md, session 32), and so is masked_fill f16 (x and its
u8 mask in, y out: three DMA latencies per tile against 0.2 us of vector work; session 36). The host compares the
two with the row loops' estimate (lowering/row_tile_count.py: max(pipes) + (sum(pipes) - max(pipes)) / tiles over
copy-in, vector and copy-out cycles, the same figures and the same ASSUMPTIONs) for shares that fit one tile. One
stream in and one out (the activations) keeps two tiles: one tile serialises copy-in, compute and copy-out, whose
sum exceeds the second tile's two latencies whatever the vector work. Only the tile count depends on the
estimate, never a result.
"""

from __future__ import annotations

from ascend_dsl import ir

from .row_tile_count import (
    DMA_LATENCY_CYCLES,
    SHARED_BYTES_PER_CYCLE,
    SOLO_BYTES_PER_CYCLE,
    VECTOR_HEAD_CYCLES,
    row_tile_cost,
)


def host_view(tl: ir.TileLoop) -> dict | None:
    """What codegen_templates/tiling.h.jinja needs to weigh one tile against two (None: always two)."""
    if tl.kind is not ir.LoopKind.FLAT:
        return None
    cost = row_tile_cost(tl, ir.Layout.FLAT)
    if cost is None:
        return None
    return {"solo": f"{SOLO_BYTES_PER_CYCLE}", "shared": f"{SHARED_BYTES_PER_CYCLE}",
            "latency": DMA_LATENCY_CYCLES, "head": VECTOR_HEAD_CYCLES, "in_bytes": f"{cost.in_bytes}.0",
            "in_streams": cost.in_streams, "out_bytes": f"{cost.out_bytes}.0", "out_streams": cost.out_streams,
            "vec_millicycles": cost.vec_millicycles, "instructions": cost.instructions}


def estimated_cycles(view: dict, per_core: int, tiles: int, active: int) -> float:
    """The host's estimate (tiling.h.jinja computes the same), for tests: copy-in, vector work and copy-out."""
    rate = min(SOLO_BYTES_PER_CYCLE, SHARED_BYTES_PER_CYCLE / max(1, active))
    mte2 = per_core * float(view["in_bytes"]) / rate + tiles * view["in_streams"] * DMA_LATENCY_CYCLES
    mte3 = per_core * float(view["out_bytes"]) / rate + tiles * view["out_streams"] * DMA_LATENCY_CYCLES
    vec = per_core * view["vec_millicycles"] / 1000 + tiles * view["instructions"] * VECTOR_HEAD_CYCLES
    top = max(mte2, mte3, vec)
    return top + (mte2 + mte3 + vec - top) / tiles
