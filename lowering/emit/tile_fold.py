"""Row reductions of a whole tile at once (`sum / mean / max / min(v, axis=1)` of whole rows): repeat columns folded
across all the tile's rows by one instruction each, then one short reduction per row (session 34).

The per-row path (emit/row_fold.py) issues, for every row, its own fold instructions and a count-form ReduceSum /
ReduceMax / ReduceMin over the rest: about 20 cycles of issue head per instruction and 7 cycles per 256-byte repeat
of the reduction (ascendc.md §5.5: VCADD 7, binary ops 2). Rows of a few repeats (softmax over 512 floats, layer norm
over 768) pay mostly heads and reduction repeats. Here the rows' repeats are folded column by column: repeat column c
of every row of the tile is one element-wise Add / Max / Min (level-0 form, one repeat per row: the rows rowPitch_
apart are the repeat stride), the upper half of the columns onto the lower half into the `FOLD_TMP` scratch (the
tile's rows, each half a row's repeats: the source is read later, e.g. softmax's x - max), an odd column left over folded onto
column 0, until each row holds one repeat; then one count-form reduction of a single repeat per row writes row i's
value to element i of the per-row values. Per row: one head instead of 2-6 and 2 cycles per folded repeat instead
of 7; per tile: (repeats - 1) fold instructions per 255 rows (the repeat count of one instruction is at most 255).

Taken at run time when it is cheaper: rows of whole repeats (rowLen_ a multiple of the lanes of a repeat: no pad
elements are folded in), at least 2 repeats, a row pitch of at most 255 blocks (the repeat stride is 8 bits), and
at least MIN_ROWS rows in the tile (fewer rows: the fold instructions' heads are shared by too few); else the
per-row path. The scratch is sized on the host and in the kernel by the same rule (`init_bytes` / `host_bytes`): one
32-byte block when the fold cannot run for the tile's rows (rows of more than 255 blocks, tiles of fewer than
MIN_ROWS rows), so long rows keep their UB. Sums add in pairwise order like the per-row fold (no less accurate); Max / Min carry NaN like it.
"""

from __future__ import annotations

from .row_fold import FOLD

#: the tile-wide fold pays from this many rows per tile (per row: (repeats - 1) x 5 cycles saved against
#: (repeats - 1) x 20 cycles of fold heads per tile: from 4 rows on)
MIN_ROWS = 4


def applies(api: str) -> bool:
    return api in FOLD


def _fold_pitch(padded: str, ctype: str) -> str:
    """Elements per row of the scratch: the lower half of a row's repeats (the first level writes only those)."""
    return f"({padded} / (256 / sizeof({ctype})) / 2 * (256 / sizeof({ctype})))"


def _sized(rows: str, padded: str, ctype: str) -> str:
    """Bytes of the scratch for tiles of `rows` rows padded to `padded` elements: 32 (unused) unless the fold can
    run (at least MIN_ROWS rows, at least 2 repeats, a pitch of at most 255 blocks), so long rows keep their UB."""
    return (f"({rows} >= {MIN_ROWS} && {padded} * sizeof({ctype}) / 32 <= 255 && {padded} / (256 / sizeof({ctype})) >= 2"
            f" ? ({rows} * {_fold_pitch(padded, ctype)} * sizeof({ctype}) + 31) / 32 * 32 : 32)")


def init_bytes(ctype: str, tile: str) -> str:
    """The kernel's InitBuffer length (tiles of `tile` rows, rowPitch_ elements each)."""
    return _sized(tile, "rowPitch_", ctype)


def host_bytes(ctype: str) -> str:
    """The same on the host (tiling.h.jinja: tiles of r rows of `padded` elements)."""
    return _sized("r", "padded", ctype)


def lines(api: str, dst: str, src: str, fold: str, tmp: str, ctype: str, per_row: list[str]) -> list[str]:
    """C++ reducing each of the tile's `count` rows of `src` (rows rowPitch_ apart) into `dst[i]` through the tile
    scratch `fold` (rows `foldPitch` apart: half a row's repeats) and the row scratch `tmp`; `per_row`: the per-row
    path's lines (the else)."""
    op = FOLD[api]
    return [
        "{",
        f"    constexpr uint32_t lanes = 256 / sizeof({ctype});  // elements per repeat",
        f"    const uint32_t rowBlocks = static_cast<uint32_t>(rowPitch_ * sizeof({ctype}) / 32);  // the repeat stride",
        "    uint32_t reps = static_cast<uint32_t>(rowLen_ / lanes);",
        f"    if (rowLen_ % lanes == 0 && reps >= 2 && rowBlocks <= 255 && count >= {MIN_ROWS}) {{  // emit/tile_fold.py",
        f"        const uint32_t foldPitch = static_cast<uint32_t>({_fold_pitch('rowPitch_', ctype)});",
        f"        const uint8_t fb = static_cast<uint8_t>(foldPitch * sizeof({ctype}) / 32);  // the scratch's row stride",
        "        const BinaryRepeatParams first(1, 1, 1, fb, static_cast<uint8_t>(rowBlocks), static_cast<uint8_t>(rowBlocks));",
        "        const BinaryRepeatParams next(1, 1, 1, fb, fb, fb);",
        "        for (uint32_t level = 0; reps > 1; ++level) {",
        "            const uint32_t h = reps / 2;  // columns [h, 2h) onto [0, h); an odd last column onto column 0",
        f"            const LocalTensor<{ctype}>& from = level == 0 ? {src} : {fold};",
        "            const uint32_t pitch = level == 0 ? static_cast<uint32_t>(rowPitch_) : foldPitch;",
        "            const BinaryRepeatParams& stride = level == 0 ? first : next;",
        "            for (uint32_t r = 0; r < count; r += 255) {",
        "                const uint8_t n = static_cast<uint8_t>(count - r < 255 ? count - r : 255);",
        "                for (uint32_t c = 0; c < h; ++c) {",
        f"                    {op}({fold}[r * foldPitch + c * lanes], from[r * pitch + c * lanes],",
        "                        from[r * pitch + (h + c) * lanes], static_cast<uint64_t>(lanes), n, stride);",
        "                }",
        "                if (reps > 2 * h) {",
        f"                    {op}({fold}[r * foldPitch], {fold}[r * foldPitch], from[r * pitch + 2 * h * lanes],",
        "                        static_cast<uint64_t>(lanes), n, BinaryRepeatParams(1, 1, 1, fb, fb, stride.src1RepStride));",
        "                }",
        "            }",
        "            reps = h;",
        "        }",
        "        for (uint32_t i = 0; i < count; ++i) {  // one repeat left per row",
        f"            {api}({dst}[i], {fold}[i * foldPitch], {tmp}, static_cast<int32_t>(lanes));",
        "        }",
        "    } else {",
        *("        " + line for line in per_row),
        "    }",
        "}",
    ]
