"""The chunked variant of a row kernel (lowering/passes/plan_chunks.py): rows longer than UB.

The kernel keeps its whole-row path; the host tiling sets `chunkLength` (elements per column chunk)
when one row does not fit UB, and then `Process()` runs `ProcessChunked()`: each core walks its rows
one at a time, and per row runs the passes (`ChunkPass<k>`, each a double-buffered CopyIn / Compute /
CopyOut loop over the row's chunks with its own UB plan) with the per-row scalar work between them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from ..vector_scan import SCAN_APIS
from . import positions, row_broadcast, row_gather, row_groups
from .compensated import compensation, neumaier
from .shared import (
    IDENTITY,
    BufferView,
    ScalarWriter,
    StageWriter,
    TensorView,
    buffer_views,
    c_literal,
    c_scalar,
    camel,
    compute_frame,
    copy_call,
    find,
    loc,
    scan_lines,
    scan_table_lines,
    snippet,
    sync,
    write_stages,
)


@dataclass(frozen=True)
class ChunkPassView:
    """`ChunkPass<id>()`: one pass over the row's column chunks, with its own buffers and chunk length."""

    suffix: str
    k: int
    id: str
    loc: str
    field: str  # the tiling field of its chunk length
    field_comment: str
    member: str
    max_chunk: int
    buffers: tuple[BufferView, ...]
    init_buffers: tuple[str, ...]
    acc_init: tuple[str, ...]
    copyin: tuple[str, ...]
    compute: tuple[str, ...]
    copyout: tuple[str, ...]
    reads: tuple[str, ...]  # the row's reductions, read by the scalar unit after the pass
    combine: tuple[str, ...]  # GroupCombine<id>() when rows split over core groups
    backwards: bool = False  # reverse scans: the row's chunks from the last one (plan_chunks keeps directions apart)


@dataclass(frozen=True)
class ChunkView:
    """The chunked path of one split loop: `fn()` walks the core's rows and runs the passes per row."""

    passes: tuple[ChunkPassView, ...]
    count: int
    fn: str
    members: tuple[str, ...]
    out_bufs: tuple[str, ...]  # the one-element store buffers ChunkReset() carves after chunkMath_
    process: tuple[str, ...]
    init: tuple[str, ...]
    enter: tuple[str, ...]


@dataclass(frozen=True)
class KernelChunks:
    """The chunked paths of a kernel's split loops (`parts`: split loop -> its path), what Init gains, and
    why a row that does not fit UB cannot run (`tiling_error`)."""

    parts: tuple[tuple[int, ChunkView], ...]
    init: tuple[str, ...]
    several: bool
    row_group: bool
    row_group_fields: tuple[str, ...] = ()
    tiling_error: str | None = None

    @property
    def first(self) -> ChunkView | None:
        return self.parts[0][1] if self.parts and self.parts[0][0] == 0 else None


