"""Choose how the kernel is emitted (`Kernel.kind`) and check the structure that kind needs.

Goals: one kind per kernel (ir.KernelKind): MIX for a cube loop, WINDOW when the first tile loop is a
plane loop that pools, RESIZE when it resizes, BOX for a box loop, VECTOR otherwise (flat and row loops); every structural limit of the
kind's emitter reported here, collected and located (one tile loop per split loop, the same split
for every split loop, pooling-only plane loops, cube, plane and box loops alone in their kernel but
for launch scalars, slot accumulators in row loops, at most 8 accumulators per split loop, a tensor
read through an index tensor read only that way). Runs after
hoist_scalars, which decides which kernel-scope scalars the host computes. Non-goals: hardware limits
(check_constraints.py) and sizes (plan_tiling.py, plan_cube.py).
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.diagnostics import DiagnosticSink
from ascend_dsl.diagnostics import ErrorCode as E
from ascend_dsl.dtypes import DType
from ascend_dsl.ops import OPS, POOLS, Rule
from ascend_dsl.parser_scatter import named as is_name

from ..context import PassContext

#: Accumulators one split loop may combine across cores: each core writes them to one 32-byte slot.
MAX_ACCUMULATORS = 8


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    sink = DiagnosticSink()
    conv = ir.conv_loop(kernel)
    if conv is not None:
        others = _other_statements(kernel, conv)
        if others:
            sink.error(E.UNSUPPORTED, "a convolution kernel has its cube split loop only (and scalars computed from "
                       "scalar parameters, shape symbols and constants)", others[0].span,
                       "write the other work as a second kernel")
        sink.raise_if_any()
        return replace(kernel, kind=ir.KernelKind.CONV)
    cube = ir.cube_loop(kernel)
    if cube is not None:
        others = _other_statements(kernel, cube)
        if others:
            sink.error(E.UNSUPPORTED, "a matmul kernel has its cube split loop only (and scalars computed from "
                       "scalar parameters, shape symbols and constants)", others[0].span,
                       "write the other work as a second kernel")
        sink.raise_if_any()
        return replace(kernel, kind=ir.KernelKind.MIX)
    splits = kernel.phases
    for split in splits:
        if len(split.body) != 1:
            sink.error(E.UNSUPPORTED, "this version lowers one tile loop per split loop", split.body[1].span,
                       "merge the loops, or write a second split loop after this one")
    first, first_tile = splits[0], splits[0].body[0]
    for split in splits[1:]:
        if split.extent != first.extent or _rows(split.body[0]) != _rows(first_tile):
            sink.error(E.UNSUPPORTED, "every split loop of a kernel splits the same extent with the same tensors",
                       split.span, f"split({' * '.join(first.extent)}, cores=AIV)")
    kind = {ir.LoopKind.PLANES: ir.KernelKind.WINDOW, ir.LoopKind.BOX: ir.KernelKind.BOX}.get(
        first_tile.kind, ir.KernelKind.VECTOR)
    if kind is ir.KernelKind.WINDOW:
        others = _other_statements(kernel, first)
        if others:
            sink.error(E.UNSUPPORTED, "a kernel with a pooling or resize loop has that split loop only",
                       others[0].span, "write the kernel-scope work as a second kernel")
        if _resizes(first_tile):
            kind = ir.KernelKind.RESIZE
            _check_resize(first_tile, ctx, sink)
            if any("_aa" in e.op for e in _resizes(first_tile)):
                kind = ir.KernelKind.ANTIALIAS
            if any(e.op.startswith("grid_sample") for e in _resizes(first_tile)):
                kind = ir.KernelKind.GRID
                _check_grid(kernel, first, first_tile, sink)
        else:
            _check_planes(kernel, first, first_tile, sink)
    elif kind is ir.KernelKind.BOX:
        others = _other_statements(kernel, first)
        if others:
            sink.error(E.UNSUPPORTED, "a kernel with a box loop (a reduction over a non-last dim) has that split "
                       "loop only", others[0].span, "write the kernel-scope work as a second kernel")
    else:
        _check_row_gathers(kernel, sink)
        _check_element_gathers(kernel, ctx, sink)
        if kernel.slot_accumulators and _rows(first_tile) is None:
            sink.error(E.UNSUPPORTED, "slot accumulators need row loops", kernel.slot_accumulators[0].span)
        for split in splits:
            accs = dict.fromkeys(s.name for s in ir.walk((split,)) if isinstance(s, ir.Accumulate))
            if len(accs) > MAX_ACCUMULATORS:
                sink.error(E.UNSUPPORTED, f"{len(accs)} accumulators in one split loop; at most {MAX_ACCUMULATORS} "
                           "fit the 32-byte slot each core writes", split.span, "split the work into two loops")
    _check_scatters(kernel, kind, sink)
    sink.raise_if_any()
    return replace(kernel, kind=kind)


def _check_element_gathers(kernel: ir.Kernel, ctx: PassContext, sink: DiagnosticSink) -> None:
    """Tile casts from i64 (the indices of gather(rows, load(idx[r, :])) go to i32 this way) need a vector Cast
    int64 -> *, which the CANN Cast tables list for Atlas A2 only (docs/design.md, "Cast pairs")."""
    if ctx.target.soc_family != "ascend310p":
        return
    for s in ir.walk(kernel.body):
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Op) and s.value.op == "cast" \
                and s.value.type.kind is ir.Kind.TILE and s.value.args[0].type.dtype is DType.I64:
            sink.error(E.UNSUPPORTED, f"{ctx.target.name} has no vector Cast from int64 (i64 indices of a per-element "
                       "gather are converted to i32 this way)", s.span,
                       "declare the index tensor i32, or target an ascend910b")
            return


def _check_row_gathers(kernel: ir.Kernel, sink: DiagnosticSink) -> None:
    """A tensor read through an index tensor (`w[idx[r], :]`) is read that way only: its GM view is the whole
    tensor, while tile loads address the core's share."""
    loads = [e for s in ir.walk(kernel.body) if isinstance(s, ir.VALUE_STMTS) for e in ir.walk_expr(s.value)
             if isinstance(e, ir.Load)]
    gathered = {e.tensor for e in loads if e.index.by}
    for e in loads:
        if e.tensor in gathered and not e.index.by:
            sink.error(E.UNSUPPORTED, f"'{e.tensor}' is read through an index tensor elsewhere, so it cannot also be "
                       f"read as tiles ({e.tensor}[{e.index}])", e.span,
                       f"pass the same data as two parameters, or read it by an index only: {e.tensor}[idx[r], :]")
            return


