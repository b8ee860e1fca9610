"""One vector (the same `len` elements) against many rows of a UB tile, in few instructions (docs/design.md).

Row by row, an op of `len` elements per row costs one instruction per row, and each instruction its head
latency (docs/cost_model.md: ~20 cycles against 1-2 per 256-byte repeat), which dominates short rows. The
level-0 form (ascendc.md: `Add(dst, src0, src1, mask, repeatTimes, BinaryRepeatParams)`) instead runs one
instruction per strip of one repeat's columns and up to 255 rows: the row operands advance a row pitch per
repeat, the vector operand is re-read by every repeat (repeat stride 0). The pitch is a uint8 count of
32-byte blocks, so rows more than 255 blocks apart go row by row. Used by box broadcasts (emit/box.py) and by
row loops that combine whole rows with a `[D]` row vector (emit/shared.py `RowStageWriter.per_row`).
"""

from __future__ import annotations

#: Binary ops with the level-0 (mask, repeatTimes, BinaryRepeatParams) form.
APIS = ("Add", "Sub", "Mul", "Div", "Max", "Min")


def lines(api: str, dst: str, srcs: tuple[str, ...], strided: dict[str, bool], ctype: str, pitch: str, rows: str,
          length: str, row_by_row_if: str | None = None) -> list[str]:
    """C++ lines of `api(dst, *srcs)` over `rows` rows of `length` elements: operands with `strided[name]` are
    rows `pitch` elements apart (pitch * sizeof(ctype) a multiple of 32 bytes), the others one vector read by
    every row. `row_by_row_if`: a C++ condition under which the row-by-row form is cheaper (taken as well)."""

    def strip(o: str) -> str:
        return f"{o}[r * {pitch} + c]" if strided[o] else f"{o}[c]"

    strides = ", ".join("rowBlocks" if strided[o] else "0" for o in (dst, *srcs))
    per_row = ", ".join(f"{o}[r * {pitch}]" if strided[o] else o for o in srcs)
    fits = f"{pitch} * sizeof({ctype}) / 32 <= 255"
    return [
        "{",
        f"    constexpr uint32_t lanes = 256 / sizeof({ctype});  // elements per repeat",
        f"    const uint8_t rowBlocks = static_cast<uint8_t>({pitch} * sizeof({ctype}) / 32);  // a row, in 32-byte blocks",
        f"    if ({fits}{f' && !({row_by_row_if})' if row_by_row_if else ''}) {{",
        f"        for (uint32_t c = 0; c < {length}; c += lanes) {{",
        f"            for (uint32_t r = 0; r < {rows}; r += 255) {{",
        f"                {api}({strip(dst)}, {', '.join(strip(o) for o in srcs)}, "
        f"static_cast<uint64_t>({length} - c < lanes ? {length} - c : lanes),",
        f"                    static_cast<uint8_t>({rows} - r < 255 ? {rows} - r : 255), BinaryRepeatParams(1, 1, 1, {strides}));",
        "            }",
        "        }",
        "    } else {",
        f"        for (uint32_t r = 0; r < {rows}; ++r) {{",
        f"            {api}({dst}[r * {pitch}], {per_row}, {length});",
        "        }",
        "    }",
        "}",
    ]
