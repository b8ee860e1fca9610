"""How many tiles a row loop cuts a core's few rows into: a static estimate the host tiling evaluates.

A core's rows are cut into at least `MIN_TILES_PER_CORE` (2) tiles so that copy-in, compute and copy-out
overlap. With few rows per core (KernelBench's 128 x 4096 on 43 cores: 3 rows) the tile count matters both
ways: a pipeline of n tiles takes about max(pipes) + (sum(pipes) - max(pipes)) / n, and every tile adds a DMA
latency to each copy stream and an issue head to each vector instruction. One row per tile suits kernels
whose vector work is close to their copies (softmax, norms with f32 casts, losses); two tiles suit copy-bound
ones with several streams (a per-row column `c[r]` is one more DMA per tile). docs/cost_model.md, "Core count
and tile size for small inputs".

So the lowering hands the host tiling a per-element estimate of the loop's work (`RowTileCost`) and the host,
which knows the rows per core and the row length, picks the tile count of 1..perCore (perCore <= `UP_TO_ROWS`;
2..perCore in a kernel of several tile loops) with the least estimated time: one tile serialises the pipes but
saves a DMA latency per stream (where_row_mask f16: three streams in, a cheap select; session 36). Larger shares
keep the old rule (two balanced tiles, capped by UB). The
estimate is static and coarse: the lowering does not read the cost model's tables (npu_harness/cost), so the
figures below restate the ones the 910B1 table cites (ascendc.md §5.3, §5.5; the DMA latency and the issue head
are the cost model's ASSUMPTIONs). Only the choice of a tile count depends on them, never a result.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir

from .tiling_rules import REPEAT_BYTES
from .vector_scan import SCAN_APIS, SCAN_ROW_INSTRUCTIONS, scan_cycles_per_64

#: Shares of at most this many rows per core choose their tile count by the estimate.
UP_TO_ROWS = 8
#: Per DMA instruction (DataCopy / DataCopyPad) and per vector instruction, in cycles.
DMA_LATENCY_CYCLES = 300
VECTOR_HEAD_CYCLES = 20
#: GM <-> UB bytes per cycle of one core: min(one core's 100.9 GB/s, 1617.6 GB/s shared by the active cores)
#: at 1.85 GHz (ascendc.md §5.3): SOLO_BYTES_PER_CYCLE, or SHARED_BYTES_PER_CYCLE / active cores.
SOLO_BYTES_PER_CYCLE = 54.5
SHARED_BYTES_PER_CYCLE = 874.4
#: Cycles per 256-byte repeat (ascendc.md §5.5): by (api, element bytes), then by api; default 2.
_CYCLES = {("Exp", 2): 4, ("Div", 2): 8, ("Reciprocal", 2): 8, ("Rsqrt", 2): 8, ("Div", 4): 4,
           ("Reciprocal", 4): 4, ("Rsqrt", 4): 4}
_CYCLES_BY_API = {"Adds": 1, "Muls": 1, "Maxs": 1, "Mins": 1, "Abs": 1, "Relu": 1, "Duplicate": 1, "Copy": 1,
                  "Compare": 1, "Compares": 1, "ReduceSum": 7, "ReduceMax": 7, "ReduceMin": 7}
_DEFAULT_CYCLES = 2


@dataclass(frozen=True)
class RowTileCost:
    """Per row element of a row loop: vector cycles (milli-cycles, an integer for the host), GM bytes copied in
    and out; per tile: DMA instructions in and out, vector instructions; per row: the vector instructions a scan
    issues for each row (lowering/vector_scan.py), whatever the tile count."""

    vec_millicycles: int
    in_bytes: int
    out_bytes: int
    in_streams: int
    out_streams: int
    instructions: int
    #: bytes per row copied in as rows of another length (Layout.NAMED_ROWS: a named tensor's rows for a vector
    #: gather), host C++ expressions; divided by the loop's padded row on the host
    in_row_bytes: tuple[str, ...] = ()
    row_instructions: int = 0


def _cycles(api: str, size: int) -> float:
    if (api, size) in _CYCLES:
        return _CYCLES[api, size]
    return _CYCLES_BY_API.get(api, _DEFAULT_CYCLES)


def _flat(body) -> list:
    out: list = []
    for s in body:
        out.extend(_flat(s.body) if isinstance(s, ir.Stage) else [s])
    return out


def row_tile_cost(tl: ir.TileLoop, layout: ir.Layout = ir.Layout.ROWS) -> RowTileCost | None:
    """The estimate for a row loop after select_instructions, or None when the loop copies no whole rows.
    `layout=FLAT`: the same per element of a flat loop (lowering/flat_tile_count.py)."""
    rows = {b.name: b for b in tl.buffers_decl if b.layout is layout}
    once = {b.name for b in tl.buffers_decl if b.role is ir.BufferRole.ROW_VECTOR}  # copied in once per core
    named = {b.name: b for b in tl.buffers_decl if b.layout is ir.Layout.NAMED_ROWS}
    in_row_bytes: list[str] = []
    vec = 0.0
    instructions = in_bytes = out_bytes = in_streams = out_streams = row_instructions = 0
    for s in _flat(tl.body):
        ops = s.ops if isinstance(s, ir.PerRow) else (s,) if isinstance(s, ir.VecOp) else ()
        if isinstance(s, ir.VecOp) and s.api in SCAN_APIS.values():  # a blocked scan: its own instructions, per row
            sizes = [rows[n].dtype.size for n in (s.dst, *s.srcs) if n in rows]
            vec += scan_cycles_per_64(rows[s.srcs[0]].dtype.size < 4, rows[s.dst].dtype.size < 4) / 64 if sizes else 0.0
            row_instructions += SCAN_ROW_INSTRUCTIONS
            continue
        instructions += isinstance(s, ir.VecOp)  # per-row ops issue once per row whatever the tile count
        for op in ops:
            sizes = [rows[n].dtype.size for n in (op.dst, *op.srcs) if isinstance(n, str) and n in rows]
            if sizes:  # whole rows: one repeat per 256 bytes of the widest operand
                vec += max(sizes) / REPEAT_BYTES * _cycles(op.api, max(sizes))
        if isinstance(s, ir.Accumulate) and isinstance(s.value, ir.Ref) and s.value.name in rows:
            vec += rows[s.value.name].dtype.size / REPEAT_BYTES * _cycles("ReduceSum", 4)  # whole rows folded
            instructions += 1
        elif isinstance(s, ir.CopyIn) and s.index.period and not s.index.rows:
            continue  # per-channel values (`w[r]` of a [C] tensor): read by the scalar unit, a row at a time, no DMA
        elif isinstance(s, ir.CopyIn) and s.buffer not in once:
            in_streams += 1
            in_bytes += rows[s.buffer].dtype.size if s.buffer in rows else 0
            if s.buffer in named:
                b = named[s.buffer]
                in_row_bytes.append(f"{b.dtype.size}.0 * static_cast<double>({b.of})")
        elif isinstance(s, ir.CopyOut):
            out_streams += 1
            out_bytes += rows[s.buffer].dtype.size if s.buffer in rows else 0
    if not in_bytes + out_bytes:
        return None
    return RowTileCost(round(vec * 1000), in_bytes, out_bytes, in_streams, out_streams, instructions,
                       tuple(in_row_bytes), row_instructions)


def estimated_cycles(cost: RowTileCost, per_core: int, row_elems: int, tiles: int, active: int) -> float:
    """The host tiling's estimate (codegen_templates/tiling.h.jinja computes the same), for tests and docs."""
    rate = min(SOLO_BYTES_PER_CYCLE, SHARED_BYTES_PER_CYCLE / max(1, active))
    elems = per_core * row_elems
    mte2 = elems * cost.in_bytes / rate + tiles * cost.in_streams * DMA_LATENCY_CYCLES
    mte3 = elems * cost.out_bytes / rate + tiles * cost.out_streams * DMA_LATENCY_CYCLES
    vec = elems * cost.vec_millicycles / 1000 + (tiles * cost.instructions + per_core * cost.row_instructions) * VECTOR_HEAD_CYCLES
    top = max(mte2, mte3, vec)
    return top + (mte2 + mte3 + vec - top) / tiles


