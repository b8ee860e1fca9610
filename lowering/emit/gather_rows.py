"""The C++ of a gather of a named tensor along its last dim on the vector unit (lowering/passes/plan_gather_rows.py):
the tile's x rows copied in, the index rows turned into byte offsets, one `Gather` per row.

x rows sit in UB `pitch` elements apart, pitch = D + 1 rounded up to a 32-byte block: at least one element after
each row is never written (the copy-in writes D per row). Offsets: Cast i64 -> i32 (saturating, ascendc.md §4.2;
an i32 index is read as is), Maxs -1, Mins D, Muls sizeof(T) (ascendc_next.md §3.1: Gather takes u32 byte offsets
from its src). So an index in [0, D) reads its element; one >= D reads the row's never-written padding element (the
emulator reports the undefined value reaching GM); a negative one is offset -sizeof(T), 4 GB as u32, outside UB
(UB-OOB in the emulator). Neither reads another row's data; on hardware both are undefined (PyTorch raises). The
interpreter reports INDEX for both (ascend_dsl/interpreter.py).
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from ..passes import plan_gather_rows

API, OFFSETS = plan_gather_rows.API, plan_gather_rows.OFFSETS  # the instructions this module writes
symbol = plan_gather_rows.symbol  # x's row length as a symbol or an integer


def _block(dtype: DType) -> int:
    return 32 // dtype.size


def pitch(of: str, dtype: DType, symbol: str = "{}_") -> str:
    """x's row pitch in UB (elements): D + 1 rounded up to whole 32-byte blocks. `symbol`: how a shape symbol is
    spelt (`{}_` the kernel member, `tiling.{}` in Init, `{}` on the host)."""
    d = of if of.isdigit() else symbol.format(of)
    b = _block(dtype)
    return f"(({d} + {b}) / {b} * {b})"


def init_bytes(b: ir.Buffer, tile: str) -> str:
    """InitBuffer bytes of the x rows of a tile of `tile` rows (the kernel member of x's row length: later loops
    carve UB in Process, where the tiling struct is out of scope)."""
    return f"{tile} * {pitch(b.of, b.dtype)} * sizeof({b.dtype.ctype})"


def host_bytes(b: ir.Buffer) -> str:
    """The same on the host, for tiles of `r` rows (tiling.h.jinja's ubBytes)."""
    return f"(r * {pitch(b.of, b.dtype, '{}')} * {b.dtype.size} + 31) / 32 * 32"


def copy_in_lines(s: ir.CopyIn, b: ir.Buffer, queue: str, ctype: str, gm: str) -> list[str]:
    """The tile's x rows (global rows rowStart_ + offset ..; x's GM view is the whole tensor) into UB rows pitch apart."""
    d = b.of if b.of.isdigit() else f"{b.of}_"
    return [f"LocalTensor<{ctype}> {s.buffer} = {queue}.AllocTensor<{ctype}>();",
            f"CopyRowsGmToUb({s.buffer}, {gm}[(rowStart_ + offset) * static_cast<uint64_t>({d})], count, "
            f"static_cast<uint32_t>({d}), static_cast<uint32_t>({pitch(b.of, b.dtype)}));  // the tile's rows of "
            f"'{s.tensor}'", f"{queue}.EnQue({s.buffer});"]


def offset_lines(s: ir.VecOp, index: ir.Buffer, d_of: str) -> list[str]:
    """GatherOffsets: dst = min(max(idx, -1), D) * sizeof(T), i32, over the index's rows (or its one row)."""
    idx, _ = s.srcs
    d = d_of if d_of.isdigit() else f"{d_of}_"
    n = "count * rowPitch_" if index.layout is ir.Layout.ROWS else "rowPitch_"
    first = ([f"Cast({s.dst}, {idx}, RoundMode::CAST_NONE, {n});  // i64 -> i32 saturates",
              f"Maxs({s.dst}, {s.dst}, static_cast<int32_t>(-1), {n});"] if index.dtype is DType.I64
             else [f"Maxs({s.dst}, {idx}, static_cast<int32_t>(-1), {n});"])
    return [*first, f"Mins({s.dst}, {s.dst}, static_cast<int32_t>({d}), {n});  // >= D: the row's padding element",
            f"Muls({s.dst}, {s.dst}, static_cast<int32_t>({dict(s.attrs)['size']}), {n});  // byte offsets"]


def compute_lines(s: ir.VecOp, rows: ir.Buffer, whole_rows: bool) -> list[str]:
    """dst[i, k] = x[g, idx[i, k]] (`whole_rows`: an offset row per tile row) or x[g, idx[k]] (one offset row)."""
    offsets, _, _, x_rows = s.srcs
    at = "[i * rowPitch_]" if whole_rows else ""
    return ["for (uint32_t i = 0; i < count; ++i) {",
            f"    Gather({s.dst}[i * rowPitch_], {x_rows}[i * {pitch(rows.of, rows.dtype)}], "
            f"{offsets}{at}.ReinterpretCast<uint32_t>(), 0u, static_cast<uint32_t>(rowLen_));", "}"]
