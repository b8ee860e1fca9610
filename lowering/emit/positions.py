"""Positions in row loops (`col_index()`, `row_index()`): whole i32 rows of column or row indices.

`col_index()` is one `CreateVecIndex(row, 0, rowLen_)` per row of the tile (dst[j] = j; ascendc_next.md §3.4,
A2 dtypes int16, half, int32, float); `row_index()` one `Duplicate(row, g % P, rowLen_)` per row, g the row's global
number (`rowStart_ + tileRow_ + i`: the core's first row, set at Init, plus the tile's first row, set by
CopyIn as slot accumulators do) and P the loop's last row symbol. Rows start rowPitch_ elements apart, whole
256-byte repeats, so every row's start is 32-byte aligned. Rows longer than UB (emit/chunk.py): per column
chunk of the current row, `CreateVecIndex(chunk, c0, count)` with c0 the chunk's first column (`chunkCol_`,
set by the pass's CopyIn) and `Duplicate(chunk, g % P, count)` with g = `rowStart_ + rowOffset_ / rowLen_`.
`col_index() - row_index()` (and comparisons of the two, as (col - row) OP 0: legalize.py) starts each row at
-(g % P) (CreateVecIndex).

Session 34: whole-row tiles are filled by doubling, not one instruction per row. The tile's rows split into runs
of one period (g % P counts up by one from row to row; `col_index()` is one run: every row is the same); the first
row of a run is seeded over the whole pitch (CreateVecIndex / Duplicate of rowPitch_ elements: the pad columns get
values too, so every later read is of written UB), then rows [h, h + n) of the run are rows [0, n) plus the
shift (0 for `col_index()`, +h for `row_index()`, -h for `col - row`), one int32 `Adds` over n * rowPitch_
elements, for h = 1, 2, 4, ... (n = min(h, run - h)): 1 + ceil(log2(run)) instructions per run instead of one
per row (tril f16 at 16 x 256 x 256: 43 rows per tile, 7 instructions). A period shorter than the tile (P = 1:
one row per run) degrades to one seed per row, as before.
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
    if s.api == "ColIndex":  # every row alike: one run over the whole tile
        seed = f"CreateVecIndex({s.dst}[a * rowPitch_], static_cast<int32_t>(0), static_cast<uint32_t>(rowPitch_));"
        run, shift = "count - a", "0"
    else:
        run = f"count - a < {period} - r ? count - a : static_cast<uint32_t>({period} - r)"
        if s.api == "ColMinusRow":  # col_index() - row_index(): j - i from -i
            seed = (f"CreateVecIndex({s.dst}[a * rowPitch_], -static_cast<int32_t>(r), "
                    "static_cast<uint32_t>(rowPitch_));")
            shift = "-static_cast<int32_t>(h)"
        else:
            seed = f"Duplicate({s.dst}[a * rowPitch_], static_cast<int32_t>(r), static_cast<int32_t>(rowPitch_));"
            shift = "static_cast<int32_t>(h)"
    first = [] if s.api == "ColIndex" else [
        f"    const uint64_t r = static_cast<uint64_t>(rowStart_ + tileRow_ + a) % static_cast<uint64_t>({period});"]
    return ["for (uint32_t a = 0; a < count;) {  // runs of rows of one period, each filled by doubling",
            *first,
            f"    const uint32_t run = {run};",
            f"    {seed}",
            "    for (uint32_t h = 1; h < run; h *= 2) {  // rows [h, h + n) = rows [0, n) + the shift",
            "        const uint32_t n = run - h < h ? run - h : h;",
            f"        Adds({s.dst}[(a + h) * rowPitch_], {s.dst}[a * rowPitch_], {shift}, "
            "static_cast<int32_t>(n * rowPitch_));",
            "    }",
            "    a += run;",
            "}"]


def chunk_lines(s: ir.VecOp, period: str) -> list[str]:
    """The same over one column chunk (`count` elements from column `chunkCol_`) of the current row."""
    row = f"static_cast<int32_t>((rowStart_ + rowOffset_ / rowLen_) % {period})"
    if s.api == "ColIndex":
        return [f"CreateVecIndex({s.dst}, static_cast<int32_t>(chunkCol_), count);"]
    if s.api == "ColMinusRow":
        return [f"CreateVecIndex({s.dst}, static_cast<int32_t>(chunkCol_) - {row}, count);"]
    return [f"Duplicate({s.dst}, {row}, static_cast<int32_t>(count));"]
