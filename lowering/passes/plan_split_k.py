"""Plan split-K for a MIX kernel: may several cube cores add into one output block, and how.

Goals: a GEMM whose output has fewer base blocks than there are cube cores (e.g. [64 x 8192] @
[8192 x 64]: one block, 23 idle AICs) splits K into S slices, one per AIC; each slice's fp32 partial
sum goes to a GM workspace, SyncAll, then the vector cores add the slices in the fixed order 0..S-1
(deterministic: no atomics, the result does not depend on which core finished first), add the bias
once, run the whole epilogue on the full sum and cast once (as PyTorch rounds once). This pass only
decides that split-K is allowed and the shortest K slice worth a core (`CubePlan.split_k_min`); the
host tiling code (mix_tiling.h.jinja) picks S from the runtime M, N, K and core count:
S = min(cube cores / output blocks, K / split_k_min), split only when S >= 2 and the leftover Unified
Buffer holds at least one row of a partial block. Rendering: emit/mix.py, mix_kernel.cpp.jinja.
Every epilogue form sees the full sum (the reduction runs before it), so no form is excluded here.
Non-goals: base block sizes (plan_cube.py); splitting along K when the output already has enough blocks.
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir

from ..context import PassContext

#: Shortest K slice worth a cube core: below it the fixed cost of one Matmul computation (filling the
#: L1 / L0 pipeline: two stepK loads) and the partial sum's GM round trip (baseM x baseN x 4 B written
#: and read again per slice) outweigh the MACs saved (8 baseK steps of 64).
MIN_SLICE_K = 512


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    loop = ir.cube_loop(kernel)
    if loop is None or loop.plan is None or not ctx.allow_split_k:
        return kernel
    plan = replace(loop.plan, split_k_min=MIN_SLICE_K)
    return replace(kernel, body=tuple(replace(s, plan=plan) if s is loop else s for s in kernel.body))
