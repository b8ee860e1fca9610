"""Rows split over a group of cores (docs/design.md, "Rows longer than UB"): fewer rows than cores.

In chunked mode (lowering/passes/plan_chunks.py, lowering/emit/chunk.py) a core takes whole rows, so with fewer
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

Long rows, at least as many as cores (session 32; one split loop only): a core walking a row alone re-reads
its chunks after the rest of the row has gone through, beyond the L2's reach when the row is long (96 x 393216
f32: 1.5 MB per row, about 6 MB of traffic between a chunk's two reads, docs/cost_model.md "L2 (vector
re-reads)"); not scans (`walks_long_rows`). The host tiling then takes the smallest g >= 2 whose column share is at most
`LONG_ROW_SHARE_BYTES` and whose cores / g groups take the rows in equal numbers (every core passes the same
SyncAlls), and a group walks its `blockLength` rows one after the other: the same passes and combines per row.
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.ir import row_ref

from ..passes import chunk_moments
from ..passes.plan_row_groups import SLOT_FLOATS
from . import acc_workspace, slots
from .compensated import compensation, neumaier
from .shared import snippet

#: Workspace bytes per core: two alternating 32-byte partial slots.
WORKSPACE_PER_CORE = 64

#: A core's share of a long row, at most (bytes), when rows are at least as many as cores: a two-pass norm's
#: second read of a chunk then comes within about 4 shares of traffic (x, the row vectors and y), 4 MB, the L2's
#: reach per core on 910B (192 MB over 48 cores; docs/cost_model.md "L2 (vector re-reads)").
LONG_ROW_SHARE_BYTES = 1 << 20


def walks_long_rows(loops: list[ir.TileLoop]) -> bool:
    """Whether groups may also walk long rows when rows >= cores: not for scans, whose cores of a group re-read
    their columns for the carries before them (passes/scan_offsets.py), which a core walking the row alone does
    not (cumsum 96 x 393216 f32: 96 % of the ideal alone, 82 % on groups)."""
    return not any(p.group_only or p.scan_offsets for t in loops if isinstance(t.shape.chunked, ir.ChunkPlan)
                   for p in t.shape.chunked.passes)


def row_elem_bytes(kernel: ir.Kernel) -> int:
    """The largest element size of the tensors split with the first loop's rows (the row's bytes per column)."""
    extent = tuple(kernel.phases[0].extent)
    sizes = [t.dtype.size for t in kernel.tensors if len(t.shape) > len(extent) and tuple(t.shape[:len(extent)]) == extent]
    return max(sizes, default=4)


def workspace_base(kernel: ir.Kernel) -> str:
    """Where the group's two slot regions start in the workspace (f32 elements): after the accumulators'
    own slots and the slot accumulators' partials and totals (emit/slots.py), if any."""
    base = acc_workspace.floats(kernel)
    for d in kernel.slot_accumulators:
        base = f"{d.name}Tot_ + GetBlockNum() * {d.name}Pad_"
    return base


def workspace_per_core(kernel: ir.Kernel) -> str:
    """Workspace bytes per core (a C++ expression when slot accumulators size it at run time)."""
    if kernel.slot_accumulators:
        return f"({slots.workspace_per_core(kernel)} + {WORKSPACE_PER_CORE})"
    return str(acc_workspace.bytes_per_core(kernel) + WORKSPACE_PER_CORE)


def init_lines(views: list[str], base: str) -> list[str]:
    """Chunked-mode Init lines (inside `if (chunkLength_ > 0)`): the core's group, rank and columns, and
    `views`, the GM views of its group's row `groupRow` (emit/vector.py share_views)."""
    return snippet("group_init", "    ", base=base, floats=WORKSPACE_PER_CORE // 4, views=views)


def group_combine(pid: str, reductions: tuple[ir.Fold, ...]) -> list[str]:
    """`GroupCombine<pid>()`: after pass pid, this core's partials of the row's reductions go to its
    workspace slot; SyncAll; every core of the group folds the group's slots in core order (an online
    max/sum pair as s = sum of s_c * exp(m_c - m), m the group's max)."""
    slot = {f.name: j for j, f in enumerate(reductions)}
    sums = {f.online_sum for f in reductions if f.online_sum}
    values = [row_ref(f.name).name for f in reductions]
    folds = []
    for j, f in enumerate(reductions):
        if f.name in sums or f.moments:
            continue
        fold = {"value": row_ref(f.name).name, "slot": j, "combine": f.combine.value, "prefix": f.prefix,
                "identity": "1.0f" if f.combine is ir.Combine.MUL else "0.0f", "lo": None}
        if f.prefix and f.combine is ir.Combine.ADD:  # a compensated sum: its rounding error in a slot of its own
            lo = compensation(f.name)
            fold.update(lo=lo, add=[*neumaier(f"{fold['value']}_", lo, f"part.GetValue(c * {SLOT_FLOATS} + {j})"),
                                    f"{lo} += part.GetValue(c * {SLOT_FLOATS} + {len(values)});"])
            values.append(lo.removesuffix("_"))
        folds.append(fold)
    online = [{"sum": row_ref(f.online_sum).name, "max": row_ref(f.name).name, "sum_slot": slot[f.online_sum],
               "max_slot": slot[f.name]} for f in reductions if f.online_sum]
    moments = []
    for pair in dict.fromkeys(f.moments for f in reductions if f.moments):  # (count, mean, M2): Chan's merge
        names = moment_names(pair, {})
        values[slot[pair[0]]] = names["mean"].removesuffix("_")
        moments.append({**names, "mean_slot": slot[pair[0]], "m2_slot": slot[pair[1]], "count_slot": len(values)})
        values.append(names["count"].removesuffix("_"))
    return snippet("group_combine", n=SLOT_FLOATS, values=values, folds=folds, online=online, moments=moments)


def moment_names(pair: tuple[str, str], slots: dict[str, str]) -> dict[str, str]:
    """The C++ names of a mean / second-moment pair (chunk_moments.py); `slots`: the UB tensors of its two
    reductions (the chunk's sum, its squared deviations from the shift)."""
    mean, m2 = pair
    member = {k: f"{ir.row_ref(f(mean)).name}_" for k, f in (("mean", chunk_moments.mean_of), ("count", chunk_moments.count_of),
                                                              ("shift", chunk_moments.shift_of), ("pend", chunk_moments.pending_of))}
    return {**member, "m2": f"{ir.row_ref(m2).name}_", "sum_slot": slots.get(mean, ""), "sq_slot": slots.get(m2, "")}
