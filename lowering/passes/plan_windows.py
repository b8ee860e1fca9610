"""Plan a plane loop's pooling windows (lowering/emit/window.py lays out the code).

Goals: `PlaneTiles.plan` (ir.WindowPlan): the window operands (one window per loop: select_kind.py),
the spatial dims of the input and output planes, and the rows path: with DataCopyPad (910B) and one
input, the input and output rows (of the last spatial dim) land 32-byte aligned in UB, the taps along
the outer spatial dims are vector Max / Add over whole rows (2-3 dims: a chunk of output rows per
instruction) and the last dim's taps one Gather each (strided by the stride) per output row (1-D) or
chunk (2-3 dims): every tap on the vector unit; otherwise (310P) every tap is a scalar read.
Non-goals: planes or bands per tile (the host tiling picks them from the runtime shapes).
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.ops import POOLS

from ..context import PassContext


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    if kernel.kind is not ir.KernelKind.WINDOW:
        return kernel
    split = kernel.phases[0]
    tl = split.body[0]
    lead, params = len(split.extent), {p.name: p for p in kernel.tensors}
    pool = next(e for s in tl.body if isinstance(s, ir.Assign) for e in ir.walk_expr(s.value)
                if isinstance(e, ir.Op) and e.op in POOLS)
    loads = [s.value.tensor for s in tl.body if isinstance(s, ir.Assign) and isinstance(s.value, ir.Load)]
    stores = [s.tensor for s in tl.body if isinstance(s, ir.Store)]
    rows_path = ctx.target.has_datacopypad and len(loads) == 1
    plan = ir.WindowPlan(pool.args[1:], params[loads[0]].shape[lead:], params[stores[0]].shape[lead:], rows_path)
    loop = replace(tl, shape=replace(tl.shape, plan=plan))
    return replace(kernel, body=tuple(replace(s, body=(loop,)) if s is split else s for s in kernel.body))