def _in_bytes(cost: RowTileCost) -> str:
    """GM -> UB bytes per element of the loop's padded row, as the host computes them."""
    if not cost.in_row_bytes:
        return f"{cost.in_bytes}.0"
    return f"({cost.in_bytes}.0{''.join(f' + {b} / static_cast<double>(padded)' for b in cost.in_row_bytes)})"


def host_view(tl: ir.TileLoop, one_tile: bool = True) -> dict | None:
    """What codegen_templates/tiling.h.jinja needs to pick the tile count (None: the default rule). `one_tile`:
    the estimate may keep a core's rows in one tile (False: a kernel of several tile loops, which take the first
    loop's rows per tile, and whose other loops the estimate does not see: at least two tiles)."""
    cost = row_tile_cost(tl)
    if cost is None:
        return None
    return {"up_to": UP_TO_ROWS, "solo": f"{SOLO_BYTES_PER_CYCLE}", "shared": f"{SHARED_BYTES_PER_CYCLE}",
            "latency": DMA_LATENCY_CYCLES, "head": VECTOR_HEAD_CYCLES, "in_bytes": _in_bytes(cost),
            "out_bytes": f"{cost.out_bytes}.0", "in_streams": cost.in_streams, "out_streams": cost.out_streams,
            "vec_millicycles": cost.vec_millicycles, "instructions": cost.instructions,
            "row_instructions": cost.row_instructions,
            # one tile serialises copy-in, compute and copy-out, but saves a DMA latency per stream on each side:
            # the estimate weighs both (where_row_mask f16 at 128 x 4096: three streams in, a cheap select); a
            # named tensor's rows (a vector gather's x) dwarf the loop's rows, whatever the kernel's other loops
            **({"min_tiles": "1"} if one_tile or cost.in_row_bytes else {})}
