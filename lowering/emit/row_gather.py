"""Rows chosen by an index tensor (`load(w[idx[r], :])`, ascend_dsl/parser_index.py): the copy-in of a row gather.

The API subset has no DMA gather, so the tile is assembled row by row: the scalar unit reads row i's
number from the index tensor in GM (`GlobalTensor::GetValue`, as per-channel values are read), a negative
number counts from the end (PyTorch's `w[idx]`), and one GM -> UB copy of rowLen_ elements moves row `idx[i]`
of `w` to UB row i (rows rowPitch_ apart, as every whole-row tile). A number outside [-V, V) makes that copy
read outside `w`'s GM buffer: the emulator reports it (GM-OOB); on hardware it reads whatever lies there.
One copy per row costs a DMA issue per row (about the cost of a contiguous copy when rows are 1 KB or
longer; short rows are issue-bound). Rows longer than UB run in chunked passes (emit/chunk.py), each
chunk copied from the picked row (`chunk_copy_in_lines`).
"""

from __future__ import annotations

from ascend_dsl import ir


def gathered_tensors(kernel: ir.Kernel) -> dict[str, ir.TensorParam]:
    """The tensors read through an index tensor, by name (their GM view is the whole tensor)."""
    names = {s.tensor for s in ir.walk(kernel.body) if isinstance(s, ir.CopyIn) and s.index.by}
    names |= {e.tensor for s in ir.walk(kernel.body) if isinstance(s, ir.VALUE_STMTS)
              for e in ir.walk_expr(s.value) if isinstance(e, ir.Load) and e.index.by}
    return {p.name: p for p in kernel.tensors if p.name in names}


def gm_view_lines(p: ir.TensorParam, gm: str, base: str) -> list[str]:
    """The whole-tensor GM view of gathered tensor `p` ([V, *row]) and its row count member."""
    return [f"{gm}Rows_ = tiling.{p.shape[0]};  // rows of '{p.name}' that an index may pick",
            f"{gm}.SetGlobalBuffer({base}, static_cast<uint64_t>({gm}Rows_) * rowLen_);"]


def copy_in_lines(s: ir.CopyIn, queue: str, ctype: str, gm: str, index_gm: str, index_ctype: str) -> list[str]:
    """Alloc the tile's buffer, copy row `index[offset + i]` of the gathered tensor into UB row i, enqueue."""
    return [f"LocalTensor<{ctype}> {s.buffer} = {queue}.AllocTensor<{ctype}>();",
            f"for (uint32_t i = 0; i < count; ++i) {{  // row i <- row {s.index.by}[i] of {s.tensor}",
            f"    int64_t row = static_cast<int64_t>({index_gm}.GetValue(offset + i));"
            + ("" if index_ctype == "int64_t" else f"  // {index_ctype} row numbers"),
            f"    if (row < 0) {{ row += static_cast<int64_t>({gm}Rows_); }}  // from the end, as w[idx] in PyTorch",
            f"    CopyGmToUb({s.buffer}[i * rowPitch_], {gm}[static_cast<uint64_t>(row) * rowLen_], rowLen_);",
            "}", f"{queue}.EnQue({s.buffer});"]


def chunk_copy_in_lines(s: ir.CopyIn, queue: str, ctype: str, gm: str, index_gm: str) -> list[str]:
    """Chunked rows (emit/chunk.py): `count` elements at column `offset` of the row the index picks for the
    current row (rowOffset_ / rowLen_ of the core's share)."""
    return [f"LocalTensor<{ctype}> {s.buffer} = {queue}.AllocTensor<{ctype}>();",
            f"{{  // the chunk of row {s.index.by}[r] of {s.tensor}",
            f"    int64_t row = static_cast<int64_t>({index_gm}.GetValue(rowOffset_ / rowLen_));",
            f"    if (row < 0) {{ row += static_cast<int64_t>({gm}Rows_); }}  // from the end, as w[idx] in PyTorch",
            f"    CopyGmToUb({s.buffer}, {gm}[static_cast<uint64_t>(row) * rowLen_ + offset], count);",
            "}", f"{queue}.EnQue({s.buffer});"]


def member_lines(kernel: ir.Kernel, gm_name) -> list[str]:
    """Kernel class members: the row count of each gathered tensor."""
    return [f"int64_t {gm_name(n)}Rows_ = 0;" for n in gathered_tensors(kernel)]
