"""Group a tile body into the canonical CopyIn / Compute / CopyOut stages.

Loads read inputs only and stores write outputs only (a tensor is never both), so hoisting every
CopyIn to the front and every CopyOut to the back preserves meaning.
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir

from ..context import PassContext
from ..rewrite import map_tile_bodies


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    def body(tl: ir.TileLoop) -> ir.TileLoop:
        groups: dict[ir.StageKind, list[ir.Stmt]] = {k: [] for k in ir.StageKind}
        for s in tl.body:
            kind = (ir.StageKind.COPYIN if isinstance(s, ir.CopyIn) else
                    ir.StageKind.COPYOUT if isinstance(s, ir.CopyOut) else ir.StageKind.COMPUTE)
            groups[kind].append(s)
        stages = tuple(ir.Stage(k, tuple(v), v[0].span if v else tl.span) for k, v in groups.items())
        return replace(tl, body=stages)

    return map_tile_bodies(kernel, body)
