"""Emit the chunked variant of a row kernel (lowering/chunking.py): rows longer than UB.

The kernel keeps its whole-row path; the host tiling sets `chunkLength` (elements per column chunk)
when one row does not fit UB, and then `Process()` runs `ProcessChunked()`: each core walks its rows
one at a time, and per row runs the passes (`ChunkPass<k>`, each a double-buffered CopyIn / Compute /
CopyOut loop over the row's chunks with its own UB plan) with the per-row scalar work between them.
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from . import row_groups
from .chunking import ONLINE_MAX, ChunkPlan, RowAccumulate, RowLoad, RowScalar, RowStore, row_ref
from .emit import (
    _IDENTITY,
    _buffer_views,
    _copy,
    _loc,
    _ScalarWriter,
    _StageWriter,
    c_literal,
    c_scalar,
    camel,
    compute_frame,
    share_views,
    write_stages,
)
from .emit_slots import slot_expr
from .scalar_loops import SYNC_FROM_SCALAR, SYNC_TO_SCALAR


class _ChunkStageWriter(_StageWriter):
    """A pass's stages over one chunk: rows of a [B, D] tensor start at rowOffset_, row vectors at 0."""

    rows = False

    def copy_in(self, s: ir.CopyIn) -> None:
        self.rows = s.index.rows
        super().copy_in(s)

    def copy_out(self, s: ir.CopyOut) -> None:
        self.rows = s.index.rows
        super().copy_out(s)

    def copy_call(self, way: str, buf: str, gm: str) -> str:
        return _copy(way, "", buf, f"{gm}[rowOffset_ + offset]" if self.rows else f"{gm}[offset]", "count")

    def accumulate(self, s: ir.Accumulate) -> None:
        if s.combine.startswith(ONLINE_MAX):
            return self.online_max(s)
        if s.reduce != "reduce_prod":
            return super().accumulate(s)
        # No product-reduce instruction: the scalar unit multiplies the chunk into the row's f32 value.
        self.mark(s.span)
        slot = f"accSlot_{s.name}"
        self.lines += [*SYNC_TO_SCALAR, "{", f"    float acc = {slot}.GetValue(0);",
                       "    for (uint32_t i = 0; i < count; ++i) {",
                       f"        acc *= static_cast<float>({s.value.name}.GetValue(i));", "    }",
                       f"    {slot}.SetValue(0, acc);", "}", *SYNC_FROM_SCALAR]
        return None

    def online_max(self, s: ir.Accumulate) -> None:
        """The running max of an online max/sum (chunking._online_softmax_sums): before this chunk's
        exp(v - max) is summed, the max takes the chunk's, and the running sum is rescaled."""
        self.mark(s.span)
        buf = s.value.name
        dt = self.buffers[buf]["buffer"].dtype
        out, tmp, m = f"reduceOut_{dt}", f"accTmp_{dt}", f"{row_ref(s.name).name}_"
        total = f"accSlot_{s.combine.split(':', 1)[1]}"
        self.lines += [f"ReduceMax({out}, {buf}, {tmp}, static_cast<int32_t>(count));",
                       "SetFlag<HardEvent::V_S>(EVENT_ID0);", "WaitFlag<HardEvent::V_S>(EVENT_ID0);", "{",
                       f"    const float c = static_cast<float>({out}.GetValue(0));",
                       f"    const float next = c > {m} ? c : {m};",
                       "    LocalTensor<float> math = chunkMath_.Get<float>();",
                       f"    math.SetValue(0, {m} - next);  // exp(old max - new max) rescales the running sum",
                       "    SetFlag<HardEvent::S_V>(EVENT_ID0);", "    WaitFlag<HardEvent::S_V>(EVENT_ID0);",
                       "    Exp(math, math, 1);", f"    Mul({total}, {total}, math, 1);", f"    {m} = next;", "}"]


_FOLD_IDENTITY = {**_IDENTITY, "mul": 1.0}


class _ChunkScalarWriter(_ScalarWriter):
    MATH_BUF = "chunkMath_.Get<float>()"


def _out_buf(dtype: DType) -> str:
    return f"chunkOut{camel(dtype.value)}_"