def _check_scatters(kernel: ir.Kernel, kind: ir.KernelKind, sink: DiagnosticSink) -> None:
    """Scatters (and index_select with K indices) run in vector row loops only; the index and source of a row
    scatter (index_add on rows) and index_select's table are read whole by the op (their GM view is the whole
    tensor), so no tile load or store may address them."""
    exprs = [e for s in ir.walk(kernel.body) if isinstance(s, ir.VALUE_STMTS) for e in ir.walk_expr(s.value)]
    scatters = [e for e in exprs if isinstance(e, ir.Op) and OPS[e.op].rule in (Rule.SCATTER, Rule.ROW_SCATTER)]
    if scatters and kind is not ir.KernelKind.VECTOR:
        sink.error(E.UNSUPPORTED, f"'{OPS[scatters[0].op].call or scatters[0].op}' runs in vector row loops only "
                   "(not in matmul epilogues, stages or window loops)", scatters[0].span,
                   "store the other result, then scatter in a second kernel")
        return
    named = {a.value: e for e in scatters if OPS[e.op].rule is Rule.ROW_SCATTER for a in e.args[1:3] if is_name(a)}
    selects = [e for e in exprs if isinstance(e, ir.Op) and e.op in ("index_select_cols", "gather_middle")]
    if selects and kind is not ir.KernelKind.VECTOR:
        sink.error(E.UNSUPPORTED, f"'{OPS[selects[0].op].call}' of a named tensor runs in vector row loops only (not "
                   "in matmul epilogues, stages or window loops)", selects[0].span,
                   "store the other result, then select in a second kernel")
        return
    named |= {e.args[1].value: e for e in selects}
    tiled = [(e.tensor, e.span) for e in exprs if isinstance(e, ir.Load)]
    tiled += [(s.tensor, s.span) for s in ir.walk(kernel.body) if isinstance(s, ir.Store)]
    for name, span in tiled:
        if name in named:
            sink.error(E.UNSUPPORTED, f"'{name}' is read whole by {OPS[named[name].op].call or named[name].op}, so it "
                       "cannot also be loaded or stored as tiles", span, "pass the same data as two parameters")
            return


def _other_statements(kernel: ir.Kernel, loop: ir.Stmt) -> list[ir.Stmt]:
    """The kernel's statements besides `loop` and the scalars the host computes at launch (hoist_scalars.py)."""
    return [s for s in kernel.body if s is not loop and not (isinstance(s, ir.ScalarAssign) and s.launch)]


def _rows(tl: ir.TileLoop) -> ir.RowTiles | None:
    return tl.shape if tl.kind is ir.LoopKind.ROWS else None


