"""A flat tile's accumulated reduction (`total += sum(v)` over a flat tile) with its halves folded in place.

The count form of ReduceSum / ReduceMax / ReduceMin costs about 7 cycles per 256-byte repeat, an element-wise Add /
Max / Min 2 (ascendc.md §5.5). Whole rows fold their halves first (emit/row_fold.py, session 33); a flat tile's
reduction into an accumulator (the losses' `total += sum(d * d)`: a whole tile of up to several thousand
elements) still ran the count form over the tile: 86 repeats of f32 at 16 x 16384, about 615 cycles per core
against about 260 folded. A flat tile has no row scratch to fold into, and a scratch of half a tile would take UB
the tile needs, so the halves are folded into the reduced value's own buffer when nothing reads that buffer again
in the tile body before it is written (the value is dead: a temporary such as `d * d`, or an input tile used only
by the sum). Otherwise, and for buffers that live across tiles (row vectors copied once per core, box
reductions), the count form stays. The fold and its thresholds are row_fold's (`WORTH`); the sum adds in a
different order (pairwise halves: no less accurate); Max / Min fold NaN through as the count form does.
"""

from __future__ import annotations

from ascend_dsl import ir

from . import row_fold


def _reads(s) -> set[str]:
    """The UB buffers statement `s` reads."""
    match s:
        case ir.VecOp():
            return {o for o in s.srcs if isinstance(o, str)}
        case ir.PerRow():
            return {o for op in s.ops for o in op.srcs if isinstance(o, str)} | ({s.col} if s.col else set())
        case ir.Accumulate() | ir.SlotAccumulate():
            return {x.name for x in ir.walk_expr(s.value) if isinstance(x, ir.Ref)}
        case ir.CopyOut():
            return {s.buffer}
    return set()


def _writes(s) -> set[str]:
    match s:
        case ir.VecOp():
            return {s.dst}
        case ir.PerRow():
            return {op.dst for op in s.ops}
        case ir.CopyIn():
            return {s.buffer}
    return set()


def dead_after(tl: ir.TileLoop) -> frozenset[int]:
    """ids of the loop's Accumulate statements over a flat tile whose buffer nothing reads afterwards in the tile
    body before writing it (statements in stage order: copy-in, compute, copy-out), and that is a plain tile value
    (VECCALC or VECIN, role VALUE, layout FLAT): the ones emitted with the fold in place."""
    decls = {b.name: b for b in tl.buffers_decl}
    body = [s for stage in tl.body for s in (stage.body if isinstance(stage, ir.Stage) else (stage,))]
    out = set()
    for i, s in enumerate(body):
        if not (isinstance(s, ir.Accumulate) and isinstance(s.value, ir.Ref) and s.value.name in decls):
            continue
        b = decls[s.value.name]
        if (b.role is not ir.BufferRole.VALUE or b.layout is not ir.Layout.FLAT
                or b.position not in (ir.Position.VECCALC, ir.Position.VECIN)):
            continue
        for later in body[i + 1:]:
            if b.name in _reads(later):
                break
            if b.name in _writes(later):
                out.add(id(s))
                break
        else:
            out.add(id(s))
    return frozenset(out)


def lines(api: str, out: str, buf: str, tmp: str, ctype: str) -> list[str]:
    """C++ lines reducing the tile's `count` elements of `buf` into `out` with `api`, its halves folded into `buf`
    itself; `tmp` is the count form's scratch where folding does not pay (fewer than 8 repeats)."""
    return row_fold.lines(api, out, buf, tmp, ctype, count="static_cast<int32_t>(count)", n="count", fold=buf,
                         what="the tile (in place: emit/flat_fold.py)")