def _slot_block(n: str, region: str) -> list[str]:
    """The 32-byte block of `n`'s workspace region (`<n>Part_` / `<n>Tot_`) holding the current row's
    slot, copied into the one-block math buffer; `k` is the slot."""
    return [f"const uint64_t k = {slot_expr(n, 'rowStart_ + row')};",
            f"const uint64_t at = {n}{region}_ + GetBlockIdx() * {n}Pad_ + k / 8 * 8;",
            "LocalTensor<float> blk = chunkMath_.Get<float>();",
            "DataCopy(blk, workspaceGm_[at], 8);",
            "SetFlag<HardEvent::MTE2_S>(EVENT_ID0);", "WaitFlag<HardEvent::MTE2_S>(EVENT_ID0);"]


def _slot_read(ctx, st: RowLoad) -> list[str]:
    """`s[r]`: the row's slot total from this core's copy of the totals (GM workspace)."""
    n = st.tensor
    return [f"// {_loc(ctx, st.span)}: {n}[r], the total of the row's slot", "{",
            *("    " + x for x in _slot_block(n, "Tot")),
            f"    {row_ref(st.name).name}_ = blk.GetValue(static_cast<uint32_t>(k % 8));",
            "    SetFlag<HardEvent::S_MTE2>(EVENT_ID0);  // before the block is copied into again",
            "    WaitFlag<HardEvent::S_MTE2>(EVENT_ID0);", "}"]


def _slot_fold(ctx, st: RowAccumulate, grouped: bool = False) -> list[str]:
    """`s[r] += v` once the row's value is known: read-modify-write of the slot's 32-byte block of this
    core's partial vector in the GM workspace (the scalar unit does not write GM: DMA both ways).
    `grouped`: by the first core of the row's group only."""
    n = st.name
    return [f"// {_loc(ctx, st.span)}: {n}[r] += the row's value, into this core's partial vector of {n}" +
            (" (the group's first core)" if grouped else ""), "if (groupRank_ == 0) {" if grouped else "{",
            f"    const float v = {c_scalar(st.value, DType.F32)};",
            *("    " + x for x in _slot_block(n, "Part")),
            "    blk.SetValue(static_cast<uint32_t>(k % 8), blk.GetValue(static_cast<uint32_t>(k % 8)) + v);",
            "    SetFlag<HardEvent::S_MTE3>(EVENT_ID0);", "    WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);",
            "    DataCopy(workspaceGm_[at], blk, 8);",
            "    SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);  // the next fold reads the block again",
            "    WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);",
            "    SetFlag<HardEvent::MTE3_S>(EVENT_ID0);  // before the scalar unit writes the block again",
            "    WaitFlag<HardEvent::MTE3_S>(EVENT_ID0);", "}"]


def chunk_names(k: int, p: int) -> tuple[str, str]:
    """(pass id, tiling field) of pass p of split loop k: loop 0 keeps `ChunkPass<p>` and `chunkLength`,
    `chunkLength<p>`; later loops get `ChunkPass<k>_<p>` and `chunkLength<k>_<p>`."""
    if k == 0:
        return str(p), "chunkLength" if p == 0 else f"chunkLength{p}"
    return f"{k}_{p}", f"chunkLength{k}_{p}"


