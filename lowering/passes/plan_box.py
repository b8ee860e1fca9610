"""Plan a box loop (a reduction over a non-last dim; lowering/emit/box.py lays out the code).

Goals: `BoxTiles.plan` (ir.BoxPlan): the UB pitch of box rows (32 bytes for every box dtype), which box
reductions fold through a scratch box (their box is read again), and whether core shares are whole
rows of the reduced axis. Whole-row shares use fewer cores (a third of them still saturates GM
bandwidth: ~100 GB/s per core of ~1.6 TB/s) with long bursts, if the vector unit keeps up: one 256-byte
repeat per cycle against ~54 bytes per cycle of GM reads per core, with a 2x margin for instruction
heads. A loop that keeps the box's shape (a box op with a per-position value, broadcast along the extra
axis, or a stored box) holds the whole extra axis per tile (`whole_axis`); its broadcasts are the
tensor-tensor ops run row by row (others are UNSUPPORTED). Non-goals: the tile and chunk sizes (the host
tiling picks them from the runtime shapes).
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from ascend_dsl.diagnostics import ErrorCode as E
from ascend_dsl.dtypes import DType

from ..context import PassContext
from ..rewrite import map_tile_bodies

#: Box reductions: reduce VecOp -> the vector op of their halving tree.
BOX_COMBINE = {"ReduceSum": "Add", "ReduceMax": "Max", "ReduceMin": "Min", "ReduceProd": "Mul"}

#: Ops that broadcast a per-position value along a box's extra axis: one instruction per row of the box.
BROADCAST_APIS = ("Add", "Sub", "Mul", "Div", "Max", "Min")


def is_broadcast(s: ir.VecOp, bufs: dict[str, ir.Buffer]) -> bool:
    """A box op with a per-position (flat) operand."""
    return bufs[s.dst].layout is ir.Layout.BOX and \
        any(isinstance(o, str) and bufs[o].layout is not ir.Layout.BOX for o in s.srcs)


def keeps_shape(tl: ir.TileLoop) -> bool:
    """Whether a box meets a per-position value or is stored: the tile then holds the whole extra axis."""
    bufs = {b.name: b for b in tl.buffers_decl}
    return any(isinstance(s, ir.CopyOut) and bufs[s.buffer].layout is ir.Layout.BOX
               or isinstance(s, ir.VecOp) and is_broadcast(s, bufs) for s in ir.walk(tl.body))


def is_box_reduction(s: ir.VecOp, bufs: dict[str, ir.Buffer]) -> bool:
    return s.api in BOX_COMBINE and bufs[s.srcs[0]].layout is ir.Layout.BOX


def chunk_ops(tl: ir.TileLoop) -> list[ir.VecOp]:
    """The ops that run per chunk of the reduced axis: box values and the box reductions."""
    bufs = {b.name: b for b in tl.buffers_decl}
    ops = [s for s in ir.walk(tl.body) if isinstance(s, ir.VecOp)]
    return [s for s in ops if bufs[s.dst].layout is ir.Layout.BOX or is_box_reduction(s, bufs)]


def _read_later(buf: str, later: list[ir.VecOp | ir.CopyOut]) -> bool:
    """Whether `buf`'s current contents are read by a later op or store (before it is overwritten)."""
    for s in later:
        if isinstance(s, ir.CopyOut):
            if s.buffer == buf:
                return True
            continue
        if buf in s.srcs:
            return True
        if s.dst == buf:
            return False
    return False


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    def plan(tl: ir.TileLoop) -> ir.TileLoop:
        if tl.kind is not ir.LoopKind.BOX:
            return tl
        bufs = {b.name: b for b in tl.buffers_decl}
        box_dtypes = {b.dtype for b in tl.buffers_decl if b.layout is ir.Layout.BOX and b.dtype is not DType.BOOL}
        ops = chunk_ops(tl)
        steps = [s for s in ir.walk(tl.body) if isinstance(s, ir.VecOp) and s in ops or isinstance(s, ir.CopyOut)]
        reread = tuple(s.dst for i, s in enumerate(steps)
                       if isinstance(s, ir.VecOp) and is_box_reduction(s, bufs) and _read_later(s.srcs[0], steps[i + 1:]))
        for s in ops:
            if is_broadcast(s, bufs) and s.api not in BROADCAST_APIS:
                raise DslError.at(E.UNSUPPORTED, f"{s.api} of a box with a per-position value is not supported (only "
                                  "+, -, *, /, max and min broadcast a per-position value along the box)", s.span)
        vec_bytes = sum(bufs[s.srcs[0] if is_box_reduction(s, bufs) else s.dst].dtype.size for s in ops)
        in_bytes = max((b.dtype.size for b in tl.buffers_decl if b.layout is ir.Layout.BOX
                        and b.position is ir.Position.VECIN), default=4)
        box_plan = ir.BoxPlan(32 // min((d.size for d in box_dtypes), default=4), reread, vec_bytes, in_bytes,
                              vec_bytes * 2 * 54 <= 256 * in_bytes, keeps_shape(tl))
        return replace(tl, shape=replace(tl.shape, plan=box_plan))

    return map_tile_bodies(kernel, plan)
