"""Element scatter along the last axis of whole rows (`scatter` / `scatter_add`, ascend_dsl/intrinsics.py).

The API subset has no scatter instruction with a defined order for repeated indices, so the rows are copied
to dst by the vector unit (`DataCopy`, UB -> UB) and the scalar unit then walks each row's columns in order:
`dst[i, idx[i, j]] = src[i, j]` (scatter) or `+= src[i, j]` (scatter_add; f16 adds in float and rounds each
sum, as PyTorch's sequential f16 adds do; i32 adds as integers). One core owns each row and the columns run
in order, so repeated indices are deterministic on hardware too: scatter keeps the last column's value,
scatter_add adds in column order. Each row is a view of rowLen_ elements (`LocalTensor::SetSize`), so an index
outside [0, D) (a negative one too: it wraps to a huge uint32) is reported by the emulator (UB-OOB at the
SetValue) and is undefined on hardware (it writes outside the row). Cost: D scalar steps per row (and a
GetValue each for the index and the source): meant for correctness, not speed.
"""

from __future__ import annotations

from ascend_dsl.dtypes import DType

APIS = ("Scatter", "ScatterAdd")


def row_lines(api: str, dst: str, rows: str, idx: str, idx_row: bool, src: str, src_tile: bool, dtype: DType,
              ctype: str, sync) -> list[str]:
    """The C++ of one scatter over the tile's `count` rows. idx_row: one index row for every row (load(idx[:]));
    src: a buffer (whole rows) or a C++ scalar expression of `ctype`."""
    at = "j" if idx_row else "i * rowPitch_ + j"
    value = f"{src}.GetValue(i * rowPitch_ + j)" if src_tile else src
    if api == "ScatterAdd":
        total = (f"row.GetValue(col) + {value}" if not dtype.is_float else
                 f"static_cast<{ctype}>(static_cast<float>(row.GetValue(col)) + static_cast<float>({value}))")
        write = f"        row.SetValue(col, {total});"
    else:
        write = f"        row.SetValue(col, {value});"
    return [f"DataCopy({dst}, {rows}, static_cast<uint32_t>(count * rowPitch_));  // the rows, then the scattered elements",
            *sync("V_S", "the scalar unit writes the copy and reads the indices"),
            "for (uint32_t i = 0; i < count; ++i) {",
            f"    LocalTensor<{ctype}> row = {dst}[i * rowPitch_];",
            "    row.SetSize(static_cast<uint32_t>(rowLen_));  // a column outside [0, D) is out of the row (UB-OOB)",
            "    for (uint32_t j = 0; j < static_cast<uint32_t>(rowLen_); ++j) {  // in column order: repeats are deterministic",
            f"        const uint32_t col = static_cast<uint32_t>({idx}.GetValue({at}));",
            write, "    }", "}", *sync("S_V", "the vector unit reads the scattered rows")]
