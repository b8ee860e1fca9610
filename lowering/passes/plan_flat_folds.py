"""Which flat-tile reductions fold their halves in place (emitted by lowering/emit/flat_fold.py).

A flat tile's reduction into an accumulator (`total += sum(d * d)`) folds the tile's halves into the reduced
value's own buffer when that costs nothing: the buffer is a plain tile value (VECCALC or VECIN, role VALUE, layout
FLAT) and no statement after the reduction in the tile body (stage order: copy-in, compute, copy-out) reads it
before writing it. Buffers that live across tiles (row vectors copied once per core, box reductions) and values
read again keep the count form. This pass decides, on the scheduled stages, and marks each such Accumulate
`fold_in_place`; the emitter only renders the mark.
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir

from ..context import PassContext
from ..rewrite import map_tile_bodies


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


def _foldable(tl: ir.TileLoop, later: list, s: ir.Accumulate) -> bool:
    """`s` (followed by `later` in the tile body) reduces a plain flat tile that is dead after it."""
    b = next((b for b in tl.buffers_decl if isinstance(s.value, ir.Ref) and b.name == s.value.name), None)
    if (b is None or b.role is not ir.BufferRole.VALUE or b.layout is not ir.Layout.FLAT
            or b.position not in (ir.Position.VECCALC, ir.Position.VECIN)):
        return False
    for t in later:
        if b.name in _reads(t):
            return False
        if b.name in _writes(t):
            return True
    return True


def mark(tl: ir.TileLoop) -> ir.TileLoop:
    """`tl` with its dead flat-tile reductions marked `fold_in_place`."""
    body = [s for stage in tl.body for s in (stage.body if isinstance(stage, ir.Stage) else (stage,))]
    folds = {id(s) for i, s in enumerate(body) if isinstance(s, ir.Accumulate) and _foldable(tl, body[i + 1:], s)}
    if not folds:
        return tl

    def marked(s):
        return replace(s, fold_in_place=True) if id(s) in folds else s

    stages = tuple(replace(st, body=tuple(marked(s) for s in st.body)) if isinstance(st, ir.Stage) else marked(st)
                   for st in tl.body)
    return replace(tl, body=stages)


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    return map_tile_bodies(kernel, mark)