class _ChunkStageWriter(StageWriter):
    """A pass's stages over one chunk: rows of a [B, D] tensor start at rowOffset_, row vectors at 0.
    `chunk`: the pass's chunk length member; scans carry the row's running value in `scanCarry<pass>_<n>_`."""

    rows = False

    def __init__(self, ctx, buffers, tensors, chunk: str = "", pid: str = "", compensated: frozenset[str] = frozenset()):
        super().__init__(ctx, buffers, tensors)
        self.chunk, self.pid, self.scans = chunk, pid, 0
        self.compensated = compensated  # sums folded on the scalar unit with their rounding errors (scan offsets)

    def vec_op(self, s: ir.VecOp, count: str = "count") -> None:
        if s.api in positions.APIS:  # col_index() / row_index() over the chunk
            self.mark(s.span)
            self.lines += positions.chunk_lines(s, c_scalar(s.srcs[0], DType.I64))
            return None
        if s.api not in SCAN_APIS.values():
            return super().vec_op(s, count)
        self.mark(s.span)
        carry = scan_carry(self.pid, self.scans)
        self.scans += 1
        self.lines += scan_lines(s, self.buffers[s.srcs[0]].buffer.dtype, self.buffers[s.dst].buffer.dtype,
                                 chunk=self.chunk, carry=carry, scratch=self.buffers[dict(s.attrs)["scratch"]].buffer)
        return None

    def copy_in(self, s: ir.CopyIn) -> None:
        self.rows = s.index.rows
        if s.index.period and s.index.rows:  # a chunk of the row this row reads (a broadcast over split symbols)
            self.mark(s.span)
            self.lines += row_broadcast.chunk_copy_in_lines(s, self.buffers[s.buffer].member, self.ctype(s.buffer),
                                                            self.tensors[s.tensor].gm)
            return
        if s.index.by:  # a chunk of the row the index tensor picks for this row
            by, q = self.tensors[s.index.by], self.buffers[s.buffer].member
            self.mark(s.span)
            self.lines += row_gather.chunk_copy_in_lines(s, q, self.ctype(s.buffer), self.tensors[s.tensor].gm, by.gm)
            return
        super().copy_in(s)

    def copy_out(self, s: ir.CopyOut) -> None:
        self.rows = s.index.rows
        super().copy_out(s)

    def copy_call(self, way: str, buf: str, gm: str) -> str:
        return copy_call(way, "", buf, f"{gm}[rowOffset_ + offset]" if self.rows else f"{gm}[offset]", "count")

    def accumulate(self, s: ir.Accumulate) -> None:
        """Folds no single instruction does: products (a halving tree of Mul, the scalar unit finishing), the running
        max of an online max/sum, and a mean / second-moment pair (chunk_moments.py)."""
        if s.moments:
            self.mark(s.span)
            pair, step = s.moments[:2], s.moments[2]
            slots = {n: find(self.buffers, ir.BufferRole.ACC_SLOT, n).name for n in pair}
            self.lines += snippet("chunk_moments", p=row_groups.moment_names(pair, slots), step=step, buf=s.value.name,
                                  tmp=find(self.buffers, ir.BufferRole.ACC_TMP, dtype=DType.F32).name)
            return None
        if s.name in self.compensated:  # a halving tree of Add over the chunk's own f32 copy (scan_offsets.py), then
            self.mark(s.span)            # its last block and tail added on the scalar unit with their rounding errors
            buf, hi, lo = s.value.name, f"{ir.row_ref(s.name).name}_", compensation(s.name)
            self.lines += ["{",
                           "    uint32_t nb = count / 8;  // whole f32 blocks, added in halves (pairwise summation)",
                           "    while (nb > 1) {  // blocks [nb - h, nb) onto blocks [0, h)",
                           "        const uint32_t h = nb / 2;",
                           f"        Add({buf}, {buf}, {buf}[(nb - h) * 8], static_cast<int32_t>(h * 8));",
                           "        nb -= h;",
                           "    }",
                           *("    " + x for x in sync("V_S", "the scalar unit adds the last block and the tail")),
                           "    for (uint32_t j = 0; j < count; j = (j + 1 == nb * 8) ? count / 8 * 8 : j + 1) {",
                           *("        " + x for x in neumaier(hi, lo, f"{buf}.GetValue(j)")),
                           "    }",
                           *("    " + x for x in sync("S_V", "the copy is the vector unit's again")),
                           "}"]
            return None
        if not s.online_sum and s.reduce != "reduce_prod":
            return super().accumulate(s)
        self.mark(s.span)
        buf, dt = s.value.name, self.buffers[s.value.name].buffer.dtype
        if s.online_sum:
            self.lines += snippet("chunk_fold", online=True, buf=buf, m=f"{ir.row_ref(s.name).name}_",
                                  out=find(self.buffers, ir.BufferRole.REDUCE_OUT, dtype=dt).name,
                                  tmp=find(self.buffers, ir.BufferRole.ACC_TMP, dtype=dt).name,
                                  total=find(self.buffers, ir.BufferRole.ACC_SLOT, s.online_sum).name)
        else:
            self.lines += snippet("chunk_fold", online=False, buf=buf, cast=dt is not DType.F32,
                                  w=find(self.buffers, ir.BufferRole.PROD_TMP).name,
                                  slot=find(self.buffers, ir.BufferRole.ACC_SLOT, s.name).name)
        return None


_MATH_BUF = "chunkMath_.Get<float>()"  # the one-block buffer of per-row scalar math