def _check_planes(kernel: ir.Kernel, split: ir.SplitLoop, tl: ir.TileLoop, sink: DiagnosticSink) -> None:
    """A plane loop pools: its tile values are loaded planes and pools of them, one window shape, and
    every plane it reads (or writes) has the same spatial dims."""
    ops = [e for s in tl.body if isinstance(s, ir.VALUE_STMTS) for e in ir.walk_expr(s.value)
           if isinstance(e, ir.Op) and e.type.kind is ir.Kind.TILE]
    pools = [e for e in ops if e.op in POOLS]
    others = [e for e in ops if e.op not in POOLS]
    if others or not pools:
        sink.error(E.UNSUPPORTED, "a plane loop lowers pooling only: store(y[p], max_pool(load(x[p]), ...))",
                   (others or [tl])[0].span)
    windows = list(dict.fromkeys(p.args[1:] for p in pools))
    if len(windows) > 1:
        second = next(p for p in pools if p.args[1:] != windows[0])
        sink.error(E.UNSUPPORTED, "pools in one plane loop must share kernel=, stride=, padding=, dilation=",
                   second.span, "write one kernel per window shape")
    params, lead = {p.name: p for p in kernel.tensors}, len(split.extent)
    loads = {e.tensor for s in tl.body if isinstance(s, ir.VALUE_STMTS) for e in ir.walk_expr(s.value)
             if isinstance(e, ir.Load)}
    stores = {s.tensor for s in tl.body if isinstance(s, ir.Store)}
    for tensors in (loads, stores):
        if len({params[t].shape[lead:] for t in tensors}) > 1:
            sink.error(E.UNSUPPORTED, "the planes of one plane loop must share their spatial shape", tl.span)
            break


def _resizes(tl: ir.TileLoop) -> list[ir.Op]:
    return [e for s in tl.body if isinstance(s, ir.VALUE_STMTS) for e in ir.walk_expr(s.value)
            if isinstance(e, ir.Op) and OPS[e.op].rule is Rule.RESIZE]


def _check_resize(tl: ir.TileLoop, ctx: PassContext, sink: DiagnosticSink) -> None:
    """A resize loop stores one resize of one loaded plane (lowering/emit/resize.py): the stored tensor's spatial
    dims are the output size (the parser keeps a resize inside its store)."""
    stores = [s for s in tl.body if isinstance(s, ir.Store)]
    if len(stores) != 1 or len(_resizes(tl)) != 1:
        sink.error(E.UNSUPPORTED, "a resize loop stores one resize of one loaded plane", (stores[1:] or [tl])[0].span,
                   "store(y[p], resize_linear(load(x[p]))); write a second kernel for another")
    if any(OPS[e.op].rule is Rule.POOL for s in tl.body if isinstance(s, ir.VALUE_STMTS)
           for e in ir.walk_expr(s.value) if isinstance(e, ir.Op)):
        sink.error(E.UNSUPPORTED, "a plane loop either pools or resizes", tl.span, "write one kernel for each")
    if not ctx.target.has_datacopypad:
        sink.error(E.UNSUPPORTED, f"resize stores 32-byte aligned UB rows with DataCopyPad, which {ctx.target.name} "
                   "does not have", _resizes(tl)[0].span, "lower it for a 910B target (--target ascend910b1)")


def _check_grid(kernel: ir.Kernel, split: ir.SplitLoop, tl: ir.TileLoop, sink: DiagnosticSink) -> None:
    """grid_sample (lowering/emit/grid_sample.py): x [N, C, H, W] split over N * C, grid [N, OH, OW, 2] and the
    stored y [N, C, OH, OW], by shape symbol (the grid's batch is the planes' first split symbol)."""
    op = _resizes(tl)[0]
    store = next((s for s in tl.body if isinstance(s, ir.Store)), None)
    params = {p.name: p for p in kernel.tensors}
    grid, y = params[op.args[1].value], params[store.tensor] if store else None
    if y is None or len(split.extent) != 2:
        sink.error(E.UNSUPPORTED, "grid_sample runs in a loop over split(N * C) of [N, C, H, W] planes", op.span,
                   "for blk in split(N * C, cores=AIV)")
        return
    want = (split.extent[0], *map(str, y.shape[2:]), "2")
    if tuple(map(str, grid.shape)) != want:
        sink.error(E.SHAPE, f"grid_sample's grid '{grid.name}' must be [{', '.join(want)}] (the planes' batch, the "
                   f"stored '{y.name}' output size, x and y); it is {list(grid.shape)}", op.span,
                   f'declare it as Tensor[f32, "{", ".join(want)}"]')
