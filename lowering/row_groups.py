"""Rows split over a group of cores (docs/design.md, "Rows longer than UB"): fewer rows than cores.

In chunked mode (lowering/chunking.py, lowering/emit_chunk.py) a core takes whole rows, so with fewer
rows than cores most cores would idle. When the host tiling finds rows < cores it sets `rowGroup`
(g = cores / rows, fewer if some core would get no columns) and `colShare`: core c works on row
c / g, columns [(c % g) * colShare, + colShare) clipped to the row (shares are whole 256-element
repeats, so 32-byte aligned in GM for every dtype). Every pass folds its share's reductions as before;
after a pass with reductions every core writes its partials to its 32-byte workspace slot, SyncAll
(every launched core has one row and runs the same passes, so the same number of SyncAlls), and each
core of the group reads the group's slots and combines them in core order: sum/mean add, max/min,
prod multiplies, and an online max/sum pair (m_i, s_i) gives m = max m_i, s = sum s_i * exp(m_i - m).
So every core of a group holds the same per-row values before the next pass. Two slot regions
alternate between passes: a fast core's next partials never overwrite slots a slow core of its group
has not read yet (it read them before the SyncAll that the fast core has passed). Per-row stores are
written by the group's first core. g = 1 (the tiling's default) runs exactly the chunked path as
before.

Accumulators across cores (losses) and slot accumulators (`s[r] += v`) fold each row's value once, on
the group's first core; the other cores keep the identity (a zero partial vector), and the usual
combines after the split loop (their own workspace, before the two regions) add them. Several split
loops split rows only when every loop runs in chunks (the host tiling checks each loop's first chunk
length); otherwise g = 1. A pass folding more than 8 reductions (one 32-byte slot) keeps g = 1.
"""

from __future__ import annotations

from ascend_dsl import ir

from . import acc_workspace
from .chunking import ONLINE_MAX, ChunkPlan, row_ref

#: Floats of one core's partial slot (32 bytes); a pass with more reductions keeps whole rows per core.
SLOT_FLOATS = 8
#: Workspace bytes per core: two alternating 32-byte partial slots.
WORKSPACE_PER_CORE = 64


def groupable(kernel: ir.Kernel, plans: list[object]) -> bool:
    """Whether the chunked rows of the kernel's row loops may be split over a group of cores: every
    split loop has a chunked form (a group has one row; a loop with whole rows would need it whole)."""
    return all(isinstance(p, ChunkPlan) and all(len(q.reductions) <= SLOT_FLOATS for q in p.passes) for p in plans)


def workspace_base(kernel: ir.Kernel) -> str:
    """Where the group's two slot regions start in the workspace (f32 elements): after the accumulators'
    own slots and the slot accumulators' partials and totals (lowering/emit_slots.py), if any."""
    base = acc_workspace.floats(kernel)
    for d in kernel.slot_accumulators:
        base = f"{d.name}Tot_ + GetBlockNum() * {d.name}Pad_"
    return base


def workspace_per_core(kernel: ir.Kernel) -> str:
    """Workspace bytes per core (a C++ expression when slot accumulators size it at run time)."""
    if kernel.slot_accumulators:
        from .emit_slots import workspace_per_core as slot_bytes

        return f"({slot_bytes(kernel)} + {WORKSPACE_PER_CORE})"
    return str(acc_workspace.bytes_per_core(kernel) + WORKSPACE_PER_CORE)


def members() -> list[str]:
    return ["TBuf<TPosition::VECCALC> chunkGroup_;  // the group's partial slots while combining",
            "uint32_t rowGroup_ = 1;  // cores sharing each row (chunked mode, fewer rows than cores)",
            "uint32_t groupRank_ = 0;  // this core's place in its row's group",
            "uint32_t groupTurn_ = 0;  // which of the two workspace slot regions the next combine uses",
            "uint64_t groupBase_ = 0;  // where the two slot regions start in the workspace",
            "uint64_t colStart_ = 0;  // chunked mode: this core's columns of the row",
            "uint64_t colEnd_ = 0;"]


