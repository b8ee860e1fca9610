"""A flat tile's accumulated reduction (`total += sum(v)` over a flat tile) with its halves folded in place.

The count form of ReduceSum / ReduceMax / ReduceMin costs about 7 cycles per 256-byte repeat, an element-wise Add /
Max / Min 2 (ascendc.md §5.5). Whole rows fold their halves first (emit/row_fold.py, session 33); a flat tile's
reduction into an accumulator (the losses' `total += sum(d * d)`: a whole tile of up to several thousand
elements) still ran the count form over the tile: 86 repeats of f32 at 16 x 16384, about 615 cycles per core
against about 260 folded. A flat tile has no row scratch to fold into, and a scratch of half a tile would take UB
the tile needs, so the halves are folded into the reduced value's own buffer when nothing reads that buffer again
in the tile body before it is written (the value is dead: a temporary such as `d * d`, or an input tile used only
by the sum). Otherwise, and for buffers that live across tiles (row vectors copied once per core, box
reductions), the count form stays: lowering/passes/plan_flat_folds.py decides and marks the Accumulate
`fold_in_place`; this module renders it. The fold and its thresholds are row_fold's (`WORTH`); the sum adds in a
different order (pairwise halves: no less accurate); Max / Min fold NaN through as the count form does.
"""

from __future__ import annotations

from . import row_fold


def lines(api: str, out: str, buf: str, tmp: str, ctype: str) -> list[str]:
    """C++ lines reducing the tile's `count` elements of `buf` into `out` with `api`, its halves folded into `buf`
    itself; `tmp` is the count form's scratch where folding does not pay (fewer than 8 repeats)."""
    return row_fold.lines(api, out, buf, tmp, ctype, count="static_cast<int32_t>(count)", n="count", fold=buf,
                         what="the tile (in place: emit/flat_fold.py)")
