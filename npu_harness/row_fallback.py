"""Which form of a kernel with a row fallback runs at a launch's shapes (ascend_dsl/row_fallback.py).

The rule of the emitted manifest (lowering/emit/fallback.py), as the host follows it at launch (M, N, K are
run-time): the fused kernel when its tiling function launches blocks at the shapes (tiling_probe: the emitted
`<kernel>_tiling.h` compiled and run) and the static estimate below says it is not slower than the launches;
else the fallback's launches. The emulator harness validates and costs whichever form this picks, so a figure
is always the form a launch would run.

The estimate (session 32, docs/cost_model.md "Session 32: GEMM + row reduction of any N"): each form's time is
its launches x `launch_overhead_us` + max(cube MACs at the peak of the AICs it launches, operand traffic) + its
f32 traffic at `hbm_gbps`. Operand traffic: A and B once at `hbm_gbps`, every re-read (the same operand loaded
again by another base block) at `l2_to_l1_core_gbps` per launched AIC (the cost model's L2 rule: operands of
a GEMM re-read from L2). The fused kernel's base blocks span whole rows (baseM from its own tiling, a few rows
at N ~512), so B is read ceil(M / baseM) times per batch entry and A once; the launches' cube blocks (baseM x
baseN from the first launch's tiling: 256 x 128) read A ceil(N / baseN) times and B ceil(M / baseM) times, and
their f32 M x N result goes through the workspace (4 B written, 4 B read by the row pass, besides the output
both forms write). The figures are the cost model's (npu_harness/cost/targets/<target>.toml), not new ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

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
    est = estimates(lowered, project, ctx, symbols, scalars)
    return fused if est is not None and est[0] <= est[1] else fb


def estimates(lowered: ir.Kernel, project: EmittedProject, ctx: PassContext, symbols: dict[str, int],
              scalars: dict[str, float]) -> tuple[float, float] | None:
    """(fused, launches) estimated µs at `symbols` (the module docstring's rule); None when the fused kernel's
    tiling finds no block there; launches inf when the fallback cannot run."""
    from .cost import load_params, target_for
    from .tiling_probe import launch_blocks, run_tiling, with_workspace_symbols

    target, aiv = ctx.target.name, ctx.target.aiv
    f = run_tiling(project, target, symbols, scalars, aiv, ("cubeTiling.baseM",))
    if f["blocks"] <= 0:
        return None
    fb = project.fallback
    fsyms = with_workspace_symbols(fb, symbols, scalars)
    if launch_blocks(fb, target, symbols, scalars, aiv) <= 0:
        return 0.0, float("inf")
    cube = next(s for s in lowered.body if isinstance(s, ir.CubeLoop))
    mm = next(s for s in cube.body if isinstance(s, ir.Matmul))
    dim = lambda d: symbols[d] if isinstance(d, str) else int(d)  # noqa: E731
    batch, m, n, k = prod(dim(d) for d in cube.batch), dim(cube.m), dim(cube.n), dim(cube.k)
    a_bytes = batch * m * k * lowered.param(mm.a).dtype.size
    b_bytes = batch * k * n * lowered.param(mm.b).dtype.size
    outs = [lowered.param(t["name"]) for t in project.manifest["tensors"] if t["role"] == "output"]
    out_bytes = sum(prod(dim(d) for d in t.shape) * t.dtype.size for t in outs)
    p = load_params(target_for(target))
    cdiv = lambda v, a: -(-v // max(a, 1))  # noqa: E731

    def form_us(launches: int, aics: int, a_reads: int, b_reads: int, f32_bytes: int) -> float:
        cube_us = batch * m * n * k / (p.cube_macs_per_cycle * p.clock_ghz * 1e3 * aics)
        rereads = a_bytes * (a_reads - 1) + b_bytes * (b_reads - 1)
        operand_us = (a_bytes + b_bytes) / (p.hbm_gbps * 1e3) + rereads / (aics * p.l2_to_l1_core_gbps * 1e3)
        return launches * p.launch_overhead_us + max(cube_us, operand_us) + f32_bytes / (p.hbm_gbps * 1e3)

    fused_us = form_us(1, f["blocks"], 1, cdiv(m, f["cubeTiling.baseM"]), out_bytes)
    l0 = run_tiling(fb.launches[0], target, fsyms, scalars, aiv, ("cubeTiling.baseM", "cubeTiling.baseN"))
    launches_us = form_us(len(fb.launches), l0["blocks"], cdiv(n, l0["cubeTiling.baseN"]),
                          cdiv(m, l0["cubeTiling.baseM"]), out_bytes + 8 * batch * m * n)
    return fused_us, launches_us


def form_blocks(kernel: ir.Kernel, project: EmittedProject, ctx: PassContext, symbols: dict[str, int],
                scalars: dict[str, float]) -> tuple[str, int]:
    """The form the host runs at `symbols` and the blocks its tiling launches (0: neither form can run)."""
    from .tiling_probe import launch_blocks

    f = pick(kernel, ctx.lowered, project, ctx, symbols, scalars)
    return f.name, launch_blocks(f.project, ctx.target.name, symbols, scalars, ctx.target.aiv)