def compensated_sums(p: ir.ChunkPass) -> frozenset[str]:
    """The folds of a pass summed with compensation: the scans' offsets (scan_offsets.py) of f32 sums."""
    return frozenset(f.name for f in p.reductions if f.prefix and f.combine is ir.Combine.ADD)


def scan_carry(pid: str, n: int) -> str:
    """The member carrying scan n of pass `pid` from chunk to chunk (its Kahan compensation: ...Comp_)."""
    return f"scanCarry{pid}_{n}_"


def _scans(loop: ir.TileLoop) -> list[ir.VecOp]:
    return [op for st in loop.body for op in (st.body if isinstance(st, ir.Stage) else (st,))
            if isinstance(op, ir.VecOp) and op.api in SCAN_APIS.values()]


def _out_buf(dtype: DType) -> str:
    return f"chunkOut{camel(dtype.value)}_"


def chunk_names(k: int, p: int) -> tuple[str, str]:
    """(pass id, tiling field) of pass p of split loop k: loop 0 keeps `ChunkPass<p>` and `chunkLength`,
    `chunkLength<p>`; later loops get `ChunkPass<k>_<p>` and `chunkLength<k>_<p>`."""
    if k == 0:
        return str(p), "chunkLength" if p == 0 else f"chunkLength{p}"
    return f"{k}_{p}", f"chunkLength{k}_{p}"


