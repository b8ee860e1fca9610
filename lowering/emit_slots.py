"""Emitted code of slot (vector) accumulators: `s = zeros(C)`, `s[r] += sum(v, axis=1)`, `s[r]`.

Per core, a slot accumulator is an f32 UB buffer of `sPad_` values (the slot count rounded up to
whole 32-byte blocks), zeroed before its split loop. Each tile's per-row values are added into the
rows' slots by the scalar unit (one add per row: a row is a whole plane, so this is cheap beside
the row's vector work). When the loop ends every core copies its partial vector to its own region
of the GM workspace, SyncAll, then every core adds all cores' partial vectors in core order (vector
Add: the same totals on every core, deterministic) and writes the totals to a second region of its
own. A later split loop that reads `s[r]` copies this core's totals into UB once, before its
tiles (an `accTot_s` buffer), and CopyIn gives each row its slot's total (one UB read per row).

Workspace (f32 elements): [scalar slots: blocks * 8 or 16, if the kernel has scalar accumulators
(lowering/acc_workspace.py)], then
per slot accumulator [partials: blocks * sPad_][totals: blocks * sPad_]. The host sizes it from the
tiling data (`workspace_per_core`). The slot count is a runtime shape: the launch checks that the
grouping divides and that the per-core vectors fit UB (error[SHAPE] / error[UB-CAPACITY]).
"""

from __future__ import annotations

from ascend_dsl import ir

from . import acc_workspace

#: UB the combine needs at least: two vectors (the running totals and one core's partial).
COMBINE_VECTORS = 2
#: UB bytes left to the scalar epilogue's buffers beside the combine's (48 cores x 32 B slots + stores).
COMBINE_RESERVE = 4096


def _loc(ctx, span) -> str:
    return f"{ctx.source_name}:{span.line}"


def _prod(names: tuple[str, ...], prefix: str) -> str:
    return " * ".join(f"{prefix}{n}" for n in names) if names else "1"


def members(kernel: ir.Kernel) -> list[str]:
    out = []
    for d in kernel.slot_accumulators:
        n = d.name
        out += [f"uint64_t {n}Slots_ = 0;  // slots of {n} = zeros({' * '.join(d.slots)})",
                f"uint64_t {n}RowsPerSlot_ = 1;  // row r adds into slot (r / {n}RowsPerSlot_) % {n}Slots_",
                f"uint64_t {n}Pad_ = 0;  // {n}Slots_ rounded up to whole 32-byte blocks",
                f"uint64_t {n}Part_ = 0;  // workspace: every core's partial vector of {n}",
                f"uint64_t {n}Tot_ = 0;  // workspace: every core's copy of {n}'s totals"]
    return out + ["uint64_t tileRow_ = 0;  // first row of the tile in flight (set by CopyIn, read by Compute)"]


def init_lines(kernel: ir.Kernel, ctx) -> list[str]:
    """Init: slot counts from the tiling data, workspace regions, the workspace's GM bound."""
    lines = []
    base = acc_workspace.floats(kernel)
    for d in kernel.slot_accumulators:
        n = d.name
        lines += [f"// {_loc(ctx, d.span)}: {n} = zeros({' * '.join(d.slots)})",
                  f"{n}Slots_ = tiling.{n}Slots;", f"{n}RowsPerSlot_ = tiling.{n}RowsPerSlot;",
                  f"{n}Pad_ = ({n}Slots_ + 7) / 8 * 8;", f"{n}Part_ = {base};",
                  f"{n}Tot_ = {n}Part_ + GetBlockNum() * {n}Pad_;"]
        base = f"{n}Tot_ + GetBlockNum() * {n}Pad_"
    lines.append(f"workspaceGm_.SetGlobalBuffer((__gm__ float*)workspace, {base});  "
                 "// scalar slots, then per slot accumulator every core's partials and totals")
    return lines


def slot_expr(name: str, row: str) -> str:
    return f"(({row}) / {name}RowsPerSlot_) % {name}Slots_"


def accumulate_lines(s: ir.Accumulate, col: str, col_ctype: str) -> list[str]:
    """Add each row's value of `col` (one per row of the tile) into its slot of this core's vector."""
    n = s.name
    return ["SetFlag<HardEvent::V_S>(EVENT_ID0);  // the scalar unit reads the per-row values",
            "WaitFlag<HardEvent::V_S>(EVENT_ID0);",
            "for (uint32_t i = 0; i < count; ++i) {",
            f"    const uint32_t k = static_cast<uint32_t>({slot_expr(n, 'rowStart_ + tileRow_ + i')});",
            f"    accVec_{n}.SetValue(k, accVec_{n}.GetValue(k) + static_cast<float>({col}.GetValue(i)));"
            + ("" if col_ctype == "float" else "  // f32 slots"),
            "}",
            "SetFlag<HardEvent::S_V>(EVENT_ID0);  // before the vector unit reuses the buffers",
            "WaitFlag<HardEvent::S_V>(EVENT_ID0);"]


