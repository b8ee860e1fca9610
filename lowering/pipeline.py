"""The pass pipeline, written as data, and the pass manager that runs it.

The manager verifies the IR after every pass, records timings, keeps dumps for `--dump-after`
and turns an unexpected crash inside a pass into an INTERNAL error naming the pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from ascend_dsl import ir, printer
from ascend_dsl.diagnostics import DslError
from ascend_dsl.diagnostics import ErrorCode as E

from .context import PassContext
from .passes import (
    allocate_buffers,
    check_constraints,
    emit,
    hoist_row_vectors,
    hoist_scalars,
    legalize,
    partition_launches,
    plan_box,
    plan_chunks,
    plan_conv,
    plan_cube,
    plan_flash,
    plan_flat_folds,
    plan_gather_middle,
    plan_gather_rows,
    plan_period_cache,
    plan_row_groups,
    plan_row_value_blocks,
    plan_scatter_shared,
    plan_split_k,
    plan_stages,
    plan_tiling,
    plan_windows,
    route_conv5hd,
    schedule_stages,
    select_instructions,
    select_kind,
    three_address,
)
from .verify import verify


@dataclass(frozen=True)
class Pass:
    name: str
    run: Callable[[ir.Kernel, PassContext], ir.Kernel]


PIPELINE: tuple[Pass, ...] = (
    Pass("partition_launches", partition_launches.run),  # loops of different kinds -> LAUNCHES (else identity)
    Pass("route_conv5hd", route_conv5hd.run),  # a lone forward conv2d it fits -> NC1HWC0 conversion + conv launches
    Pass("plan_stages", plan_stages.run),  # several stages: graph, order, SyncAll -> CHAIN kernel (else identity)
    Pass("plan_flash", plan_flash.run),  # the two SDPA stages of a CHAIN -> one FLASH kernel (online softmax)
    Pass("check_constraints", check_constraints.run),  # target dtypes, core counts, tile alignment
    Pass("legalize", legalize.run),  # tanh/sigmoid/erf/neg -> vector-unit primitives
    Pass("three_address", three_address.run),  # one op per assignment, CSE, DCE
    Pass("hoist_scalars", hoist_scalars.run),  # scalar math out of tile loops; host (launch) or device scalars
    Pass("select_kind", select_kind.run),  # how the kernel is emitted (KernelKind), and the structure it needs
    Pass("plan_chunks", plan_chunks.run),  # row loops: the chunked passes for rows longer than UB (lowered below)
    Pass("allocate_buffers", allocate_buffers.run),  # VECIN/VECOUT queues, VECCALC temporaries (reused)
    Pass("hoist_row_vectors", hoist_row_vectors.run),  # w[:] read by every row: one TBuf filled once per core
    Pass("plan_tiling", plan_tiling.run),  # largest tile that fits UB; UB capacity check; chunk lengths
    Pass("plan_row_groups", plan_row_groups.run),  # chunked rows: may a group of cores share a row?
    Pass("plan_cube", plan_cube.run),  # MIX kernels: base block sizes, L1/L0/UB capacity, fractal alignment
    Pass("plan_split_k", plan_split_k.run),  # MIX kernels: may K be split over cube cores (the host picks the slices)
    Pass("plan_conv", plan_conv.run),  # CONV kernels: cube tile limits of the implicit GEMM, L1/L0 capacity
    Pass("plan_windows", plan_windows.run),  # plane loops: the window, plane dims, vector taps along rows or not
    Pass("select_instructions", select_instructions.run),  # Add vs Adds, Compare/Select modes, Cast rounding
    Pass("plan_gather_middle", plan_gather_middle.run),  # torch.gather along a middle dim alone: x slabs in UB, Gather
    Pass("plan_scatter_shared", plan_scatter_shared.run),  # index_copy / index_add by one shared index row: its inverse
    Pass("plan_gather_rows", plan_gather_rows.run),  # gathers of a named x along its last dim: x rows in UB, Gather
    Pass("plan_row_value_blocks", plan_row_value_blocks.run),  # per-row values x rows: a Brcb scratch per row tile
    Pass("plan_period_cache", plan_period_cache.run),  # per-channel w[r]: the [C] tensor in UB once per core
    Pass("plan_box", plan_box.run),  # box loops: UB row pitch, scratch trees, whole-row core shares
    Pass("schedule_stages", schedule_stages.run),  # CopyIn / Compute / CopyOut
    Pass("plan_flat_folds", plan_flat_folds.run),  # flat-tile reductions of dead tiles fold their halves in place
    Pass("emit", emit.run),  # the AscendC project (lowering/emit/: the kernel kind's view and templates)
)

PASS_NAMES = tuple(p.name for p in PIPELINE)


def run_pipeline(kernel: ir.Kernel, ctx: PassContext, dump_after: frozenset[str] = frozenset()) -> ir.Kernel:
    unknown = dump_after - set(PASS_NAMES) - {"all"}
    if unknown:
        raise DslError.at(E.ARGS, f"unknown pass in --dump-after: {', '.join(sorted(unknown))}", None,
                          f"passes: {', '.join(PASS_NAMES)}, or all")
    kernel = _run_passes(kernel, ctx, dump_after, PIPELINE[:2])
    if kernel.kind is ir.KernelKind.CONVERT5HD:  # compiler-written (route_conv5hd): emitted from its template only
        return _run_passes(kernel, ctx, dump_after, PIPELINE[-1:])
    if kernel.kind is ir.KernelKind.LAUNCHES:  # several launches: each lowered by this pipeline, emitted together
        kernel = replace(kernel, body=tuple(_lower_launch(la, ctx, dump_after) for la in kernel.body))
        return _run_passes(kernel, ctx, dump_after, PIPELINE[-1:])
    kernel = _run_passes(kernel, ctx, dump_after, PIPELINE[2:4])
    if kernel.kind is ir.KernelKind.FLASH:  # fused attention: planned by plan_flash, checked and rendered by emit
        return _run_passes(kernel, ctx, dump_after, PIPELINE[-1:])
    if kernel.kind is ir.KernelKind.CHAIN:  # several stages: each lowered by this pipeline, emitted as one kernel
        kernel = replace(kernel, body=tuple(_lower_stage(st, ctx, dump_after) for st in kernel.body))
        return _run_passes(kernel, ctx, dump_after, PIPELINE[-1:])
    return _run_passes(kernel, ctx, dump_after, PIPELINE[4:])


def _lower_launch(la: ir.Launch, ctx: PassContext, dump_after: frozenset[str]) -> ir.Launch:
    """One launch of a LAUNCHES kernel through the whole pipeline (its own project: `ctx.launches`)."""
    sub_ctx = PassContext(ctx.target, ctx.source_name, ctx.assistant, allow_split_k=ctx.allow_split_k,
                          allow_flash=ctx.allow_flash, allow_flash_ring=ctx.allow_flash_ring, in_launch=True)
    lowered = run_pipeline(la.kernel, sub_ctx, dump_after)
    sub_ctx.lowered = lowered
    ctx.launches.append(sub_ctx)
    for name, t in sub_ctx.timings.items():
        ctx.timings[name] = ctx.timings.get(name, 0.0) + t
    for name, text in sub_ctx.dumps.items():
        ctx.dumps[name] = ctx.dumps.get(name, "") + f"# launch {la.index}\n" + text
    return replace(la, kernel=lowered)


def _lower_stage(st: ir.ChainStage, ctx: PassContext, dump_after: frozenset[str]) -> ir.ChainStage:
    """One stage of a CHAIN kernel through every pass but emit; its timings and dumps add to the kernel's."""
    # No split-K inside a chain: its partial sums would need a workspace region of their own beside the
    # stages' workspace tensors (emit/chain.py places those after the Matmul API's system workspace).
    sub_ctx = PassContext(ctx.target, ctx.source_name, ctx.assistant, allow_split_k=False)
    lowered = _run_passes(st.kernel, sub_ctx, dump_after, PIPELINE[4:-1])
    for name, t in sub_ctx.timings.items():
        ctx.timings[name] = ctx.timings.get(name, 0.0) + t
    for name, text in sub_ctx.dumps.items():
        ctx.dumps[name] = ctx.dumps.get(name, "") + f"# stage {st.index}\n" + text
    return replace(st, kernel=lowered)


def _run_passes(kernel: ir.Kernel, ctx: PassContext, dump_after: frozenset[str], passes: tuple[Pass, ...]) -> ir.Kernel:
    for p in passes:
        start = time.perf_counter()
        try:
            kernel = p.run(kernel, ctx)
        except DslError:
            raise
        except Exception as e:  # a compiler bug, not a user error
            raise DslError.at(E.INTERNAL, f"internal error in pass '{p.name}': {type(e).__name__}: {e}",
                              kernel.span, "this is a compiler bug; please report it with the DSL file") from e
        ctx.timings[p.name] = time.perf_counter() - start
        if kernel.kind not in (ir.KernelKind.CHAIN, ir.KernelKind.FLASH, ir.KernelKind.LAUNCHES):  # a chain's stages were verified as they were lowered
            verify(kernel, p.name)
        if "all" in dump_after or p.name in dump_after:
            ctx.dumps[p.name] = printer.kernel(kernel)
    return kernel
