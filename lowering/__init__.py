"""ascend-dsl compiler layer: targets, constraint checks, the pass pipeline and AscendC emission."""

from __future__ import annotations

import time
from pathlib import Path

from ascend_dsl import ir

from . import assist
from .context import PassContext
from .emit import EmittedProject, fallback
from .pipeline import PASS_NAMES, PIPELINE, run_pipeline
from .targets import DEFAULT_TARGET, Target, all_targets, get_target


def lower(kernel: ir.Kernel, target: str | Target = DEFAULT_TARGET, source_name: str | None = None,
          dump_after: frozenset[str] = frozenset(), assistant=None, *,
          allow_conv5hd: bool = True, allow_flash_ring: bool = True) -> tuple[EmittedProject, PassContext]:
    """Run the pipeline and emit the project. Raises DslError for user errors. With an `assistant`
    (lowering.assist.Assistant) the assisted decisions are taken first (every proposal checked) and recorded
    in the manifest; without one the output is the rule-based lowering. `allow_conv5hd=False` keeps a forward
    conv2d off the NC1HWC0 route (passes/route_conv5hd.py; benchmarks' "before", the old paths' tests);
    `allow_flash_ring=False` keeps flash attention in its Matmul-API form (passes/plan_flash_ring.py)."""
    t = get_target(target) if isinstance(target, str) else target
    name = source_name or (Path(kernel.span.file).name if kernel.span.line else f"{kernel.name}.adsl")
    ctx = PassContext(t, name, assistant, allow_conv5hd=allow_conv5hd, allow_flash_ring=allow_flash_ring)
    if assistant is not None:
        start = time.perf_counter()
        kernel = assist.run(kernel, ctx)
        ctx.timings["assist"] = time.perf_counter() - start
    assist.require(kernel, ctx)  # an extern op needs a checked compute stage
    ctx.lowered = run_pipeline(kernel, ctx, dump_after)
    ctx.project = assist.finish(ctx.project, ctx)
    if kernel.fallback is not None or kernel.fallback_miss:  # rows that may not fit: the launches form beside it
        fb = None
        if kernel.fallback is not None:
            fb, ctx.fallback = lower(kernel.fallback, t, name, dump_after, assistant, allow_conv5hd=allow_conv5hd,
                                     allow_flash_ring=allow_flash_ring)
        ctx.project = fallback.attach(ctx.project, fb, kernel.fallback_miss)
    return ctx.project, ctx


__all__ = ["DEFAULT_TARGET", "EmittedProject", "PASS_NAMES", "PIPELINE", "PassContext", "Target", "all_targets",
           "get_target", "lower", "run_pipeline"]
