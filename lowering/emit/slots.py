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
(emit/acc_workspace.py)], then
per slot accumulator [partials: blocks * sPad_][totals: blocks * sPad_]. The host sizes it from the
tiling data (`workspace_per_core`). The slot count is a runtime shape: the launch checks that the
grouping divides and that the per-core vectors fit UB (error[SHAPE] / error[UB-CAPACITY]).
"""

from __future__ import annotations

from ascend_dsl import ir

from . import acc_workspace
from .shared import LaunchCheck, loc, snippet, sync

#: UB the combine needs at least: two vectors (the running totals and one core's partial).
COMBINE_VECTORS = 2
#: UB bytes left to the scalar epilogue's buffers beside the combine's (48 cores x 32 B slots + stores).
COMBINE_RESERVE = 4096


def _prod(names: tuple[str, ...], prefix: str) -> str:
    return " * ".join(f"{prefix}{n}" for n in names) if names else "1"


def _accs(kernel: ir.Kernel, ctx) -> list[dict]:
    """The slot accumulators as the snippets read them."""
    return [{"name": d.name, "slots": " * ".join(d.slots), "loc": loc(ctx, d.span), "slot_count": _prod(d.slots, ""),
             "per": _prod(d.rows_per_slot, ""), "groups": _prod(d.groups, "") if d.groups else ""}
            for d in kernel.slot_accumulators]


def members(kernel: ir.Kernel, ctx) -> list[str]:
    return snippet("slot_members", accs=_accs(kernel, ctx))


def init_lines(kernel: ir.Kernel, ctx) -> list[str]:
    """Init: slot counts from the tiling data, workspace regions, the workspace's GM bound."""
    return snippet("slot_init", accs=_accs(kernel, ctx), base=acc_workspace.floats(kernel))


def totals_lines(totals: list[tuple[str, str]]) -> list[str]:
    """Before a loop that reads `s[r]`: this core's copy of s's totals into UB (member), once."""
    lines = [f"DataCopy({m}.Get<float>(), workspaceGm_[{n}Tot_ + GetBlockIdx() * {n}Pad_], "
             f"static_cast<uint32_t>({n}Pad_));  // {n}'s totals, read per row by CopyIn" for n, m in totals]
    return lines + sync("MTE2_S") if totals else []


def acc_init_lines(vectors: list[tuple[str, str]]) -> list[str]:
    """Each slot accumulator's partial vector (member) starts at zero."""
    return [f"Duplicate({m}.Get<float>(), 0.0f, static_cast<int32_t>({n}Pad_));"
            f"  // {n}: this core's running values, one per slot" for n, m in vectors]


def before_reset_lines(vectors: list[tuple[str, str]]) -> list[str]:
    """Every core's partial vectors (members) to its workspace regions (UB is reset right after), unless a
    chunked loop folded its rows into them there already (`slotPartsInGm_`, snippet chunk_process)."""
    lines = sync("S_MTE3", "the scalar unit's last adds before the copy out")
    lines += ["if (!slotPartsInGm_) {  // whole rows: the partial vectors are in UB"]
    lines += [f"    DataCopy(workspaceGm_[{n}Part_ + GetBlockIdx() * {n}Pad_], {m}.Get<float>(), "
              f"static_cast<uint32_t>({n}Pad_));" for n, m in vectors]
    lines += ["}", "slotPartsInGm_ = false;"]
    return lines + sync("MTE3_MTE2")


def staging_lines(names: list[str], budget: int) -> list[str]:
    """After pipe.Reset(): the combine's UB, one f32 vector of totals plus as many cores' partial
    vectors as fit (all of them when they do), at most the UB left beside the scalar epilogue."""
    return snippet("slot_staging", names=names, cap=(budget - COMBINE_RESERVE) // 4 // 8 * 8)


def combine_lines(names: list[str], ctx, span, syncall: bool) -> list[str]:
    """After SyncAll: every core adds all partial vectors (core order) and keeps the totals in GM."""
    return snippet("slot_combine", names=names, loc=loc(ctx, span), syncall=syncall)


# ----------------------------------------------------------------------------- host


def host_lines(kernel: ir.Kernel, ctx, budget: int) -> list[str]:
    """Tiling function: each slot accumulator's slot count and rows per slot (after the checks)."""
    return snippet("slot_host", accs=_accs(kernel, ctx), vectors=COMBINE_VECTORS, cap=budget - COMBINE_RESERVE)


def tiling_fields(kernel: ir.Kernel) -> list[str]:
    return [f for d in kernel.slot_accumulators for f in
            (f"uint64_t {d.name}Slots;  // slots of {d.name}", f"uint64_t {d.name}RowsPerSlot;  // rows per slot")]


def workspace_per_core(kernel: ir.Kernel) -> str:
    """Workspace bytes per launched block (a C++ expression over `tiling`)."""
    parts = [str(acc_workspace.bytes_per_core(kernel))] if acc_workspace.regions(kernel) else []
    parts += [f"8 * ((tiling.{d.name}Slots + 7) / 8 * 8)" for d in kernel.slot_accumulators]
    return "(" + " + ".join(parts) + ")" if len(parts) > 1 else parts[0]


def launch_checks(kernel: ir.Kernel, ctx, budget: int) -> list[LaunchCheck]:
    """Conditions checked before the tiling, each with the error it prints when false."""
    checks = []
    for d in kernel.slot_accumulators:
        where = f"{d.name} = zeros({' * '.join(d.slots)}) at {loc(ctx, d.span)}"
        if d.groups:
            per, groups = " * ".join(d.rows_per_slot), " * ".join(d.groups)
            checks.append(LaunchCheck(f"{_prod(d.groups, '')} > 0 && ({_prod(d.rows_per_slot, '')}) % "
                                      f"({_prod(d.groups, '')}) == 0",
                                      f"error[SHAPE]: {groups} must be positive and divide {per}: {where} gives every "
                                      f"slot {per} / {groups} consecutive rows"))
    for d in kernel.slot_accumulators:
        slots = " * ".join(d.slots)
        checks.append(LaunchCheck(f"{COMBINE_VECTORS} * (({_prod(d.slots, '')} + 7) / 8 * 32) <= "
                                  f"{budget - COMBINE_RESERVE}",
                                  f"error[UB-CAPACITY]: {d.name} = zeros({slots}) at {loc(ctx, d.span)} keeps one f32 "
                                  f"per slot in UB, twice while combining across cores: 8 B x {slots} slots exceed the "
                                  f"{budget - COMBINE_RESERVE} B of UB left for it; use fewer slots (e.g. normalise the "
                                  f"channels in several launches)"))
    return checks