def chunk_view(kernel: ir.Kernel, ctx, plan: ir.ChunkPlan, tensor_map: dict[str, TensorView],
               row_buffers: dict[str, BufferView], k: int = 0, several: bool = False,
               group_views: list[str] | None = None) -> ChunkView:
    """The chunked path of split loop k; `row_buffers` are its whole-row plan's buffer views. `several`:
    the kernel has several split loops. `group_views`: when rows may be split over a group of cores
    (emit/row_groups.py), the Init lines of the GM views re-pointed at the group's row (vector.share_views)."""
    grouped = group_views is not None
    passes: list[ChunkPassView] = []
    scan_members: list[str] = []
    for p_index, p in enumerate(plan.passes):
        pid, field = chunk_names(k, p_index)
        suffix = f"C{pid}"
        buffers = buffer_views(p.loop, suffix, tile=f"{field}_")
        by_name = {b.name: b for b in buffers}
        kahan = compensated_sums(p)
        stages = write_stages(p.loop, lambda by_name=by_name, field=field, pid=pid, kahan=kahan:
                              _ChunkStageWriter(ctx, by_name, tensor_map, f"{field}_", pid, kahan))
        scan_members += [f"float {compensation(n)} = 0.0f;  // chunked mode: the rounding error of {n} (compensated)"
                         for n in sorted(kahan)]
        scans = _scans(p.loop)
        scan_members += [f"float {scan_carry(pid, n).removesuffix('_')}{part}_ = 0.0f;  // chunked mode: {what}"
                         for n in range(len(scans)) for part, what in
                         (("", f"scan {n} of pass {pid}: the row's running value"), ("Comp", "its Kahan compensation"))]
        head, tail = compute_frame(buffers)
        pairs = list(dict.fromkeys(f.moments for f in p.reductions if f.moments))
        acc_init = [f"{ir.row_ref(f.name).name}_ = {c_literal(float('-inf'), DType.F32)};  // {f.name}: the running max"
                    if f.online_sum else
                    f"Duplicate({find(by_name, ir.BufferRole.ACC_SLOT, f.name).member}.Get<float>(), "
                    f"{c_literal(IDENTITY[f.combine], DType.F32)}, 8);  // {f.name}: folded over the row's chunks"
                    for f in p.reductions if not f.moments and f.name not in kahan]
        acc_init += [f"{ir.row_ref(n).name}_ = 0.0f; {compensation(n)} = 0.0f;  // {n}: a compensated sum of the chunks"
                     for n in sorted(kahan)]
        for pair in pairs:  # the row's (count, mean, M2) and no chunk pending
            n = row_groups.moment_names(pair, {})
            acc_init.append(f"{n['count']} = 0.0f; {n['mean']} = 0.0f; {n['m2']} = 0.0f; {n['pend']} = 0.0f;"
                            f"  // {pair[0]}, {pair[1]}: mean and M2 in one pass")
        acc_init += scan_table_lines(buffers, f"{field}_")  # the scans' gather tables (the UB was carved anew)
        for n, op in enumerate(scans):  # each row starts its scans from the identity (a core group: the offsets)
            c, identity = scan_carry(pid, n), "1.0f" if op.api == "ScanProd" else "0.0f"
            start, comp = identity, "0.0f"
            if grouped and p.scan_offsets:  # Kahan's compensation is subtracted: the offset is hi + lo
                off = p.scan_offsets[n]
                start = f"rowGroup_ > 1 ? {ir.row_ref(off).name}_ : {identity}"
                if op.api == "ScanSum":
                    comp = f"rowGroup_ > 1 ? -{compensation(off)} : 0.0f"
            acc_init += [f"{c} = {start};", f"{c.removesuffix('_')}Comp_ = {comp};"]
        reads = [f"{ir.row_ref(f.name).name}_ = {find(by_name, ir.BufferRole.ACC_SLOT, f.name).member}"
                 ".Get<float>().GetValue(0);" for f in p.reductions if not f.online_sum and not f.moments
                 and f.name not in kahan]
        for pair in pairs:  # the last chunk's sums
            slots = {n: f"{find(by_name, ir.BufferRole.ACC_SLOT, n).member}.Get<float>()" for n in pair}
            reads += snippet("chunk_moments", p=row_groups.moment_names(pair, slots), step="after")
        if reads:
            reads = [*sync("V_S", "the scalar unit reads the row's reductions"), *reads]
        if k == 0:
            comment = ("elements per column chunk of pass 0 when one row does not fit UB (0: whole rows)"
                       if p_index == 0 else f"elements per column chunk of pass {p_index}")
        else:
            comment = f"elements per column chunk of pass {p_index} of split loop {k}" + \
                (" when one row does not fit UB (0: whole rows)" if p_index == 0 else "")
        passes.append(ChunkPassView(
            suffix, p_index, pid, loc(ctx, p.loop.span), field, comment, f"{field}_", p.max_chunk, buffers,
            tuple(f"pipe.InitBuffer({b.member}, {b.init_args});" for b in buffers), tuple(acc_init),
            (*(["chunkCol_ = offset;  // col_index(): the chunk's first column"] if positions.uses_col(p.loop) else []),
             *stages[ir.StageKind.COPYIN]), (*head, *stages[ir.StageKind.COMPUTE], *tail),
            tuple(stages[ir.StageKind.COPYOUT]), tuple(reads),
            tuple(row_groups.group_combine(pid, p.reductions)) if grouped and p.reductions else (),
            any(dict(op.attrs)["reverse"] == "true" for op in scans)))
    members = snippet("chunk_members", passes=passes, k=k, grouped=grouped,
                      out_bufs=[{"member": _out_buf(d), "dtype": d} for d in plan.store_dtypes],
                      row_values=[ir.row_ref(n).name for n in plan.row_values], accs=[f.name for f in plan.accumulators])
    steps = []
    for st in plan.steps:
        where = loc(ctx, getattr(st, "span", None) or p.loop.span)
        match st:
            case ir.RunPass(index=i):
                if plan.passes[i].group_only and not grouped:
                    continue  # the scans' offsets: only rows split over a core group need them (scan_offsets.py)
                reverse = any(f.prefix == "after" for f in plan.passes[i].reductions)
                steps.append({"kind": "pass", "id": chunk_names(k, i)[0], "group": grouped and plan.passes[i].reductions,
                              "group_only": plan.passes[i].group_only, "unread": "0" if reverse else "rowGroup_ - 1"})
            case ir.RowLoad(slot=True):
                steps.append({"kind": "slot_read", "loc": where, "tensor": st.tensor, "value": ir.row_ref(st.name).name})
            case ir.RowLoad():
                gm = tensor_map[st.tensor].gm
                steps.append({"kind": "load", "loc": where, "value": ir.row_ref(st.name).name, "gm": gm,
                              "index": row_broadcast.source_row("rowStart_ + row", gm, bool(st.stride))
                              if st.period else "row"})
            case ir.RowScalar() | ir.RowStore():
                w = ScalarWriter(ctx, tensor_map, kernel, _MATH_BUF)
                value, t = w.scalar(st.value), tensor_map.get(getattr(st, "tensor", ""))
                steps.append({"kind": "scalar", "loc": where, "lines": w.lines, "expr": value,
                              "value": ir.row_ref(st.name).name} if isinstance(st, ir.RowScalar) else
                             {"kind": "store", "loc": where, "lines": w.lines, "expr": value, "ctype": t.ctype,
                              "gm": t.gm, "buf": _out_buf(kernel.param(st.tensor).dtype)})
            case ir.RowSlotAccumulate():
                steps.append({"kind": "slot_fold", "loc": where, "name": st.name, "expr": c_scalar(st.value, DType.F32)})
            case ir.RowAccumulate():
                steps.append({"kind": "fold", "loc": where, "name": st.name, "combine": st.combine.value,
                              "expr": c_scalar(st.value, DType.F32)})
    slots = [find(row_buffers, ir.BufferRole.ACC_SLOT, f.name).member for f in plan.accumulators]
    vecs = [(n, find(row_buffers, ir.BufferRole.SLOT_VECTOR, n).member) for n in plan.slot_accumulators]
    process = snippet("chunk_process", steps=steps, grouped=grouped,
                      accs=[{"name": f.name, "identity": c_literal(IDENTITY[f.combine], DType.F32)}
                            for f in plan.accumulators],
                      slots=[{"name": f.name, "member": m} for m, f in zip(slots, plan.accumulators, strict=True)],
                      vecs=[{"name": n, "member": m} for n, m in vecs])
    if k == 0:
        init = ["chunkLength_ = tiling.chunkLength;", *(f"{ph.member} = tiling.{ph.field};" for ph in passes[1:])]
        if grouped:
            init.append("colEnd_ = rowLen_;  // the chunks' columns: the whole row (a share of it when rowGroup_ > 1)")
        if several:
            init.append("chunkRows_ = blockLength_;  // this core's rows, in every split loop")
        enter = snippet("chunk_enter", several=several, slots=slots, vecs=[{"name": n, "member": m} for n, m in vecs],
                        group=row_groups.init_lines(group_views, row_groups.workspace_base(kernel)) if grouped else [])
    else:
        init, enter = [f"{ph.member} = tiling.{ph.field};" for ph in passes], []
    return ChunkView(tuple(passes), len(plan.passes), f"ProcessChunked{k if k else ''}", (*members, *scan_members),
                     tuple(_out_buf(d) for d in plan.store_dtypes), tuple(process), tuple(init), tuple(enter))