def init_lines(views: list[str], base: str) -> list[str]:
    """Chunked-mode Init lines (inside `if (chunkLength_ > 0)`): the core's group, rank and columns, and
    `views`, the GM views of its group's row `groupRow` (emit.share_views)."""
    return [f"    groupBase_ = {base};  // the group's slot regions: after the accumulators' workspace",
            f"    workspaceGm_.SetGlobalBuffer((__gm__ float*)workspace, groupBase_ + GetBlockNum() * "
            f"{WORKSPACE_PER_CORE // 4});",
            "    rowGroup_ = tiling.rowGroup;",
            "    if (rowGroup_ > 1) {  // fewer rows than cores: rowGroup_ cores share each row's columns",
            "        const uint64_t groupRow = GetBlockIdx() / rowGroup_;",
            "        groupRank_ = static_cast<uint32_t>(GetBlockIdx() % rowGroup_);",
            "        colStart_ = groupRank_ * tiling.colShare;",
            "        colStart_ = colStart_ < D_ ? colStart_ : D_;",
            "        colEnd_ = D_ - colStart_ < tiling.colShare ? D_ : colStart_ + tiling.colShare;",
            "        chunkRows_ = groupRow < total ? 1 : 0;",
            *("        " + v for v in views),
            "    }"]


def group_combine(pid: str, reductions: tuple[tuple[str, str], ...]) -> list[str]:
    """`GroupCombine<pid>()`: after pass pid, this core's partials of the row's reductions go to its
    workspace slot; SyncAll; every core of the group folds the group's slots in core order."""
    online_sums = {c.split(":", 1)[1]: n for n, c in reductions if c.startswith(ONLINE_MAX)}
    lines = ["ChunkReset();",
             "pipe.InitBuffer(chunkGroup_, rowGroup_ * 32);",
             "LocalTensor<float> part = chunkGroup_.Get<float>();",
             f"const uint64_t region = groupBase_ + groupTurn_ * GetBlockNum() * {SLOT_FLOATS};  // alternate regions",
             "groupTurn_ ^= 1u;"]
    lines += [f"part.SetValue({j}, {row_ref(reductions[j][0]).name + '_' if j < len(reductions) else '0.0f'});"
              for j in range(SLOT_FLOATS)]
    lines += ["SetFlag<HardEvent::S_MTE3>(EVENT_ID0);", "WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);",
              f"DataCopy(workspaceGm_[region + GetBlockIdx() * {SLOT_FLOATS}], part, {SLOT_FLOATS});",
              "SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);", "WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);",
              "SyncAll();  // every partial of the group has landed",
              f"DataCopy(part, workspaceGm_[region + (GetBlockIdx() - groupRank_) * {SLOT_FLOATS}], "
              f"rowGroup_ * {SLOT_FLOATS});",
              "SetFlag<HardEvent::MTE2_S>(EVENT_ID0);", "WaitFlag<HardEvent::MTE2_S>(EVENT_ID0);"]
    slot = {n: j for j, (n, _) in enumerate(reductions)}
    for j, (n, c) in enumerate(reductions):
        v, at = f"{row_ref(n).name}_", f"part.GetValue(c * {SLOT_FLOATS} + {j})"
        if n in online_sums:
            continue  # with its max, below
        fold = {"add": f"{v} += {at};", "mul": f"{v} *= {at};", "max": f"{v} = {at} > {v} ? {at} : {v};",
                "min": f"{v} = {at} < {v} ? {at} : {v};"}
        op = "max" if c.startswith(ONLINE_MAX) else c
        lines += [f"{v} = part.GetValue({j});",
                  "for (uint32_t c = 1; c < rowGroup_; ++c) {", f"    {fold[op]}", "}"]
    for s, m in online_sums.items():  # s = sum of s_c * exp(m_c - m), m the group's max (already folded)
        ms, ss = slot[m], slot[s]
        sv, mv = f"{row_ref(s).name}_", f"{row_ref(m).name}_"
        lines += [f"{sv} = 0.0f;  // the running sums, rescaled to the group's max",
                  "{",
                  "    LocalTensor<float> math = chunkMath_.Get<float>();",
                  f"    for (uint32_t c0 = 0; c0 < rowGroup_; c0 += {SLOT_FLOATS}) {{",
                  f"        const uint32_t n = rowGroup_ - c0 < {SLOT_FLOATS} ? rowGroup_ - c0 : {SLOT_FLOATS};",
                  "        for (uint32_t i = 0; i < n; ++i) {",
                  f"            math.SetValue(i, part.GetValue((c0 + i) * {SLOT_FLOATS} + {ms}) - {mv});",
                  "        }",
                  "        SetFlag<HardEvent::S_V>(EVENT_ID0);", "        WaitFlag<HardEvent::S_V>(EVENT_ID0);",
                  "        Exp(math, math, static_cast<int32_t>(n));",
                  "        SetFlag<HardEvent::V_S>(EVENT_ID0);", "        WaitFlag<HardEvent::V_S>(EVENT_ID0);",
                  "        for (uint32_t i = 0; i < n; ++i) {",
                  f"            {sv} += part.GetValue((c0 + i) * {SLOT_FLOATS} + {ss}) * math.GetValue(i);",
                  "        }",
                  "    }",
                  "}"]
    return lines