def chunk_view(kernel: ir.Kernel, ctx, plan: ChunkPlan, tensor_map: dict[str, dict], row_buffers: dict[str, dict],
               k: int = 0, several: bool = False, group_views: list[str] | None = None) -> dict:
    """The view parts of the chunked path of split loop k; `row_buffers` are its whole-row plan's buffer
    views. `several`: the kernel has several split loops (lowering/emit.py merges their parts).
    `group_views`: when rows may be split over a group of cores (lowering/row_groups.py), the Init lines
    of the GM views re-pointed at the group's row (emit.share_views)."""
    grouped = group_views is not None
    passes = []
    members: list[str] = []
    for p_index, p in enumerate(plan.passes):
        pid, field = chunk_names(k, p_index)
        suffix = f"C{pid}"
        buffers = _buffer_views(p.loop, suffix, tile=f"{field}_")
        by_name = {b["name"]: b for b in buffers}
        stages = write_stages(p.loop, lambda by_name=by_name: _ChunkStageWriter(ctx, by_name, tensor_map))
        head, tail = compute_frame(buffers)
        acc_init = [f"{row_ref(n).name}_ = {c_literal(float('-inf'), DType.F32)};  // {n}: the running max"
                    if c.startswith(ONLINE_MAX) else
                    f"Duplicate({by_name[f'accSlot_{n}']['member']}.Get<float>(), "
                    f"{c_literal(_FOLD_IDENTITY[c], DType.F32)}, 8);  // {n}: folded over the row's chunks"
                    for n, c in p.reductions]
        reads = [f"{row_ref(n).name}_ = {by_name[f'accSlot_{n}']['member']}.Get<float>().GetValue(0);"
                 for n, c in p.reductions if not c.startswith(ONLINE_MAX)]
        if reads:
            reads = ["SetFlag<HardEvent::V_S>(EVENT_ID0);  // the scalar unit reads the row's reductions",
                     "WaitFlag<HardEvent::V_S>(EVENT_ID0);", *reads]
        if k == 0:
            comment = ("elements per column chunk of pass 0 when one row does not fit UB (0: whole rows)"
                       if p_index == 0 else f"elements per column chunk of pass {p_index}")
        else:
            comment = f"elements per column chunk of pass {p_index} of split loop {k}" + \
                (" when one row does not fit UB (0: whole rows)" if p_index == 0 else "")
        passes.append({"suffix": suffix, "k": p_index, "id": pid, "loc": _loc(ctx, p.loop.span), "field": field,
                       "field_comment": comment, "member": f"{field}_", "max_chunk": p.max_chunk,
                       "init_buffers": [f"pipe.InitBuffer({b['member']}, {b['init_args']});" for b in buffers],
                       "acc_init": acc_init, "copyin": stages[ir.StageKind.COPYIN],
                       "compute": head + stages[ir.StageKind.COMPUTE] + tail,
                       "copyout": stages[ir.StageKind.COPYOUT], "reads": reads,
                       "combine": row_groups.group_combine(pid, p.reductions) if grouped and p.reductions else []})
        members += [f"{b['decl']} {b['member']};" for b in buffers]
    members.append("TBuf<TPosition::VECCALC> chunkMath_;  // one-element math of per-row values")
    members += [f"TBuf<TPosition::VECCALC> {_out_buf(d)};  // one {d} element of a per-row store"
                for d in plan.store_dtypes]
    members += [f"float {row_ref(n).name}_ = 0.0f;  // per-row value (chunked mode)" for n in plan.row_values]
    members += [f"float {n}Core_ = 0.0f;  // this core's running value of {n} (chunked mode)"
                for n, _ in plan.accumulators]
    members += ["uint32_t chunkLength_ = 0;  // elements per column chunk of pass 0; 0: whole rows fit UB"
                if k == 0 else f"uint32_t {passes[0]['member']} = 0;  // elements per column chunk of pass 0 of "
                f"split loop {k}; 0: whole rows fit UB",
                *(f"uint32_t {ph['member']} = 0;  // elements per column chunk of pass {ph['k']}"
                  + (f" of split loop {k}" if k else "") for ph in passes[1:]),
                "uint64_t chunkRows_ = 0;  // chunked mode: this core's rows",
                "uint64_t rowOffset_ = 0;  // chunked mode: the current row's first element"]
    # the UB is carved anew for the next pass: the last pass's copies (and the previous row's copy-out) must
    # have finished with their bytes first (the new buffers' queues know nothing of the old events)
    reset = ["PipeBarrier<PIPE_ALL>();", "pipe.Reset();", "pipe.InitBuffer(chunkMath_, 32);"]
    reset += [f"pipe.InitBuffer({_out_buf(d)}, 32);" for d in plan.store_dtypes]
    body = ["rowOffset_ = row * D_;", "ChunkReset();"]
    for st in plan.steps:
        if isinstance(st, int):
            body.append(f"ChunkPass{chunk_names(k, st)[0]}();")
            if grouped and plan.passes[st].reductions:
                body += ["if (rowGroup_ > 1) {  // the group's partials of the row, combined by every core of the group",
                         f"    GroupCombine{chunk_names(k, st)[0]}();", "}"]
        elif isinstance(st, RowLoad) and st.slot:
            body += _slot_read(ctx, st)
        elif isinstance(st, RowLoad):
            gm = tensor_map[st.tensor]["gm"]
            index = f"(rowStart_ + row) % {gm}Period_" if st.period else "row"
            body += [f"// {_loc(ctx, st.span)}",
                     f"{row_ref(st.name).name}_ = static_cast<float>({gm}.GetValue({index}));"]
        elif isinstance(st, RowScalar):
            w = _ChunkScalarWriter(ctx, tensor_map, kernel)
            value = w.scalar(st.value)
            line = f"{row_ref(st.name).name}_ = {value};"
            body.append(f"// {_loc(ctx, st.span)}")
            body += ["{", *("    " + x for x in w.lines), "    " + line, "}"] if w.lines else [line]
        elif isinstance(st, RowAccumulate) and st.combine == "slots":
            body += _slot_fold(ctx, st, grouped)
        elif isinstance(st, RowAccumulate):
            core, v = f"{st.name}Core_", c_scalar(st.value, DType.F32)
            fold = {"add": f"{core} += {v};", "max": f"{core} = {v} > {core} ? {v} : {core};",
                    "min": f"{core} = {v} < {core} ? {v} : {core};"}[st.combine]
            body += [f"// {_loc(ctx, st.span)}" + (": the row's value, once (the group's first core)" if grouped else ""),
                     *(["if (groupRank_ == 0) {", f"    {fold}", "}"] if grouped else [fold])]
        elif isinstance(st, RowStore):
            t = tensor_map[st.tensor]
            dtype = kernel.param(st.tensor).dtype
            w = _ChunkScalarWriter(ctx, tensor_map, kernel)
            value = w.scalar(st.value)
            body += [f"// {_loc(ctx, st.span)}: one element per row" +
                     (", written by the group's first core" if grouped else ""),
                     "if (groupRank_ == 0) {" if grouped else "{", *("    " + x for x in w.lines),
                     f"    LocalTensor<{t['ctype']}> one = {_out_buf(dtype)}.Get<{t['ctype']}>();",
                     f"    one.SetValue(0, static_cast<{t['ctype']}>({value}));",
                     "    SetFlag<HardEvent::S_MTE3>(EVENT_ID0);", "    WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);",
                     f"    {_copy('UbToGm', '', 'one', t['gm'] + '[row]', '1')}",
                     "    SetFlag<HardEvent::MTE3_S>(EVENT_ID0);  // the next row writes the block again",
                     "    WaitFlag<HardEvent::MTE3_S>(EVENT_ID0);", "}"]
    slots = [row_buffers[f"accSlot_{n}"]["member"] for n, _ in plan.accumulators]
    vecs = [(n, row_buffers[f"accVec_{n}"]["member"]) for n in plan.slot_accumulators]
    process = [f"{n}Core_ = {c_literal(_IDENTITY[c], DType.F32)};" for n, c in plan.accumulators]
    if vecs:  # this core's partial vectors start at zero in the GM workspace; rows fold into them
        process += ["pipe.Reset();  // zero this core's partial vectors of the slot accumulators in the workspace"]
        for n, m in vecs:
            process += [f"pipe.InitBuffer({m}, static_cast<uint32_t>({n}Pad_ * sizeof(float)));",
                        f"Duplicate({m}.Get<float>(), 0.0f, static_cast<int32_t>({n}Pad_));",
                        "SetFlag<HardEvent::V_MTE3>(EVENT_ID0);", "WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);",
                        f"DataCopy(workspaceGm_[{n}Part_ + GetBlockIdx() * {n}Pad_], {m}.Get<float>(), "
                        f"static_cast<uint32_t>({n}Pad_));"]
        process += ["SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);  // the rows' folds read the blocks",
                    "WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);"]
    process += ["for (uint64_t row = 0; row < chunkRows_; ++row) {", *("    " + x for x in body), "}"]
    if slots or vecs:
        process += ["PipeBarrier<PIPE_ALL>();  // the last row's copies are done with UB",
                    "pipe.Reset();  // this core's running values go where the cross-core combine reads them",
                    *(f"pipe.InitBuffer({m}, 32);" for m in slots),
                    *(f"{m}.Get<float>().SetValue(0, {n}Core_);" for m, (n, _) in zip(slots, plan.accumulators,
                                                                                        strict=True))]
    for n, m in vecs:  # the combine copies this core's partial vector out of UB
        process += [f"pipe.InitBuffer({m}, static_cast<uint32_t>({n}Pad_ * sizeof(float)));",
                    f"DataCopy({m}.Get<float>(), workspaceGm_[{n}Part_ + GetBlockIdx() * {n}Pad_], "
                    f"static_cast<uint32_t>({n}Pad_));"]
    if vecs:
        process += ["SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);", "WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);"]
    if k == 0:
        init = ["chunkLength_ = tiling.chunkLength;",
                *(f"{ph['member']} = tiling.{ph['field']};" for ph in passes[1:])]
        if grouped:
            init.append("colEnd_ = D_;  // the chunks' columns: the whole row (a share of it when rowGroup_ > 1)")
        if several:
            init.append("chunkRows_ = blockLength_;  // this core's rows, in every split loop")
        enter = ["if (chunkLength_ > 0) {  // rows longer than UB: every pass of ProcessChunked() sets up its own "
                 "buffers", *([] if several else ["    chunkRows_ = blockLength_;"]),
                 "    blockLength_ = 0;  // the whole-row loop gets no rows",
                 *(row_groups.init_lines(group_views, row_groups.workspace_base(kernel)) if grouped else []),
                 *(f"    pipe.InitBuffer({m}, 32);  // the running value's block (Process() clears it)" for m in slots),
                 *(f"    pipe.InitBuffer({m}, static_cast<uint32_t>({n}Pad_ * sizeof(float)));  // (Process() clears it)"
                   for n, m in vecs),
                 "    return;",
                 "}"]
    else:
        init = [f"{ph['member']} = tiling.{ph['field']};" for ph in passes]
        enter = []
    if grouped:
        members += row_groups.members()
    return {"chunk": True, "chunk_passes": passes, "row_group": grouped, "chunk_members": members,
            "chunk_reset": reset, "chunk_process": process, "chunk_init": init,
            "chunk_enter": enter,
            "chunk_count": len(plan.passes), "chunk_fn": f"ProcessChunked{k if k else ''}"}


