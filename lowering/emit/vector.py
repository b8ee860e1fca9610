"""Kind VECTOR: flat and row tile loops, any number of split loops (templates kernel.cpp.jinja, tiling.h.jinja).

Each split loop is a phase: `Process()` runs the first one's CopyIn / Compute / CopyOut over the core's
share, `Phase<k>()` the later ones (`pipe.Reset()` first: each has its own UB plan). Between phases,
the kernel-scope work: the cross-core combine of the loop's accumulators (each core writes its value
to a 32-byte GM workspace slot, SyncAll, every core reads all slots), kernel-scope scalars and the
single-element stores of core 0. Row loops whose rows may not fit UB also get their chunked path
(emit/chunk.py); slot accumulators come from emit/slots.py.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from ..context import PassContext
from ..flat_tile_count import host_view as flat_cost_view
from ..row_tile_count import host_view as row_cost_view
from ..tiling_rules import AUTO_TILE_GRANULE, MIN_ELEMS_PER_CORE, MIN_TILES_PER_CORE, block_granule
from . import (
    acc_workspace,
    arg_reduce,
    col_select,
    launch_scalars,
    positions,
    row_broadcast,
    row_gather,
    row_groups,
    row_scatter,
    row_vectors,
    slots,
)
from .chunk import ChunkPassView, ChunkView, kernel_chunks
from .shared import (
    IDENTITY,
    BufferView,
    KernelView,
    LaunchCheck,
    RowStageWriter,
    ScalarWriter,
    StageWriter,
    TensorView,
    buffer_views,
    c_literal,
    camel,
    compute_frame,
    copy_call,
    find,
    host_bytes,
    kernel_fields,
    loc,
    manifest,
    rows_of,
    scan_table_lines,
    share_lines,
    snippet,
    sync,
    value_symbols,
    write_stages,
)


@dataclass(frozen=True)
class ChunkProcess:
    fn: str
    lines: tuple[str, ...]


@dataclass(frozen=True)
class PhaseView:
    """One split loop and its tile loop; `after`: the kernel-scope work between it and the next."""

    suffix: str
    loc: str
    tile: str  # the member holding its tile length
    rows: str  # the member holding the core's rows (or elements)
    max_tile: int | None
    tile_granule: int
    buffers: tuple[BufferView, ...]
    init_buffers: tuple[str, ...]
    acc_init: tuple[str, ...]
    copyin: tuple[str, ...]
    compute: tuple[str, ...]
    copyout: tuple[str, ...]
    ub_formula: str
    after: tuple[str, ...]
    chunk: ChunkView | None = None  # several split loops: this loop's chunked path
    row_cap: int = 0  # a row loop's `size=N`: at most N rows per tile (0: no cap)
    preload: tuple[str, ...] = ()  # before the tiles: the row vectors copied in once (emit/row_vectors.py)


@dataclass(frozen=True, kw_only=True)
class VectorView(KernelView):
    phases: tuple[PhaseView, ...]
    buffer_num: int
    copy_helpers: str
    init: tuple[str, ...]
    init_buffers: tuple[str, ...]
    kernel_scalars: tuple[str, ...]
    epilogue_bufs: tuple[str, ...]
    extra_members: tuple[str, ...]
    tiling_fields: tuple[str, ...]
    slot_host: tuple[str, ...]
    row_mode: bool
    unit: str  # "rows" | "elements"
    extent_host: str
    tile_loc: str
    max_tile: int | None
    tile_granule: int
    block_granule: int
    min_per_core: int
    min_tiles_per_core: int
    row_len: str = ""
    row_cap: int = 0  # the first loop's `size=N` on rows: at most N rows per tile
    row_cost: dict | None = None  # few rows per core: the estimate the host picks a tile count by (row_tile_count.py)
    flat_cost: dict | None = None  # a flat loop's short share: one tile or two by the estimate (flat_tile_count.py)
    ub_budget: int = 0
    ub_formula: str = ""
    # rows longer than UB (emit/chunk.py)
    chunk: bool = False
    chunk_first: bool = False  # loop 0 has a chunked path
    multi_chunk: bool = False
    chunk_passes: tuple[ChunkPassView, ...] = ()  # loop 0's
    chunk_count: int = 0
    chunk_all_passes: tuple[ChunkPassView, ...] = ()
    chunk_processes: tuple[ChunkProcess, ...] = ()
    chunk_members: tuple[str, ...] = ()
    chunk_out_bufs: tuple[str, ...] = ()
    row_group: bool = False
    row_group_fields: tuple[str, ...] = ()
    row_elem_bytes: int = 4  # the row's bytes per column (a long row's share: emit/row_groups.py)
    long_row_share: int = 0  # > 0: groups may walk rows longer than this many bytes when rows >= cores


def _phases(kernel: ir.Kernel) -> list[tuple[ir.SplitLoop, ir.TileLoop]]:
    """The split loops with their one tile loop each (select_kind.py checked the structure)."""
    return [(split, split.body[0]) for split in kernel.phases]


def _gm_view(kernel: ir.Kernel, split: ir.SplitLoop, tl: ir.TileLoop, t: TensorView, start: str,
             count: str) -> tuple[list[str], bool]:
    """Init lines of tensor `t`'s GM view for a share of `count` rows (or elements) from `start`, and
    whether the view depends on the share (tensors split with it) rather than being whole."""
    p = kernel.param(t.name)
    base = f"(__gm__ {t.ctype}*){t.name}"
    if p.name in row_gather.gathered_tensors(kernel):  # read through an index tensor: the whole tensor
        return row_gather.gm_view_lines(p, t.gm, base, row_gather.groups(kernel).get(p.name)), False
    if p.name in (numbers := row_gather.periodic_indices(kernel)):  # a [K] index along a middle dim: whole
        k = numbers[p.name]
        return [f"{t.gm}.SetGlobalBuffer({base}, {k if k.isdigit() else 'tiling.' + k});  // one number per {k}"], False
    if p.name in (selects := col_select.tables(kernel)):  # index_select's / gather_middle's table: whole
        return col_select.gm_view_lines(p, t.gm, base, selects[p.name]), False
    if p.name in row_scatter.whole_tensors(kernel):  # the index and source of a row scatter: whole tensors
        return row_scatter.gm_view_lines(p.name, t.gm, base, kernel), False
    if p.name in (periodic := row_broadcast.periodic(kernel)):  # per-channel values, broadcast rows: whole
        return row_broadcast.gm_view_lines(periodic[p.name], t.gm, base), False
    if p.name in _scalar_store_only(kernel):
        return [f"{t.gm}.SetGlobalBuffer({base}, 1);  // element 0 only (kernel-scope load/store)"], False
    if rows_of(tl) and len(p.shape) > len(split.extent) and tuple(p.shape[:len(split.extent)]) == split.extent:
        elems = "rowLen_" if count == "1" else f"{count} * rowLen_"
        return [f"{t.gm}.SetGlobalBuffer({base} + {start} * rowLen_, {elems});"], True
    if rows_of(tl) and tuple(map(str, p.shape)) == tl.shape.row:
        return [f"{t.gm}.SetGlobalBuffer({base}, rowLen_);"], False
    return [f"{t.gm}.SetGlobalBuffer({base} + {start}, {count});"], True


def share_views(kernel: ir.Kernel, tensors: tuple[TensorView, ...], start: str, count: str) -> list[str]:
    """The Init lines that depend on a core's share of the first split loop's rows, for a share of
    `count` rows from row `start`: the global row of per-channel reads and the views of the split tensors
    (rows split over a group of cores re-point them at the group's row: emit/row_groups.py)."""
    split, tl = _phases(kernel)[0]
    lines = [f"rowStart_ = {start};"] if _needs_row_start(kernel) else []
    for t in tensors:
        view, shared = _gm_view(kernel, split, tl, t, start, count)
        lines += view if shared else []
    return lines


def _init_lines(kernel: ir.Kernel, ctx: PassContext, fields: dict) -> list[str]:
    phases = _phases(kernel)
    split, tl = phases[0]
    lines = [*share_lines(ctx, split, "[0, {})" + (" rows" if rows_of(tl) else "")), "tileLength_ = tiling.tileLength;"]
    lines += [f"tileLength{k}_ = tiling.tileLength{k};" for k in range(1, len(phases))]
    if rows_of(tl):
        row_len = " * ".join(f"tiling.{d}" for d in tl.shape.row)
        lines += [f"rowLen_ = {row_len};", "rowPitch_ = (rowLen_ + 127) / 128 * 128;  // UB row pitch: whole repeats"]
    lines += [f"{s.member} = tiling.{s.name};" for s in fields["scalars"]]
    lines += [f"{sym}_ = tiling.{sym};" for sym in value_symbols(kernel, tl)]
    if _needs_row_start(kernel):
        lines.append("rowStart_ = start;  // per-channel tensors and row_index() read the global row")
    lines += [line for t in fields["tensors"] for line in _gm_view(kernel, split, tl, t, "start", "blockLength_")[0]]
    for s in kernel.body:
        if isinstance(s, ir.ScalarLoad):  # one scalar read of GM per core, before any tile
            lines.append(f"{s.name}_ = static_cast<float>({s.tensor}Gm.GetValue(0));  // {loc(ctx, s.span)}")
    lines += launch_scalars.init_lines(kernel)
    lines += _prologue(kernel, ctx, {t.name: t for t in fields["tensors"]})
    if kernel.slot_accumulators:
        lines += slots.init_lines(kernel, ctx)
    elif kernel.accumulators:
        lines.append(f"workspaceGm_.SetGlobalBuffer((__gm__ float*)workspace, {acc_workspace.floats(kernel)});  "
                     + ("// two 32-byte slots per core: consecutive combines alternate between them"
                        if acc_workspace.regions(kernel) > 1 else "// one 32-byte slot per core"))
    return lines


def _needs_row_start(kernel: ir.Kernel) -> bool:
    """Whether Compute or CopyIn reads the global row: per-channel tensors, slot accumulators, positions."""
    return bool(_periodic_tensors(kernel) or kernel.slot_accumulators or positions.used(kernel)
                or row_scatter.used(kernel) or col_select.used(kernel) or row_gather.groups(kernel))


def _periodic_tensors(kernel: ir.Kernel) -> list[str]:
    return list(row_broadcast.periodic(kernel))


def _scalar_store_only(kernel: ir.Kernel) -> set[str]:
    tiled = {s.tensor for s in ir.walk(kernel.body) if isinstance(s, (ir.Store, ir.CopyOut, ir.CopyIn))}
    return {s.tensor for s in kernel.body if isinstance(s, (ir.ScalarStore, ir.ScalarLoad))} - tiled


def _store_dtypes(kernel: ir.Kernel, stmts) -> list[DType]:
    """Dtypes of the single-element stores among `stmts` (each gets a 32-byte UB buffer)."""
    return sorted({kernel.param(s.tensor).dtype for s in stmts if isinstance(s, ir.ScalarStore)}, key=str)


def _updates(loop: ir.Stmt) -> dict[str, ir.Combine]:
    """Accumulator -> combine of the accumulators a loop updates, in order."""
    return {s.name: s.combine for s in ir.walk((loop,)) if isinstance(s, ir.Accumulate)}


def _slot_updates(loop: ir.Stmt) -> list[str]:
    """The slot accumulators a loop updates, in order."""
    return list(dict.fromkeys(s.name for s in ir.walk((loop,)) if isinstance(s, ir.SlotAccumulate)))


class _EpilogueWriter(ScalarWriter):
    """Kernel-scope scalar code after a split loop: the cross-core combine, scalar assignments and the
    single-element stores of core 0."""

    def combine(self, accs: list[ir.AccDecl], combines: dict[str, ir.Combine], span, region: str,
                written: bool = False) -> None:
        """`region`: where this combine's slots start in the workspace (emit/acc_workspace.py); `written`: this
        core's slot is already in GM (_slot_from_block)."""
        self.lines += snippet("acc_combine", loc=loc(self.ctx, span), region=region, written=written, accs=[
            {"name": a.name, "init": c_literal(a.init, DType.F32), "combine": combines[a.name].value} for a in accs])

    def assign(self, s: ir.ScalarAssign) -> None:
        self.lines.append(f"// {loc(self.ctx, s.span)}")
        self.lines.append(f"{s.name}_ = {self.scalar(s.value)};")

    def store(self, s: ir.ScalarStore, dtype: DType) -> None:
        t = self.tensors[s.tensor]
        self.lines += [f"// {loc(self.ctx, s.span)}: one element, written by core 0", "if (GetBlockIdx() == 0) {"]
        value = self.scalar(s.value)
        self.lines += [f"    LocalTensor<{t.ctype}> one = scalarOut{camel(dtype.value)}_.Get<{t.ctype}>();",
                       f"    one.SetValue(0, static_cast<{t.ctype}>({value}));", *sync("S_MTE3", indent="    "),
                       f"    {copy_call('UbToGm', '', 'one', t.gm, '1')}", "}"]


def _slot_from_block(member: str, region: str) -> list[str]:
    """A single accumulator's running value is lane 0 of its f32 UB block, whose other lanes hold the combine's
    identity (the Duplicate before the loop): that block is the 32-byte slot the combine writes, so it is copied
    out as it stands, before pipe.Reset() frees it. No scalar read of the value and no 8 SetValue calls to build
    the slot: 9 scalar UB accesses fewer per core (session 35)."""
    at = f"{region} + GetBlockIdx() * 8" if region != "0" else "GetBlockIdx() * 8"
    return [*sync("V_MTE3", "this core's running value is final: its block is the combine's slot"),
            f"DataCopy(workspaceGm_[{at}], {member}.Get<float>(), 8);"]


def _after_phase(kernel: ir.Kernel, ctx: PassContext, k: int, tensors: dict[str, TensorView],
                 buffers: dict[str, BufferView]) -> list[str]:
    """Kernel-scope statements between split loop k and the next (whose buffers are `buffers`): the
    cross-core combines, kernel-scope scalars and stores."""
    body = list(kernel.body)
    splits = [i for i, s in enumerate(body) if isinstance(s, ir.SplitLoop)]
    lo = splits[k]
    hi = splits[k + 1] if k + 1 < len(splits) else len(body)
    stmts = [s for s in body[lo + 1:hi] if not (isinstance(s, ir.ScalarAssign) and s.launch)]  # launch: the host
    split = body[lo]
    updates = _updates(split)
    accs = [a for a in kernel.accumulators if a.name in updates]
    slot_names = _slot_updates(split)
    if not accs and not stmts and not slot_names:
        return []
    w = _EpilogueWriter(ctx, tensors, kernel)
    if slot_names:
        w.lines += slots.before_reset_lines([(n, find(buffers, ir.BufferRole.SLOT_VECTOR, n).member)
                                             for n in slot_names])
    # one accumulator whose UB block holds the core's final value: not a loop with a chunked path (rows longer than
    # UB fold chunks on the scalar unit and across core groups), whose value is not that block's lane 0
    chunked = any(isinstance(t.shape, ir.RowTiles) and isinstance(t.shape.chunked, ir.ChunkPlan) for t in split.body)
    direct = len(accs) == 1 and not chunked
    if direct:
        w.lines += _slot_from_block(find(buffers, ir.BufferRole.ACC_SLOT, accs[0].name).member,
                                    acc_workspace.region(acc_workspace.index(kernel, k)))
    elif accs:
        w.lines += sync("V_S", "the scalar unit reads this core's running values")
        w.lines += [f"{a.name}_ = {find(buffers, ir.BufferRole.ACC_SLOT, a.name).member}.Get<float>().GetValue(0);"
                    for a in accs]
    store_dtypes = _store_dtypes(kernel, stmts)
    w.lines += ["PipeBarrier<PIPE_ALL>();  // the last tile's copy-out has read its UB",
                "pipe.Reset();  // the tile buffers are dead: UB for the scalar epilogue",
                "pipe.InitBuffer(scalarBuf_, static_cast<uint32_t>(GetBlockNum()) * 32 + 32"
                + (" + (static_cast<uint32_t>(GetBlockNum()) + 63) / 64 * 32);  // + the combine's ReduceSum scratch"
                   if direct and updates[accs[0].name] is ir.Combine.ADD else ");")]
    w.lines += [f"pipe.InitBuffer(scalarOut{camel(d.value)}_, 32);" for d in store_dtypes]
    if slot_names:
        w.lines += slots.staging_lines(slot_names, ctx.target.ub_budget)
    if accs:
        w.combine(accs, updates, split.span, acc_workspace.region(acc_workspace.index(kernel, k)), written=direct)
    if slot_names:  # after the scalar combine's SyncAll, if any: the partial vectors were copied out before it
        w.lines += slots.combine_lines(slot_names, ctx, split.span, syncall=not accs)
    for s in stmts:
        if isinstance(s, ir.ScalarAssign):
            w.assign(s)
        elif isinstance(s, ir.ScalarStore):
            w.store(s, kernel.param(s.tensor).dtype)
        elif isinstance(s, ir.AccDecl):
            w.lines.append(f"{s.name}_ = {c_literal(s.init, DType.F32)};")
    return ["{"] + ["    " + line for line in w.lines] + ["}"]


def _device_statements(stmts) -> list[ir.Stmt]:
    """The kernel-scope statements the device runs (launch scalars are the host's)."""
    return [s for s in stmts if isinstance(s, ir.ScalarStore) or (isinstance(s, ir.ScalarAssign) and not s.launch)]


def _before_first_split(kernel: ir.Kernel) -> list[ir.Stmt]:
    first = next(i for i, s in enumerate(kernel.body) if isinstance(s, ir.SplitLoop))
    return _device_statements(kernel.body[:first])


def _prologue(kernel: ir.Kernel, ctx: PassContext, tensors: dict[str, TensorView]) -> list[str]:
    """Init, before any tile buffer: the device's kernel-scope statements written before the first split loop
    (scalars computed from `load(x[0])` values, single-element stores); UB is reset after them."""
    stmts = _before_first_split(kernel)
    if not stmts:
        return []
    w = _EpilogueWriter(ctx, tensors, kernel)
    w.lines += ["pipe.InitBuffer(scalarBuf_, static_cast<uint32_t>(GetBlockNum()) * 32 + 32);  // one-element math"]
    w.lines += [f"pipe.InitBuffer(scalarOut{camel(d.value)}_, 32);" for d in _store_dtypes(kernel, stmts)]
    for s in stmts:
        if isinstance(s, ir.ScalarAssign):
            w.assign(s)
        else:
            w.store(s, kernel.param(s.tensor).dtype)
    w.lines += ["PipeBarrier<PIPE_ALL>();  // the single-element copies are done with their UB",
                "pipe.Reset();  // the whole UB for the tile buffers"]
    return ["{  // kernel-scope statements before the first split loop"] + ["    " + line for line in w.lines] + ["}"]


def _phase_view(kernel: ir.Kernel, ctx: PassContext, k: int, tl: ir.TileLoop, tensors: dict[str, TensorView]) \
        -> PhaseView:
    suffix = str(k) if k else ""
    buffers = buffer_views(tl, suffix)
    by_name = {b.name: b for b in buffers}
    stages = write_stages(tl, lambda: (RowStageWriter if rows_of(tl) else StageWriter)(ctx, by_name, tensors))
    head, tail = compute_frame(buffers)
    # Each core starts from the identity of the combine; the declared initial value joins once, when
    # the per-core values are combined.
    acc_init = [f"Duplicate({find(by_name, ir.BufferRole.ACC_SLOT, n).member}.Get<float>(), "
                f"{c_literal(IDENTITY[c], DType.F32)}, 8);  // {n}: this core's running value"
                for n, c in _updates(tl).items()]
    acc_init += slots.acc_init_lines([(n, find(by_name, ir.BufferRole.SLOT_VECTOR, n).member)
                                      for n in _slot_updates(tl)])
    acc_init += slots.totals_lines([(b.buffer.of, b.member) for b in buffers
                                    if b.buffer.role is ir.BufferRole.SLOT_TOTALS])
    acc_init += scan_table_lines(buffers)
    copyin = stages[ir.StageKind.COPYIN]
    if _slot_updates(tl) or positions.uses_row(tl) or row_scatter.uses_row(tl) or col_select.uses_row(tl):  # Compute maps rows to slots / row indices: the tile's first row
        copyin.insert(0, "tileRow_ = offset;  // the tile's global rows are found in Compute")
    return PhaseView(suffix, loc(ctx, tl.span), f"tileLength{suffix}_", "blockLength_", tl.max_tile,
                     AUTO_TILE_GRANULE if tl.size is None else tl.size, buffers,
                     tuple(f"pipe.InitBuffer({b.member}, {b.init_args});" for b in buffers), tuple(acc_init),
                     tuple(copyin), (*head, *stages[ir.StageKind.COMPUTE], *tail), tuple(stages[ir.StageKind.COPYOUT]),
                     " + ".join(f"{b.num} * {host_bytes(b)}" for b in tl.buffers_decl) if rows_of(tl) else "",
                     tuple(_after_phase(kernel, ctx, k, tensors, by_name)),
                     row_cap=tl.size if rows_of(tl) and tl.size else 0,
                     preload=tuple(row_vectors.preload_lines(ctx, tl, buffers, tensors)))


def build_view(kernel: ir.Kernel, ctx: PassContext) -> VectorView:
    phases = _phases(kernel)
    split, tl = phases[0]
    fields = kernel_fields(kernel, ctx)
    tensors = {t.name: t for t in fields["tensors"]}
    phase_views = [_phase_view(kernel, ctx, k, t, tensors) for k, (_, t) in enumerate(phases)]
    first = phase_views[0]
    # Kernel-scope scalars: accumulators, named scalars, and the symbols read as values.
    kscalars = [s.name for s in kernel.body if isinstance(s, (ir.AccDecl, ir.ScalarAssign, ir.ScalarLoad))]
    kernel_scalars = [f"float {n}_ = 0.0f;" for n in dict.fromkeys(kscalars)]
    kernel_scalars += [f"uint64_t {sym}_ = 0;  // shape symbol read as a value" for sym in value_symbols(kernel, tl)]
    kernel_scalars += ["uint64_t rowStart_ = 0;  // this core's first row"] if _needs_row_start(kernel) else []
    if (positions.used(kernel) or row_scatter.used(kernel) or col_select.used(kernel)) and not kernel.slot_accumulators:  # (slots declare it)
        kernel_scalars.append("uint64_t tileRow_ = 0;  // first row of the tile in flight (set by CopyIn, read by Compute)")
    if positions.used(kernel):
        kernel_scalars.append("uint64_t chunkCol_ = 0;  // chunked rows: the chunk's first column (col_index())")
    kernel_scalars += row_broadcast.member_lines(kernel, lambda n: tensors[n].gm)
    kernel_scalars += row_gather.member_lines(kernel, lambda n: tensors[n].gm)
    kernel_scalars += row_scatter.member_lines(kernel, lambda n: tensors[n].gm)
    kernel_scalars += col_select.member_lines(kernel, lambda n: tensors[n].gm)
    kernel_scalars += slots.members(kernel, ctx) if kernel.slot_accumulators else []
    epilogue_bufs = (["TBuf<TPosition::VECCALC> scalarBuf_;  // combine slots + one-element math"]
                     if any(ph.after for ph in phase_views) or _before_first_split(kernel) else [])
    epilogue_bufs += [f"TBuf<TPosition::VECCALC> scalarOut{camel(d.value)}_;  // one {d} element"
                      for d in _store_dtypes(kernel, kernel.body)]
    epilogue_bufs += (["TBuf<TPosition::VECCALC> slotBuf_;  // slot accumulators' totals while combining"]
                      if kernel.slot_accumulators else [])
    rows = rows_of(tl)
    view = VectorView(
        **fields, buffers=tuple(b for ph in phase_views for b in ph.buffers), phases=tuple(phase_views),
        buffer_num=tl.buffers,
        copy_helpers="copy_helpers_pad.cpp.jinja" if ctx.target.has_datacopypad else "copy_helpers_nopad.cpp.jinja",
        workspace=bool(kernel.accumulators or kernel.slot_accumulators),  # accumulator slots per core
        workspace_per_core=slots.workspace_per_core(kernel) if kernel.slot_accumulators
        else str(acc_workspace.bytes_per_core(kernel)),
        launch_checks=tuple(slots.launch_checks(kernel, ctx, ctx.target.ub_budget)
                            + [LaunchCheck(c, m) for c, m in arg_reduce.launch_checks(kernel, ctx)]),
        init=tuple(_init_lines(kernel, ctx, fields)),
        init_buffers=(f"// {loc(ctx, tl.span)}: UB buffers, sized for the largest tile", *first.init_buffers),
        kernel_scalars=tuple(kernel_scalars), epilogue_bufs=tuple(epilogue_bufs),
        extra_members=("uint64_t rowLen_ = 0;  // row length", "uint64_t rowPitch_ = 0;  // row pitch in UB") if rows else (),
        tiling_fields=tuple(slots.tiling_fields(kernel)),
        slot_host=tuple(slots.host_lines(kernel, ctx, ctx.target.ub_budget)) if kernel.slot_accumulators else (),
        row_mode=rows is not None, unit="rows" if rows else "elements", extent_host=" * ".join(split.extent),
        tile_loc=loc(ctx, tl.span), max_tile=tl.max_tile, tile_granule=first.tile_granule,
        block_granule=block_granule(kernel), min_per_core=MIN_ELEMS_PER_CORE, min_tiles_per_core=MIN_TILES_PER_CORE,
        row_cost=row_cost_view(tl, one_tile=len(phases) == 1 and len(split.body) == 1) if rows else None,
        flat_cost=flat_cost_view(tl) if not rows and len(phases) == 1 and len(split.body) == 1 else None, row_len=" * ".join(rows.row) if rows else "", ub_budget=ctx.target.ub_budget if rows else 0,
        ub_formula=first.ub_formula, row_cap=first.row_cap)
    return _with_chunks(kernel, ctx, view, [t for _, t in phases], tensors) if rows else view


def _with_chunks(kernel: ir.Kernel, ctx: PassContext, view: VectorView, loops: list[ir.TileLoop],
                 tensors: dict[str, TensorView]) -> VectorView:
    """Rows longer than UB: the chunked paths (emit/chunk.py), or the reason there is none."""
    grouped = any(isinstance(t.shape.chunked, ir.ChunkPlan) and t.shape.chunked.row_groups for t in loops)
    group_views = share_views(kernel, view.tensors, "groupRow", "chunkRows_") if grouped else None
    c = kernel_chunks(kernel, ctx, loops, [ph.buffers for ph in view.phases], tensors, group_views)
    if c.tiling_error:
        view = replace(view, tiling_error=c.tiling_error)
    if not c.parts:
        return view
    parts, first = c.parts, c.first
    phases = view.phases
    if c.several:  # every loop walks the core's rows (loop 0 empties blockLength_ when it chunks)
        chunk_of = dict(parts)
        phases = tuple(replace(ph, chunk=chunk_of.get(k), rows="chunkRows_") for k, ph in enumerate(phases))
    if grouped:  # rows may split over core groups (emit/row_groups.py)
        view = replace(view, workspace=True, workspace_per_core=row_groups.workspace_per_core(kernel))
    return replace(
        view, phases=phases, init=view.init + c.init, chunk=True, chunk_first=first is not None, multi_chunk=c.several,
        chunk_passes=first.passes if first else (), chunk_count=first.count if first else 0,
        chunk_all_passes=tuple(p for _, part in parts for p in part.passes),
        chunk_processes=tuple(ChunkProcess(part.fn, part.process) for _, part in parts),
        chunk_members=tuple(dict.fromkeys(m for _, part in parts for m in part.members)),
        chunk_out_bufs=tuple(dict.fromkeys(x for _, part in parts for x in part.out_bufs)),
        row_group=c.row_group, row_group_fields=c.row_group_fields, row_elem_bytes=row_groups.row_elem_bytes(kernel),
        long_row_share=row_groups.LONG_ROW_SHARE_BYTES if row_groups.walks_long_rows(loops) else 0)


def project_manifest(kernel: ir.Kernel, ctx: PassContext, view: VectorView) -> dict:
    workspace = view.workspace_per_core
    return manifest(kernel, ctx, view, "AIV_ONLY", view.max_tile, view.unit,
                    tuple(b.buffer for b in view.buffers),
                    (int(workspace) if workspace.isdigit() else workspace) if view.workspace else 0)
