"""Kind BOX: reductions over a non-last dim (`sum(load(x[t]), axis=1)`, x: [A, R, C]; box_*.jinja).

The split runs over the output positions, flat (A * C of them; `M_` = C positions per row of the
reduced axis, `rowLen_` = R its extent). Core shares are multiples of 32 bytes of the output (as for flat
splits), so no two cores write the same block; a tile is `len` consecutive positions that never
cross a row of M_ positions, so its elements along the reduced axis are `rowLen_` rows of `len`
elements, `M_` elements apart in GM. Per tile:

    acc = identity (per reduction: 0, 1, -inf, +inf)
    for q0 in 0, Qc, 2 Qc, .. < rowLen_:                       (chunks of Qc = chunkRows_ rows)
        x box <- one strided DataCopyPad: Qc blocks of len elements, srcStride (M_ - len) elements,
                 each landing in a UB row `pitch` elements long (32-byte aligned for every box dtype)
        element-wise box ops over Qc * pitch elements   (padding columns only meet padding columns)
        per reduction: halving tree of Add/Max/Min/Mul over the chunk's rows, then acc op= row 0
    flat ops over len elements (mean: acc * 1 / rowLen_, casts, per-position inputs), store len elements

A loop that keeps the box's shape (plan.whole_axis: a box meets a per-position value, or is stored)
reads the whole reduced axis in one chunk (the host sizes len so it fits) and runs its ops in program
order: box ops over rows * pitch, reductions, flat ops over len, a box op with a per-position value row
by row (`Div(y[r * pitch], e[r * pitch], s, len)`, the flat tile the same for every row), and a stored
box leaves by the strided copy that mirrors its load (DataCopyPad UB -> GM, rows M_ elements apart).

Only the first `len` elements of an accumulator row are combined and stored, so padding never
reaches GM (the emulator's UB-UNINIT check would report it). The host tiling (box_tiling.h.jinja)
picks len and Qc from the UB budget. The strided copy needs DataCopyPad: 910B targets only
(check_constraints rejects box loops on targets without it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from ..context import PassContext
from ..passes.plan_box import BOX_COMBINE, chunk_ops, is_box_reduction, is_broadcast
from ..tiling_rules import MIN_ELEMS_PER_CORE, MIN_TILES_PER_CORE, block_granule
from . import strided_broadcast
from .shared import (
    KernelView,
    StageWriter,
    buffer_views,
    c_literal,
    find,
    kernel_fields,
    loc,
    manifest,
    share_lines,
    snippet,
    value_symbols,
)

_IDENTITY = {"ReduceSum": 0.0, "ReduceMax": float("-inf"), "ReduceMin": float("inf"), "ReduceProd": 1.0}
#: i32 boxes (sum / max / min: Add, Max and Min take int32) start max / min at the type's ends, not at +-inf
_INT_IDENTITY = {"ReduceSum": 0, "ReduceMax": -2**31, "ReduceMin": 2**31 - 1}


def _identity(api: str, dtype: DType) -> str:
    if dtype.is_float:
        return c_literal(_IDENTITY[api], dtype)
    return f"static_cast<{dtype.ctype}>({_INT_IDENTITY[api]}LL)"


@dataclass(frozen=True)
class Copy:
    loc: str
    ctype: str
    buffer: str
    member: str
    tensor: str


@dataclass(frozen=True)
class Combine:
    acc: str
    ctype: str
    op: str
    loc: str


#: Rows of the reduced axis per core, at least, when the host splits the axis over cores.
MIN_PART_ROWS = 16


@dataclass(frozen=True)
class Bind:
    ctype: str
    name: str
    member: str
    how: str  # AllocTensor / Get / DeQue


@dataclass(frozen=True)
class Init:
    dst: str
    identity: str
    loc: str


_HOW = {ir.Position.VECIN: "DeQue", ir.Position.VECOUT: "AllocTensor", ir.Position.VECCALC: "Get"}


@dataclass(frozen=True, kw_only=True)
class BoxView(KernelView):
    buffer_num: int
    copy_helpers: str
    share: tuple[str, ...]  # Init: this core's share of the output positions
    value_symbols: tuple[str, ...]  # shape symbols read as values
    inner_tiling: str
    box_tensors: tuple[str, ...]  # read by strided copies; the others hold one value per position
    # Tile(p, base, len): one tile of output positions
    tile_values: tuple[Bind, ...]  # outputs and temporaries of the tile
    tile_inits: tuple[Init, ...]  # reductions start at their identity
    flat_in: tuple[Copy, ...]  # per-position inputs
    box_in: tuple[Copy, ...]  # boxes, read chunk by chunk of the reduced axis
    box_values: tuple[Bind, ...]
    chunk_lines: tuple[str, ...]  # the box ops and reductions of one chunk
    flat_lines: tuple[str, ...]  # the ops on the reduced values
    outs: tuple[Copy, ...]
    box_outs: tuple[Copy, ...]  # stored boxes: strided copies out, inside the chunk
    whole_axis: bool  # the tile holds the whole reduced axis (one chunk), its ops in program order
    row_mode: bool = False
    axis: int
    depth_host: str  # the reduced axis
    inner_host: str  # output positions per row of the reduced axis
    extent_host: str
    tile_loc: str
    ub_budget: int
    ub_formula: str
    pitch_granule: int
    box_in_bytes: int
    whole_row_shares: bool
    whole_row_why: str
    block_granule: int
    min_per_core: int
    min_tiles_per_core: int
    split_axis: bool = False  # the host may split the reduced axis over cores (partials combined after a SyncAll)
    min_part_rows: int = MIN_PART_ROWS
    combines: tuple[Combine, ...] = ()  # split_axis: each reduction's accumulator and combining op


def _host_bytes(b: ir.Buffer, flat: str = "len") -> str:
    """UB bytes of one buffer: boxes of `boxElems`, flat tiles of `flat` elements (the host's `len`, or
    the kernel's tiling.tileLength), whole 256-byte repeats (Compare rounds its count up to them)."""
    elems = "boxElems" if b.layout is ir.Layout.BOX else flat
    if b.bits == 1:
        return f"(({elems} + 255) / 256 * 32 + 32)"
    return f"(({elems} * {b.dtype.size} + 255) / 256 * 256)"


def _broadcast_lines(s: ir.VecOp, bufs: dict[str, ir.Buffer]) -> list[str]:
    """A box op with a per-position (flat) operand: box operands a row pitch apart, the flat tile re-read by
    every row (emit/strided_broadcast.py)."""
    strided = {o: bufs[o].layout is ir.Layout.BOX for o in (s.dst, *s.srcs)}
    return strided_broadcast.lines(s.api, s.dst, s.srcs, strided, bufs[s.dst].dtype.ctype, "pitch", "rows", "len")


def _bytes_at(b: ir.Buffer, rows: int, granule: int) -> int:
    """_host_bytes of one buffer for a tile of `granule` positions and `rows` rows of the reduced axis."""
    elems = rows * granule if b.layout is ir.Layout.BOX else granule
    per = (elems + 255) // 256 * 32 + 32 if b.bits == 1 else (elems * b.dtype.size + 255) // 256 * 256
    return b.num * per


def max_whole_rows(tl: ir.TileLoop, budget: int, granule: int) -> int:
    """The longest reduced axis a whole-axis tile holds: one 32-byte column of positions, every buffer in UB
    (at most 4095 rows: one DataCopyPad's blockCount)."""
    lo, hi = 0, 4095
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(_bytes_at(b, mid, granule) for b in tl.buffers_decl) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def build_view(kernel: ir.Kernel, ctx: PassContext) -> BoxView:
    split = kernel.phases[0]
    tl = split.body[0]
    axis, dim = tl.shape.axis, tl.shape.dim
    fields = kernel_fields(kernel, ctx)
    views = buffer_views(tl)
    buffers = {b.name: b for b in views}
    bufs = {b.name: b for b in tl.buffers_decl}
    stmts = [s for st in tl.body for s in st.body]
    extent = split.extent
    inner = extent[axis:]  # positions per row of the reduced axis: the output dims after it
    plan: ir.BoxPlan = tl.shape.plan
    granule = plan.pitch_granule

    # the host sizes the buffers: boxes of boxElems, flat tiles of tileLength (whole 256-byte repeats)
    views = tuple(replace(b, init_args=_host_bytes(b.buffer, "tiling.tileLength") if b.buffer.position
                          is ir.Position.VECCALC else f"{b.buffer.num}, {_host_bytes(b.buffer, 'tiling.tileLength')}")
                  for b in views)
    writer = StageWriter(ctx, buffers, {})
    box_in = [s for s in stmts if isinstance(s, ir.CopyIn) and bufs[s.buffer].layout is ir.Layout.BOX]
    flat_in = [s for s in stmts if isinstance(s, ir.CopyIn) and bufs[s.buffer].layout is not ir.Layout.BOX]
    outs = [s for s in stmts if isinstance(s, ir.CopyOut) and bufs[s.buffer].layout is not ir.Layout.BOX]
    box_outs = [s for s in stmts if isinstance(s, ir.CopyOut) and bufs[s.buffer].layout is ir.Layout.BOX]
    ops = [s for s in stmts if isinstance(s, ir.VecOp)]
    whole = plan.whole_axis
    per_chunk = ops if whole else chunk_ops(tl)  # a whole-axis tile runs every op once, in program order
    flat_ops = [s for s in ops if s not in per_chunk]
    reductions = [s for s in per_chunk if is_box_reduction(s, bufs)]

    def ctype(name: str) -> str:
        return bufs[name].dtype.ctype

    def copy(s: ir.CopyIn | ir.CopyOut) -> Copy:
        return Copy(loc(ctx, s.span), ctype(s.buffer), s.buffer, buffers[s.buffer].member, s.tensor)

    def binds(box: bool) -> tuple[Bind, ...]:
        """LocalTensors of the box buffers (per chunk) or of the tile's values (outputs, temporaries)."""
        return tuple(Bind(b.buffer.dtype.ctype, b.name, b.member, _HOW[b.buffer.position]) for b in views
                     if (b.buffer.layout is ir.Layout.BOX) == box and (box or b.buffer.position is not ir.Position.VECIN))

    chunk_lines: list[str] = []
    for s in per_chunk:
        if is_box_reduction(s, bufs):
            writer.lines = []
            writer.mark(s.span)
            src = s.srcs[0]
            scratch = find(buffers, ir.BufferRole.BOX_TMP, dtype=bufs[src].dtype).name if s.dst in plan.reread else ""
            chunk_lines += writer.lines + snippet("box_tree", op=BOX_COMBINE[s.api], src=src, acc=s.dst, scratch=scratch)
        elif is_broadcast(s, bufs):  # the per-position value is the same flat tile for every row of the box
            writer.lines = []
            writer.mark(s.span)
            chunk_lines += writer.lines + _broadcast_lines(s, bufs)
        else:
            writer.lines = []
            writer.last_line = -1
            writer.vec_op(s, "count" if bufs[s.dst].layout is ir.Layout.BOX else "len")
            chunk_lines += writer.lines
    writer.lines = []
    writer.last_line = -1
    for s in flat_ops:
        writer.vec_op(s, "len")
    tile = {"tile_values": binds(False), "box_values": binds(True), "chunk_lines": tuple(chunk_lines),
            "flat_lines": tuple(writer.lines), "flat_in": tuple(copy(s) for s in flat_in),
            "box_in": tuple(copy(s) for s in box_in), "outs": tuple(copy(s) for s in outs),
            "box_outs": tuple(copy(s) for s in box_outs), "whole_axis": whole,
            "tile_inits": tuple(Init(s.dst, _identity(s.api, bufs[s.dst].dtype), loc(ctx, s.span))
                                for s in reductions)}

    whole_rows, vec_bytes, in_bytes = plan.whole_row_shares, plan.vec_bytes, plan.in_bytes  # plan_box.py
    ub_formula = " + ".join(f"{b.num} * {_host_bytes(b)}" for b in tl.buffers_decl)
    if whole:
        fits = max_whole_rows(tl, ctx.target.ub_budget, granule)
        tile["tiling_error"] = (
            f"{loc(ctx, tl.span)}: the loop keeps the box's shape (a per-position value meets the box, or the box "
            f"is stored), so a tile holds all of {dim} in UB with its temporaries; at most {dim} = {fits} fits "
            f"({len(tl.buffers_decl)} buffers, {ctx.target.ub_budget} bytes of UB). For a longer axis, store only "
            "reductions (one value per position) or move the axis last and use rows (split over the other dims)")
    # Fewer rows of positions than cores: the host may split the reduced axis over cores (box_tiling.h.jinja),
    # when the loop only reduces its boxes (a tile that keeps the box's shape holds the whole axis).
    split_axis = not whole and bool(reductions)
    combines = tuple(Combine(s.dst, ctype(s.dst), BOX_COMBINE[s.api], loc(ctx, s.span)) for s in reductions)
    if split_axis:
        fields = {**fields, "workspace": True, "workspace_per_core": workspace_per_core(len(reductions))}
    return BoxView(
        **fields, **tile, split_axis=split_axis, combines=combines, buffers=views, buffer_num=tl.buffers, copy_helpers="copy_helpers_pad.cpp.jinja",
        share=tuple(share_lines(ctx, split, "the [0, {}) output positions (a multiple of 32 bytes of the output)")),
        value_symbols=tuple(value_symbols(kernel, tl)), inner_tiling=" * ".join(f"tiling.{s}" for s in inner),
        box_tensors=tuple(p.name for p in kernel.tensors if tuple(p.shape) != extent),
        ub_budget=ctx.target.ub_budget, ub_formula=ub_formula, pitch_granule=granule, box_in_bytes=in_bytes,
        whole_row_shares=whole_rows,
        whole_row_why=f"vector work per box element: {vec_bytes} B of repeats per {in_bytes} B read"
                      f" ({'low' if whole_rows else 'too high'} for whole-row shares on a third of the cores)",
        inner_host=" * ".join(inner), depth_host=dim, axis=axis, extent_host=" * ".join(extent),
        tile_loc=loc(ctx, tl.span), block_granule=block_granule(kernel), min_per_core=MIN_ELEMS_PER_CORE,
        min_tiles_per_core=MIN_TILES_PER_CORE)


def workspace_per_core(reductions: int) -> str:
    """GM workspace bytes per core: a tile's partials (f32 at most) per reduction, for a split reduced axis."""
    return f"(static_cast<size_t>(tiling.tileLength) * {4 * reductions})"


def project_manifest(kernel: ir.Kernel, ctx: PassContext, view: BoxView) -> dict:
    return manifest(kernel, ctx, view, "AIV_ONLY", None, "positions", tuple(b.buffer for b in view.buffers),
                    view.workspace_per_core if view.split_axis else 0)
