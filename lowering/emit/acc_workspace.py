"""Where the cross-core combines of scalar accumulators put their slots in the GM workspace.

After a split loop that updates accumulators, each core writes its running values to its 32-byte slot
(8 f32), SyncAll, and every core reads every core's slot (emit/vector.py, the `acc_combine` snippet).
Two such combines must not share slots: a core that has read the first combine's slots may run the next
split loop and write its next slot while a slower core has not yet read the first combine's values from
it (a real cross-core race: the slower core would add a partial of the wrong loop). So consecutive
combines alternate between two regions of `blocks * 8` floats: combine k uses region k % 2. Combine
k + 2 writes region k % 2 only after every core has passed combine k + 1's SyncAll, by which time every
core has read combine k's slots.

The workspace starts with these regions (one when the kernel has one combine); slot accumulators
(emit/slots.py) and row groups (emit/row_groups.py) follow them.
"""

from __future__ import annotations

from ascend_dsl import ir

#: f32 values of one core's slot (32 bytes).
SLOT_FLOATS = 8


def _combines_after(stmt: ir.Stmt) -> bool:
    return isinstance(stmt, ir.SplitLoop) and any(isinstance(u, ir.Accumulate) for u in ir.walk((stmt,)))


def combines(kernel: ir.Kernel) -> int:
    """How many split loops end in a cross-core combine of scalar accumulators."""
    return sum(map(_combines_after, kernel.body))


def index(kernel: ir.Kernel, k: int) -> int:
    """Which combine (0, 1, ...) ends split loop k: how many of the split loops before it end in one."""
    return sum(map(_combines_after, [s for s in kernel.body if isinstance(s, ir.SplitLoop)][:k]))


def regions(kernel: ir.Kernel) -> int:
    """Slot regions of blocks * 8 floats the combines need (0, 1 or 2)."""
    return min(combines(kernel), 2)


def floats(kernel: ir.Kernel) -> str:
    """C++: the f32 elements the combines' regions take at the workspace's start ("0" without accumulators)."""
    n = regions(kernel)
    return f"GetBlockNum() * {n * SLOT_FLOATS}" if n else "0"


def bytes_per_core(kernel: ir.Kernel) -> int:
    return regions(kernel) * SLOT_FLOATS * 4


def region(k: int) -> str:
    """C++: the first f32 element of combine k's region."""
    return f"GetBlockNum() * {SLOT_FLOATS}" if k % 2 else "0"