def acc_of(buffer: str) -> str:
    """The slot accumulator of an `accVec_<name>` / `accTot_<name>` buffer."""
    return buffer.split("_", 1)[1]


def totals_lines(names: list[str], suffix: str) -> list[str]:
    """Before a loop that reads `s[r]`: this core's copy of s's totals into UB, once."""
    lines = [f"DataCopy(accTot_{n}Buf{suffix}.Get<float>(), workspaceGm_[{n}Tot_ + GetBlockIdx() * {n}Pad_], "
             f"static_cast<uint32_t>({n}Pad_));  // {n}'s totals, read per row by CopyIn" for n in names]
    return lines + ["SetFlag<HardEvent::MTE2_S>(EVENT_ID0);", "WaitFlag<HardEvent::MTE2_S>(EVENT_ID0);"] if names \
        else []


def copy_in_lines(s: ir.CopyIn, queue: str, totals: str) -> list[str]:
    """`s[r]`: each row's slot total, from this core's copy of the totals in UB."""
    n = s.tensor
    return [f"LocalTensor<float> {s.buffer} = {queue}.AllocTensor<float>();",
            f"LocalTensor<float> accTot_{n} = {totals}.Get<float>();",
            "for (uint32_t i = 0; i < count; ++i) {",
            f"    {s.buffer}.SetValue(i, accTot_{n}.GetValue({slot_expr(n, 'rowStart_ + offset + i')}));",
            "}",
            "SetFlag<HardEvent::S_V>(EVENT_ID0);  // scalar writes before the vector unit reads them",
            "WaitFlag<HardEvent::S_V>(EVENT_ID0);", f"{queue}.EnQue({s.buffer});"]


def acc_init_lines(names: list[str], suffix: str) -> list[str]:
    return [f"Duplicate(accVec_{n}Buf{suffix}.Get<float>(), 0.0f, static_cast<int32_t>({n}Pad_));"
            f"  // {n}: this core's running values, one per slot" for n in names]


def before_reset_lines(names: list[str], suffix: str) -> list[str]:
    """Every core's partial vectors to its workspace regions (UB is reset right after)."""
    lines = ["SetFlag<HardEvent::S_MTE3>(EVENT_ID0);  // the scalar unit's last adds before the copy out",
             "WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);"]
    for n in names:
        lines.append(f"DataCopy(workspaceGm_[{n}Part_ + GetBlockIdx() * {n}Pad_], accVec_{n}Buf{suffix}.Get<float>(), "
                     f"static_cast<uint32_t>({n}Pad_));")
    lines += ["SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);", "WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);"]
    return lines


def staging_lines(names: list[str], budget: int) -> list[str]:
    """After pipe.Reset(): the combine's UB, one f32 vector of totals plus as many cores' partial
    vectors as fit (all of them when they do), at most the UB left beside the scalar epilogue."""
    lines = ["uint64_t slotFloats = 0;  // the totals and every core's partial vector, if they fit"]
    for n in names:
        lines.append(f"slotFloats = (GetBlockNum() + 1) * {n}Pad_ > slotFloats ? (GetBlockNum() + 1) * {n}Pad_ "
                     ": slotFloats;")
    cap = (budget - COMBINE_RESERVE) // 4 // 8 * 8
    lines += [f"slotFloats = slotFloats < {cap} ? slotFloats : {cap};  // UB beside the scalar epilogue",
              "pipe.InitBuffer(slotBuf_, static_cast<uint32_t>(slotFloats * sizeof(float)));"]
    return lines


def combine_lines(names: list[str], ctx, span, syncall: bool) -> list[str]:
    """After SyncAll: every core adds all partial vectors (core order) and keeps the totals in GM.
    The partials are copied in as few DataCopy as fit UB (one per chunk of cores, not one per core)."""
    lines = [f"// {_loc(ctx, span)}: combine {', '.join(names)} across cores: every core adds all cores' partial "
             "vectors in core order and writes the totals to its own workspace region"]
    if syncall:
        lines.append("SyncAll();")
    lines.append("LocalTensor<float> slotUb = slotBuf_.Get<float>();")
    for n in names:
        lines += [f"{{  // {n}",
                  f"    const uint64_t chunk = slotFloats / {n}Pad_ - 1 < static_cast<uint64_t>(GetBlockNum()) ? "
                  f"slotFloats / {n}Pad_ - 1 : GetBlockNum();  // cores per copy",
                  "    LocalTensor<float> tot = slotUb;",
                  f"    LocalTensor<float> part = slotUb[{n}Pad_];",
                  f"    Duplicate(tot, 0.0f, static_cast<int32_t>({n}Pad_));",
                  "    for (uint64_t c0 = 0; c0 < static_cast<uint64_t>(GetBlockNum()); c0 += chunk) {",
                  "        const uint64_t cores = GetBlockNum() - c0 < chunk ? GetBlockNum() - c0 : chunk;",
                  "        SetFlag<HardEvent::V_MTE2>(EVENT_ID0);  // the previous Adds have read part",
                  "        WaitFlag<HardEvent::V_MTE2>(EVENT_ID0);",
                  f"        DataCopy(part, workspaceGm_[{n}Part_ + c0 * {n}Pad_], static_cast<uint32_t>(cores * {n}Pad_));",
                  "        SetFlag<HardEvent::MTE2_V>(EVENT_ID0);", "        WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);",
                  "        for (uint64_t j = 0; j < cores; ++j) {",
                  f"            Add(tot, tot, part[j * {n}Pad_], static_cast<int32_t>({n}Pad_));", "        }", "    }",
                  "    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);", "    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);",
                  f"    DataCopy(workspaceGm_[{n}Tot_ + GetBlockIdx() * {n}Pad_], tot, static_cast<uint32_t>({n}Pad_));",
                  "    SetFlag<HardEvent::MTE3_V>(EVENT_ID0);  // before slotUb is reused",
                  "    WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);", "}"]
    lines += ["SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);  // later loops copy the totals in",
              "WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);"]
    return lines