def kernel_chunks(kernel: ir.Kernel, ctx, loops: list[ir.TileLoop], row_buffers: list[tuple[BufferView, ...]],
                  tensor_map: dict[str, TensorView], group_views: list[str] | None) -> KernelChunks:
    """The chunked paths of the row loops that have one: each selected at run time by its own first chunk
    length (its rows do not fit its own UB plan); the others keep whole rows."""
    several = len(loops) > 1
    reasons = [(k, t.shape.chunked.reason) for k, t in enumerate(loops) if isinstance(t.shape.chunked, ir.NoChunk)]
    error = None
    if reasons:
        k, why = reasons[0]
        who = "this kernel" if k == 0 else f"split loop {k}"
        error = f"one row does not fit the Unified Buffer, and {who} cannot run in column chunks: {why}"
    parts = tuple((k, chunk_view(kernel, ctx, t.shape.chunked, tensor_map, {b.name: b for b in row_buffers[k]}, k,
                                 several, group_views))
                  for k, t in enumerate(loops) if isinstance(t.shape.chunked, ir.ChunkPlan))
    if not parts:
        return KernelChunks((), (), several, False, tiling_error=error)
    first = parts[0][1] if parts[0][0] == 0 else None
    if several:  # the chunk lengths of every loop and the core's rows first; then loop 0's early return, if it chunks
        head = first.init if first else ("chunkRows_ = blockLength_;  // this core's rows, in every split loop",)
        init = (*head, *(x for k, part in parts if k > 0 for x in part.init), *(first.enter if first else ()))
    else:
        init = (*first.init, *first.enter)
    grouped = group_views is not None
    fields = tuple(part.passes[0].field for k, part in parts if k > 0) if grouped else ()
    return KernelChunks(parts, init, several, grouped, fields, error)
