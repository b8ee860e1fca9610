"""Which form of a kernel with a row fallback runs at a launch's shapes (ascend_dsl/row_fallback.py).

The rule of the emitted manifest (lowering/emit/fallback.py), as the host follows it: the fused kernel when its
tiling function launches blocks at the shapes (tiling_probe: the emitted `<kernel>_tiling.h` compiled and run),
else the fallback's launches. The emulator harness validates and costs whichever form this picks, so a figure
is always the form a launch would run.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir
from lowering import EmittedProject, PassContext

FORMS = ("fused", "fallback")


@dataclass(frozen=True)
class Form:
    """The kernel, lowered kernel, project and pass context of the form picked, and its name."""

    name: str
    kernel: ir.Kernel
    lowered: ir.Kernel
    project: EmittedProject
    ctx: PassContext


def pick(kernel: ir.Kernel, lowered: ir.Kernel, project: EmittedProject, ctx: PassContext, symbols: dict[str, int],
         scalars: dict[str, float], force: str | None = None) -> Form:
    """The form that runs at `symbols`; `force` ("fused" or "fallback") picks one whatever the shapes (tests
    validate both at the gallery's shapes)."""
    fused = Form("fused", kernel, lowered, project, ctx)
    if project.fallback is None:
        if force == "fallback":
            raise ValueError(f"kernel {kernel.name} has no fallback form ({project.manifest.get('fallback_miss', '')})")
        return fused
    fb = Form("fallback", kernel.fallback, ctx.fallback.lowered, project.fallback, ctx.fallback)
    if force is not None:
        return {"fused": fused, "fallback": fb}[force]
    from .tiling_probe import launch_blocks

    blocks = launch_blocks(project, ctx.target.name, symbols, scalars, ctx.target.aiv)
    return fused if blocks > 0 else fb


def form_blocks(kernel: ir.Kernel, project: EmittedProject, ctx: PassContext, symbols: dict[str, int],
                scalars: dict[str, float]) -> tuple[str, int]:
    """The form the host runs at `symbols` and the blocks its tiling launches (0: neither form can run)."""
    from .tiling_probe import launch_blocks

    f = pick(kernel, ctx.lowered, project, ctx, symbols, scalars)
    return f.name, launch_blocks(f.project, ctx.target.name, symbols, scalars, ctx.target.aiv)
