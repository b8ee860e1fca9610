"""argmax / argmin over whole rows (`argmax(v, axis=1)`): per row, ReduceMax / ReduceMin with calIndex.

With calIndex the result block holds [value, index], the index an integer bit pattern in a T slot
(uint32 for float, uint16 for half), and the first occurrence of the extreme wins (ascendc_next.md §3.6,
CANN ReduceMax.md), PyTorch's tie rule. The scalar unit reads the index and writes it as the row's i64.
With half rows an index above 65535 does not fit the slot: the host refuses such rows (`launch_checks`).
NaN: the vector unit does not promise PyTorch's rule (a NaN is the maximum).
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

HALF_INDEX_LIMIT = 65535


def _sync(event: str) -> list[str]:  # as shared.sync (this module is imported by shared: no import back)
    return [f"    SetFlag<HardEvent::{event}>(EVENT_ID0);", f"    WaitFlag<HardEvent::{event}>(EVENT_ID0);"]


def row_lines(s: ir.VecOp, out: str, tmp: str, dtype: DType) -> list[str]:
    """dst[i] = the column of row i's first max (ArgMax) / min (ArgMin) of `src` (rows rowPitch_ apart in UB)."""
    (src,) = s.srcs
    api = {"ArgMax": "ReduceMax", "ArgMin": "ReduceMin"}[s.api]
    bits = "uint16_t" if dtype.size == 2 else "uint32_t"
    return ["for (uint32_t i = 0; i < count; ++i) {",
            f"    {api}({out}, {src}[i * rowPitch_], {tmp}, static_cast<int32_t>(rowLen_), true);  // [value, index]",
            *_sync("V_S"),
            f"    {s.dst}.SetValue(i, static_cast<int64_t>({out}.ReinterpretCast<{bits}>().GetValue(1)));",
            *_sync("S_V"), "}"]


def launch_checks(kernel: ir.Kernel, ctx) -> list[tuple[str, str]]:
    """(condition, error) pairs the host checks: half rows have a 16-bit index slot, so at most 65535 elements."""
    checks = []
    for tl in ir.walk(kernel.body):
        if not isinstance(tl, ir.TileLoop) or tl.kind is not ir.LoopKind.ROWS:
            continue
        dtypes = {b.name: b.dtype for b in tl.buffers_decl}
        for s in ir.walk(tl.body):
            if isinstance(s, ir.VecOp) and s.api in ("ArgMax", "ArgMin") and dtypes[s.srcs[0]].size == 2:
                row = " * ".join(tl.shape.row)
                checks.append((f"static_cast<uint64_t>({row}) <= {HALF_INDEX_LIMIT}",
                               f"error[SHAPE]: {s.api.lower()} of {dtypes[s.srcs[0]]} rows at {ctx.source_name}:{s.span.line} "
                               f"reads the index from a 16-bit slot of ReduceMax/ReduceMin: rows of {row} elements must "
                               f"be at most {HALF_INDEX_LIMIT}; cast the rows to f32 first"))
    return list(dict.fromkeys(checks))
