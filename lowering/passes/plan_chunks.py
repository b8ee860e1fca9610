"""Plan the chunked variant of every row loop (lowering/chunking.py): what runs when one row does
not fit the Unified Buffer. Runs on the three-address body; the whole-row lowering is unchanged."""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir

from ..chunking import plan
from ..context import PassContext


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    body = []
    for s in kernel.body:
        if isinstance(s, ir.SplitLoop):
            loops = [replace(tl, shape=replace(tl.shape, chunked=plan(kernel, s, tl, ctx)))
                     if isinstance(tl, ir.TileLoop) and tl.kind is ir.LoopKind.ROWS else tl
                     for tl in s.body]
            s = replace(s, body=tuple(loops))
        body.append(s)
    return replace(kernel, body=tuple(body))