def several_chunk_views(kernel: ir.Kernel, ctx, loops: list[ir.TileLoop], tensor_map, view: dict) -> None:
    """Several split loops: each row loop with a chunk plan gets its own chunked path, selected at run
    time by its own first chunk length (its rows do not fit its own UB plan); the others keep whole rows."""
    reasons = [(k, t.chunked) for k, t in enumerate(loops) if isinstance(t.chunked, str)]
    if reasons:
        k, why = reasons[0]
        who = "this kernel" if k == 0 else f"split loop {k}"
        view["tiling_error"] = f"one row does not fit the Unified Buffer, and {who} cannot run in column chunks: {why}"
    parts = []
    grouped = row_groups.groupable(kernel, [t.chunked for t in loops])
    group_views = share_views(kernel, view["tensors"], "groupRow", "1") if grouped else None
    for k, t in enumerate(loops):
        if isinstance(t.chunked, ChunkPlan):
            row_buffers = {b["name"]: b for b in view["phases"][k]["buffers"]}
            part = chunk_view(kernel, ctx, t.chunked, tensor_map, row_buffers, k, several=True, group_views=group_views)
            parts.append((k, part))
            view["phases"][k]["chunk"] = part
    if not parts:
        return
    for ph in view["phases"]:  # every loop walks the core's rows (loop 0 empties blockLength_ when it chunks)
        ph["rows"] = "chunkRows_"
    first = parts[0][1] if parts[0][0] == 0 else None
    if grouped:  # every loop chunks: rows may split over core groups (lowering/row_groups.py)
        view.update(row_group=True, workspace=True, workspace_per_core=row_groups.workspace_per_core(kernel),
                    row_group_fields=[part["chunk_passes"][0]["field"] for k, part in parts if k > 0])
    view.update({"chunk": True, "chunk_first": first is not None, "multi_chunk": True,
                 "chunk_passes": first["chunk_passes"] if first else [],
                 "chunk_count": first["chunk_count"] if first else 0,
                 "chunk_all_passes": [p for _, part in parts for p in part["chunk_passes"]],
                 "chunk_processes": [{"fn": part["chunk_fn"], "lines": part["chunk_process"]} for _, part in parts],
                 "chunk_members": list(dict.fromkeys(m for _, part in parts for m in part["chunk_members"])),
                 "chunk_reset": list(dict.fromkeys(x for _, part in parts for x in part["chunk_reset"]))})
    # The chunk lengths of every loop and the core's rows first; then loop 0's early return, if it chunks.
    later = [x for k, part in parts if k > 0 for x in part["chunk_init"]]
    head = first["chunk_init"] if first else ["chunkRows_ = blockLength_;  // this core's rows, in every split loop"]
    view["init"] += head + later + (first["chunk_enter"] if first else [])
