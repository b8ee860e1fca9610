"""Positions in row loops (`col_index()`, `row_index()`): whole i32 rows of column or row indices.

`col_index()` is one `CreateVecIndex(row, 0, rowLen_)` per row of the tile (dst[j] = j; ascendc_next.md §3.4,
A2 dtypes int16, half, int32, float); `row_index()` one `Duplicate(row, g % P, rowLen_)` per row, g the row's global
number (`rowStart_ + tileRow_ + i`: the core's first row, set at Init, plus the tile's first row, set by
CopyIn as slot accumulators do) and P the loop's last row symbol. Rows start rowPitch_ elements apart, whole
256-byte repeats, so every row's start is 32-byte aligned. Rows longer than UB (emit/chunk.py): per column
chunk of the current row, `CreateVecIndex(chunk, c0, count)` with c0 the chunk's first column (`chunkCol_`,
set by the pass's CopyIn) and `Duplicate(chunk, g % P, count)` with g = `rowStart_ + rowOffset_ / rowLen_`.
`col_index() - row_index()` (and comparisons of the two, as (col - row) OP 0: legalize.py) is one
`CreateVecIndex` per row starting at -(g % P): the tril / triu / causal masks cost one instruction per row.
"""

from __future__ import annotations

from ascend_dsl import ir

APIS = ("ColIndex", "RowIndex", "ColMinusRow")


def used(kernel: ir.Kernel) -> bool:
    """Whether a row loop of `kernel` reads a position."""
    return any(isinstance(s, ir.VecOp) and s.api in APIS for s in ir.walk(kernel.body))


def uses_col(tl: ir.TileLoop) -> bool:
    """Whether a (chunk pass) loop reads `col_index()` (its Compute needs the chunk's first column)."""
    return any(isinstance(s, ir.VecOp) and s.api in ("ColIndex", "ColMinusRow") for s in ir.walk(tl.body))


def uses_row(tl: ir.TileLoop) -> bool:
    """Whether a tile loop reads `row_index()` (its Compute needs the tile's first row)."""
    return any(isinstance(s, ir.VecOp) and s.api in ("RowIndex", "ColMinusRow") for s in ir.walk(tl.body))


def row_lines(s: ir.VecOp, period: str) -> list[str]:
    """The C++ of one position instruction over the tile's `count` rows; `period`: P as a C++ expression."""
    row = f"static_cast<int32_t>((rowStart_ + tileRow_ + i) % {period})"
    if s.api == "ColIndex":
        body = f"    CreateVecIndex({s.dst}[i * rowPitch_], static_cast<int32_t>(0), static_cast<uint32_t>(rowLen_));"
    elif s.api == "ColMinusRow":  # col_index() - row_index(): j - i from -i
        body = f"    CreateVecIndex({s.dst}[i * rowPitch_], static_cast<int32_t>(-{row}), static_cast<uint32_t>(rowLen_));"
    else:
        body = (f"    Duplicate({s.dst}[i * rowPitch_], static_cast<int32_t>((rowStart_ + tileRow_ + i) % {period}), "
                "static_cast<int32_t>(rowLen_));")
    return ["for (uint32_t i = 0; i < count; ++i) {", body, "}"]


def chunk_lines(s: ir.VecOp, period: str) -> list[str]:
    """The same over one column chunk (`count` elements from column `chunkCol_`) of the current row."""
    row = f"static_cast<int32_t>((rowStart_ + rowOffset_ / rowLen_) % {period})"
    if s.api == "ColIndex":
        return [f"CreateVecIndex({s.dst}, static_cast<int32_t>(chunkCol_), count);"]
    if s.api == "ColMinusRow":
        return [f"CreateVecIndex({s.dst}, static_cast<int32_t>(chunkCol_) - {row}, count);"]
    return [f"Duplicate({s.dst}, {row}, static_cast<int32_t>(count));"]