# ----------------------------------------------------------------------------- host


def host_lines(kernel: ir.Kernel, ctx, budget: int) -> list[str]:
    """Tiling function: each slot accumulator's slot count and rows per slot (after the checks)."""
    lines = []
    for d in kernel.slot_accumulators:
        n = d.name
        per = _prod(d.rows_per_slot, "")
        groups = _prod(d.groups, "")
        lines += [f"const uint64_t {n}Slots = {_prod(d.slots, '')};  // {n} = zeros({' * '.join(d.slots)}) "
                  f"({_loc(ctx, d.span)})"]
        if d.groups:
            lines += [f"if ({groups} <= 0 || ({per}) % ({groups}) != 0) {{",
                      "    return 0;  // the groups do not divide the rows (see the launch check)", "}",
                      f"const uint64_t {n}RowsPerSlot = ({per}) / ({groups});"]
        else:
            lines.append(f"const uint64_t {n}RowsPerSlot = {per};")
        lines += [f"t->{n}Slots = {n}Slots;", f"t->{n}RowsPerSlot = {n}RowsPerSlot;"]
    for d in kernel.slot_accumulators:
        lines += [f"if ({COMBINE_VECTORS} * (({d.name}Slots + 7) / 8 * 32) > {budget - COMBINE_RESERVE}) {{",
                  "    return 0;  // the combine's vectors do not fit UB (see the launch check)", "}"]
    return lines


def host_ub(name: str) -> str:
    """UB bytes of a slot accumulator's vector in the host's tile-size search."""
    return f"({name}Slots + 7) / 8 * 32"


def tiling_fields(kernel: ir.Kernel) -> list[str]:
    return [f for d in kernel.slot_accumulators for f in
            (f"uint64_t {d.name}Slots;  // slots of {d.name}", f"uint64_t {d.name}RowsPerSlot;  // rows per slot")]


def workspace_per_core(kernel: ir.Kernel) -> str:
    """Workspace bytes per launched block (a C++ expression over `tiling`)."""
    parts = [str(acc_workspace.bytes_per_core(kernel))] if acc_workspace.regions(kernel) else []
    parts += [f"8 * ((tiling.{d.name}Slots + 7) / 8 * 8)" for d in kernel.slot_accumulators]
    return "(" + " + ".join(parts) + ")" if len(parts) > 1 else parts[0]


def launch_checks(kernel: ir.Kernel, ctx, budget: int) -> list[dict]:
    """Conditions checked before the tiling, each with the error it prints when false."""
    checks = []
    for d in kernel.slot_accumulators:
        where = f"{d.name} = zeros({' * '.join(d.slots)}) at {_loc(ctx, d.span)}"
        if d.groups:
            per, groups = " * ".join(d.rows_per_slot), " * ".join(d.groups)
            checks.append({"cond": f"{_prod(d.groups, '')} > 0 && ({_prod(d.rows_per_slot, '')}) % "
                                   f"({_prod(d.groups, '')}) == 0",
                           "msg": f"error[SHAPE]: {groups} must be positive and divide {per}: {where} gives every "
                                  f"slot {per} / {groups} consecutive rows"})
    for d in kernel.slot_accumulators:
        slots = " * ".join(d.slots)
        checks.append({"cond": f"{COMBINE_VECTORS} * (({_prod(d.slots, '')} + 7) / 8 * 32) <= "
                               f"{budget - COMBINE_RESERVE}",
                       "msg": f"error[UB-CAPACITY]: {d.name} = zeros({slots}) at {_loc(ctx, d.span)} keeps one f32 "
                              f"per slot in UB, twice while combining across cores: 8 B x {slots} slots exceed the "
                              f"{budget - COMBINE_RESERVE} B of UB left for it; use fewer slots (e.g. normalise the "
                              f"channels in several launches)"})
    return checks
