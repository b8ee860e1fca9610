"""The last pass: write the AscendC project of the lowered kernel (lowering/emit/) into `ctx.project`.

Emission runs inside the pass manager like every other pass, so a crash there is reported as an
INTERNAL error naming the pass. The kernel itself is unchanged.
"""

from __future__ import annotations

from ascend_dsl import ir

from ..context import PassContext
from ..emit import emit as emit_project


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    ctx.project = emit_project(kernel, ctx)
    return kernel
