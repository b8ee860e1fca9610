"""Rows and per-row values broadcast over other split symbols (ascend_dsl/parser_broadcast.py): their copy-in.

Global row q of the loop reads row `(q / Stride_) % Period_` of the tensor (`Period_` its rows, `Stride_` the
product of the split's symbols after its run; no stride: `q % Period_`, the per-channel form). Per-row values
are read by the scalar unit one per row (as per-channel values); whole rows without a stride are copied in runs
of consecutive source rows (one CopyRows per run, up to the period's end); strided ones (runs of Stride_ rows
reading one row) one GM -> UB copy of rowLen_ elements per run, then, after an MTE2 -> V flag, a UB copy of that row
(rowPitch_ elements, its padding too) to the run's other rows. Every
computed row number lies in [0, Period_): the copies stay inside the tensor.
"""

from __future__ import annotations

from ascend_dsl import ir


def periodic(kernel: ir.Kernel) -> dict[str, ir.TileIndex]:
    """The tensors read with a period (per-channel values, broadcast rows), by name, with one of their indices."""
    out: dict[str, ir.TileIndex] = {}
    for s in ir.walk(kernel.body):
        if isinstance(s, ir.CopyIn) and s.index.period:
            out.setdefault(s.tensor, s.index)
        elif isinstance(s, ir.RowLoad) and s.period:
            out.setdefault(s.tensor, ir.TileIndex("r", False, period=s.period, stride=s.stride))
    return out


def source_row(q: str, gm: str, strided: bool) -> str:
    """The tensor's row read by global row `q` (a C++ expression)."""
    return f"(({q}) / {gm}Stride_) % {gm}Period_" if strided else f"({q}) % {gm}Period_"


def gm_view_lines(index: ir.TileIndex, gm: str, base: str) -> list[str]:
    """The whole-tensor GM view: Period_ rows (of rowLen_ elements for whole rows), and the stride."""
    lines = [f"{gm}Period_ = {' * '.join(f'tiling.{d.strip()}' for d in index.period.split('*'))};"]
    if index.stride:
        lines.append(f"{gm}Stride_ = {' * '.join(f'tiling.{d.strip()}' for d in index.stride.split('*'))};")
    size = f"{gm}Period_ * rowLen_" if index.rows else f"{gm}Period_"
    return [*lines, f"{gm}.SetGlobalBuffer({base}, {size});"]


def member_lines(kernel: ir.Kernel, gm_name) -> list[str]:
    out = []
    for n, index in periodic(kernel).items():
        gm = gm_name(n)
        read = f"{n}[(q / {index.stride}) % {index.period}]" if index.stride else f"{n}[q % {index.period}]"
        out.append(f"uint64_t {gm}Period_ = 0;  // rows n*C + c read {n}[c]" if not (index.stride or index.rows) else
                   f"uint64_t {gm}Period_ = 0;  // row q of the loop reads {read}")
        if index.stride:
            out.append(f"uint64_t {gm}Stride_ = 1;")
    return out


def copy_in_lines(s: ir.CopyIn, queue: str, ctype: str, gm: str, sync) -> list[str]:
    """Alloc the tile's buffer, fill it from the rows (or values) its global rows read, enqueue."""
    src = source_row("rowStart_ + offset + i", gm, bool(s.index.stride))
    if s.index.rows and not s.index.stride:  # consecutive rows read consecutive rows, up to the period's end
        return [f"LocalTensor<{ctype}> {s.buffer} = {queue}.AllocTensor<{ctype}>();",
                f"for (uint32_t i = 0; i < count;) {{  // broadcast: runs of consecutive rows of {s.tensor}",
                f"    const uint64_t src = {src};",
                f"    const uint32_t n = count - i < {gm}Period_ - src ? count - i : static_cast<uint32_t>({gm}Period_ - src);",
                f"    CopyRowsGmToUb({s.buffer}[i * rowPitch_], {gm}[src * rowLen_], n, rowLen_, rowPitch_);",
                "    i += n;", "}", f"{queue}.EnQue({s.buffer});"]
    if s.index.rows:  # runs of rows reading the same row: one copy from GM, the others copied in UB
        run = ["    const uint64_t q = rowStart_ + offset + i;",
               f"    const uint32_t n = count - i < {gm}Stride_ - q % {gm}Stride_ ? count - i "
               f": static_cast<uint32_t>({gm}Stride_ - q % {gm}Stride_);"]
        return [f"LocalTensor<{ctype}> {s.buffer} = {queue}.AllocTensor<{ctype}>();",
                f"for (uint32_t i = 0; i < count;) {{  // broadcast: each run of rows reading one row of {s.tensor}",
                *run, f"    CopyGmToUb({s.buffer}[i * rowPitch_], {gm}[((q / {gm}Stride_) % {gm}Period_) * rowLen_], rowLen_);",
                "    i += n;", "}", *sync("MTE2_V", "the run's first row is copied to the others"),
                "for (uint32_t i = 0; i < count;) {", *run,
                "    for (uint32_t k = 1; k < n; ++k) {",
                f"        DataCopy({s.buffer}[(i + k) * rowPitch_], {s.buffer}[i * rowPitch_], static_cast<uint32_t>(rowPitch_));",
                "    }", "    i += n;", "}", f"{queue}.EnQue({s.buffer});"]
    body = [f"    {s.buffer}.SetValue(i, {gm}.GetValue({src}));"]
    after = sync("S_V", "scalar writes before the vector unit reads them")
    return [f"LocalTensor<{ctype}> {s.buffer} = {queue}.AllocTensor<{ctype}>();",
            f"for (uint32_t i = 0; i < count; ++i) {{  // broadcast: each row reads its row of {s.tensor}",
            *body, "}", *after, f"{queue}.EnQue({s.buffer});"]


def chunk_copy_in_lines(s: ir.CopyIn, queue: str, ctype: str, gm: str) -> list[str]:
    """Chunked rows (emit/chunk.py): `count` elements at column `offset` of the row the current row reads."""
    src = source_row("rowStart_ + rowOffset_ / rowLen_", gm, bool(s.index.stride))
    return [f"LocalTensor<{ctype}> {s.buffer} = {queue}.AllocTensor<{ctype}>();",
            f"CopyGmToUb({s.buffer}, {gm}[static_cast<uint64_t>({src}) * rowLen_ + offset], count);  "
            f"// the chunk of the row of {s.tensor} this row reads",
            f"{queue}.EnQue({s.buffer});"]
