"""argmax / argmin over whole rows (`argmax(v, axis=1)`): per row, ReduceMax / ReduceMin with calIndex.

With calIndex the result holds [value, index], the index an integer bit pattern in a T slot
(uint32 for float, uint16 for half), and the first occurrence of the extreme wins (ascendc_next.md §3.6,
CANN ReduceMax.md), PyTorch's tie rule. With half rows an index above 65535 does not fit the slot: the host
refuses such rows (`launch_checks`). NaN: the vector unit does not promise PyTorch's rule (a NaN is the maximum).

Session 34 (ascend910b): the vector unit moves the indices. ReduceMax's dst needs only pair alignment
(ReduceMax.md: 2 x sizeof(T) with calIndex; the emulator checks it), so row i writes its pair at element 2i of
the i64 output tile read as T (count pairs of 2 T fit its count i64); GatherMask's built-in pattern 2 (odd lanes)
packs the index slots; float: the uint32 patterns are the i32 indices; half: the uint16 patterns, read as int16,
go to f32 (int16 -> float, CAST_NONE) and, for rows longer than 32768 (single-buffered tiles), patterns above 32767
(negative as int16) get 65536 back (ind = min(max(v, -1), 0) is -1 exactly for them: v - 65536 * ind), then
f32 -> int32 (CAST_RINT; exact, integral).
Last, Cast int32 -> int64 (CAST_NONE; A2 only, docs/design.md "Cast pairs") into the output tile. One
instruction per row and a few per tile, no scalar access and no V <-> S hand-off per row. 310P has no
int32 -> int64 Cast: there the scalar unit reads each index and writes the row's i64 (`ARG_INDEX` scratch absent).
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

HALF_INDEX_LIMIT = 65535


def _sync(event: str) -> list[str]:  # as shared.sync (this module is imported by shared: no import back)
    return [f"    SetFlag<HardEvent::{event}>(EVENT_ID0);", f"    WaitFlag<HardEvent::{event}>(EVENT_ID0);"]


def row_lines(s: ir.VecOp, out: str, tmp: str, dtype: DType, idx: str | None = None) -> list[str]:
    """dst[i] = the column of row i's first max (ArgMax) / min (ArgMin) of `src` (rows rowPitch_ apart in UB).
    idx: the ARG_INDEX scratch (i32, one per row): the vector path; None: the scalar unit moves each index."""
    (src,) = s.srcs
    api = {"ArgMax": "ReduceMax", "ArgMin": "ReduceMin"}[s.api]
    if idx is not None:
        return _vector_lines(api, s.dst, src, tmp, dtype, idx)
    bits = "uint16_t" if dtype.size == 2 else "uint32_t"
    return ["for (uint32_t i = 0; i < count; ++i) {",
            f"    {api}({out}, {src}[i * rowPitch_], {tmp}, static_cast<int32_t>(rowLen_), true);  // [value, index]",
            *_sync("V_S"),
            f"    {s.dst}.SetValue(i, static_cast<int64_t>({out}.ReinterpretCast<{bits}>().GetValue(1)));",
            *_sync("S_V"), "}"]


def _vector_lines(api: str, dst: str, src: str, tmp: str, dtype: DType, idx: str) -> list[str]:
    """Pairs into the i64 output tile read as T, the index slots packed by GatherMask, converted to i64 (above)."""
    t = "half" if dtype.size == 2 else "float"
    pairs = f"{dst}.ReinterpretCast<{t}>()"
    lanes = 256 // dtype.size  # lanes per 256-B repeat; 2 * count slots in whole repeats
    lines = ["for (uint32_t i = 0; i < count; ++i) {  // row i's [value, index] pair at element 2i",
             f"    {api}({pairs}[2 * i], {src}[i * rowPitch_], {tmp}, static_cast<int32_t>(rowLen_), true);",
             "}",
             "{",
             "    uint64_t kept = 0;  // the index slots (odd lanes), packed",
             f"    const uint16_t repeats = static_cast<uint16_t>((2 * count + {lanes - 1}) / {lanes});"]
    if dtype.size == 4:
        lines += [f"    GatherMask({idx}, {dst}.ReinterpretCast<int32_t>(), static_cast<uint8_t>(2), false, 0,",
                  "               GatherMaskParams{1, repeats, 8, 0}, kept);"]
    else:
        lines += [f"    LocalTensor<float> v = {dst}.ReinterpretCast<float>();  // the pairs are read: reused",
                  f"    LocalTensor<float> ind = {idx}.ReinterpretCast<float>();",
                  f"    GatherMask({idx}.ReinterpretCast<int16_t>(), {dst}.ReinterpretCast<int16_t>(), static_cast<uint8_t>(2),",
                  "               false, 0, GatherMaskParams{1, repeats, 8, 0}, kept);",
                  f"    Cast(v, {idx}.ReinterpretCast<int16_t>(), RoundMode::CAST_NONE, count);  // int16: patterns > 32767 negative",
                  "    if (rowLen_ > 32768) {  // indices above 32767 are possible (single-buffered rows)",
                  "        Maxs(ind, v, -1.0f, count);",
                  "        Mins(ind, ind, 0.0f, count);  // -1 exactly where negative",
                  "        Muls(ind, ind, 65536.0f, count);",
                  "        Sub(v, v, ind, count);  // the uint16 pattern's value",
                  "    }",
                  f"    Cast({idx}, v, RoundMode::CAST_RINT, count);"]
    lines += [f"    Cast({dst}, {idx}, RoundMode::CAST_NONE, count);  // int32 -> int64",
              "}"]
    return lines


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
