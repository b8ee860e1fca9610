"""Per-row values against whole rows in O(1) instructions per tile (lowering/passes/plan_row_value_blocks.py).

`Brcb(blocks, values, ceil(count / 8), BrcbRepeatParams(1, 8))` spreads the tile's per-row values to one 32-byte
block each (ascendc_next.md, Brcb: 8 source elements per repeat, block j of a repeat holds element j); the op
then runs as the level-0 binary instruction (ascendc.md: `Add(dst, src0, src1, mask, repeatTimes,
BinaryRepeatParams)`) over strips of one repeat's columns and up to 255 rows: the row operands advance a row
pitch per repeat, the blocks operand one block per repeat with block stride 0 (all of a repeat's lanes read the
row's value). The pitch is a uint8 count of 32-byte blocks, so rows more than 255 blocks apart, and tiles of few
long rows (more strips than rows), go row by row as before: the scalar unit reads each value (`fallback`).
"""

from __future__ import annotations

from ..row_value_ops import RowValueBinary

#: Brcb reads 8 values per repeat, at most 255 repeats per instruction; 254 keep each call's first value
#: 32-byte aligned for 16-bit values too.
ROWS_PER_BRCB = 8 * 254


def lines(op: RowValueBinary, values: str, blocks: str, ctype: str, fallback: list[str]) -> list[str]:
    """C++ lines of `op` over `count` rows of rowLen_ elements (rowPitch_ apart) with the per-row `values`, using the
    `blocks` scratch; `fallback`: the row-by-row lines (taken when the strided form does not apply or costs more)."""
    row = f"{blocks}[r * perBlock]"
    srcs = (row, f"{op.x}[r * rowPitch_ + c]") if op.values_first else (f"{op.x}[r * rowPitch_ + c]", row)
    strides = "0, 1, rowBlocks, 1, rowBlocks" if op.values_first else "1, 0, rowBlocks, rowBlocks, 1"
    return [
        "{",
        f"    constexpr uint32_t lanes = 256 / sizeof({ctype});  // elements per repeat",
        f"    constexpr uint32_t perBlock = 32 / sizeof({ctype});  // elements per 32-byte block",
        f"    const uint8_t rowBlocks = static_cast<uint8_t>(rowPitch_ * sizeof({ctype}) / 32);  // a row, in blocks",
        f"    if (rowPitch_ * sizeof({ctype}) / 32 <= 255 && (rowLen_ + lanes - 1) / lanes * ((count + 254) / 255) + "
        f"(count + {ROWS_PER_BRCB - 1}) / {ROWS_PER_BRCB} < count) {{",
        f"        for (uint32_t r = 0; r < count; r += {ROWS_PER_BRCB}) {{  // each row's value to a 32-byte block",
        f"            const uint32_t n = count - r < {ROWS_PER_BRCB} ? count - r : {ROWS_PER_BRCB};",
        f"            Brcb({blocks}[r * perBlock], {values}[r], static_cast<uint8_t>((n + 7) / 8), BrcbRepeatParams(1, 8));",
        "        }",
        "        for (uint32_t c = 0; c < rowLen_; c += lanes) {",
        "            for (uint32_t r = 0; r < count; r += 255) {",
        f"                {op.api}({op.dst}[r * rowPitch_ + c], {srcs[0]}, {srcs[1]}, "
        "static_cast<uint64_t>(rowLen_ - c < lanes ? rowLen_ - c : lanes),",
        f"                    static_cast<uint8_t>(count - r < 255 ? count - r : 255), BinaryRepeatParams(1, {strides}));",
        "            }",
        "        }",
        "    } else {",
        *("        " + ln for ln in fallback),
        "    }",
        "}",
    ]
