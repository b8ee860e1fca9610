"""The pass pipeline, written as data, and the pass manager that runs it.

The manager verifies the IR after every pass, records timings, keeps dumps for `--dump-after`
and turns an unexpected crash inside a pass into an INTERNAL error naming the pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ascend_dsl import ir, printer
from ascend_dsl.diagnostics import DslError

from .context import PassContext
from .passes import (
    allocate_buffers,
    check_constraints,
    hoist_scalars,
    legalize,
    plan_chunks,
    plan_cube,
    plan_tiling,
    schedule_stages,
    select_instructions,
    three_address,
)
from .verify import verify


@dataclass(frozen=True)
class Pass:
    name: str
    run: Callable[[ir.Kernel, PassContext], ir.Kernel]


PIPELINE: tuple[Pass, ...] = (
    Pass("check_constraints", check_constraints.run),  # target dtypes, core counts, tile alignment
    Pass("legalize", legalize.run),  # tanh/sigmoid/erf/neg -> vector-unit primitives
    Pass("three_address", three_address.run),  # one op per assignment, CSE, DCE
    Pass("hoist_scalars", hoist_scalars.run),  # scalar math out of tile loops; host (launch) or device scalars
    Pass("plan_chunks", plan_chunks.run),  # row loops: the chunked passes for rows longer than UB
    Pass("allocate_buffers", allocate_buffers.run),  # VECIN/VECOUT queues, VECCALC temporaries (reused)
    Pass("plan_tiling", plan_tiling.run),  # largest tile that fits UB; UB capacity check
    Pass("plan_cube", plan_cube.run),  # MIX kernels: base block sizes, L1/L0/UB capacity, fractal alignment
    Pass("select_instructions", select_instructions.run),  # Add vs Adds, Compare/Select modes, Cast rounding
    Pass("schedule_stages", schedule_stages.run),  # CopyIn / Compute / CopyOut
)

PASS_NAMES = tuple(p.name for p in PIPELINE)


def run_pipeline(kernel: ir.Kernel, ctx: PassContext, dump_after: frozenset[str] = frozenset()) -> ir.Kernel:
    unknown = dump_after - set(PASS_NAMES) - {"all"}
    if unknown:
        raise DslError.at("ARGS", f"unknown pass in --dump-after: {', '.join(sorted(unknown))}", None,
                          f"passes: {', '.join(PASS_NAMES)}, or all")
    for p in PIPELINE:
        start = time.perf_counter()
        try:
            kernel = p.run(kernel, ctx)
        except DslError:
            raise
        except Exception as e:  # a compiler bug, not a user error
            raise DslError.at("INTERNAL", f"internal error in pass '{p.name}': {type(e).__name__}: {e}",
                              kernel.span, "this is a compiler bug; please report it with the DSL file") from e
        ctx.timings[p.name] = time.perf_counter() - start
        verify(kernel, p.name)
        if "all" in dump_after or p.name in dump_after:
            ctx.dumps[p.name] = printer.kernel(kernel)
    return kernel
