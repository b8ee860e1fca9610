"""GEMM + epilogue kernels with and without epilogue bands, as the cost model sees them (an ESTIMATE).

    python benchmarks/bench_epilogue_bands.py [--target ascend910b1] [--only matmul_gelu,...] [--task-timeout S]

For each fuse kernel with an element-wise epilogue, at its benchmark-scale GEMM shape (bench_gallery_model's
GEMM_SCALE: 4096^3, or 8 x 2048^3 for batched tasks), lowers the kernel twice: before (PassContext.allow_split_k
off: no workspace region, so no bands: the UB caps the cube's base block, the lowering before session 31) and after
(lowering/passes/epilogue_bands.py), validates both in the emulator against PyTorch and prints the base block, the
band rows, the estimate, the headline (% of the ideal for the problem) and the slowest core's pipes. At these
shapes the output has more blocks than cube cores, so split-K is never chosen either way: bands are the only
difference. Prints the rows below 70 % (issue 14 item 5) with the unit that bounds them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

#: Element-wise epilogues (relu family, gelu family, residuals, batched): the rows of docs/cost_model.md "Session 31".
KERNELS = ("matmul_bias_relu", "linear_relu_module", "linear_bias_sigmoid_f16", "matmul_leaky_relu", "linear_elu",
           "linear_hardswish", "linear_min_subtract", "linear_selu", "linear_softplus", "linear_swish_scaling",
           "linear_sigmoid_scale_residual", "matmul_scale_residual", "linear_scale_residual_add", "matmul_gelu",
           "linear_gelu_param", "linear_gelu_tanh_f16", "linear_mish_mish", "linear_dropout_tanh",
           "linear_bias_leaky_relu_gelu", "linear_scale_hardtanh_gelu", "linear_add_swish_tanh_gelu_hardtanh",
           "batched_matmul_scale_relu", "batched_matmul_residual_clamp_min", "mlp_up_proj_gelu")
TARGET_FRACTION = 0.70


def run(ex, shape: dict, bands: bool, target: str, timeout: float):
    """(validation result, cube plan) of one lowering."""
    from ascend_dsl import ir
    from lowering.context import PassContext
    from lowering.pipeline import run_pipeline
    from lowering.targets import get_target
    from npu_harness.validate import load_task_for, validate_sim

    kernel = ex.source.instantiate({})
    task = load_task_for(kernel, ex.task, overrides=shape, timeout=timeout)
    ctx = PassContext(get_target(target), ex.adsl.name, allow_split_k=bands)
    lowered = run_pipeline(kernel, ctx)
    return validate_sim(kernel, lowered, ctx.project, ctx, task), ir.cube_loop(lowered).plan


def main(argv=None) -> int:
    from bench_gallery_model import GEMM_SCALE, task_constants

    from npu_harness.gallery import Example

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="ascend910b1")
    ap.add_argument("--only", default="", help="comma-separated kernel names (default: KERNELS)")
    ap.add_argument("--task-timeout", type=float, default=900.0)
    args = ap.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(KERNELS)
    print(f"cost model ESTIMATES on {args.target} (not measurements); ideal% = the ideal for the problem / device time; "
          "pipes = the slowest core's M / MTE2 / V / MTE3 in us")
    print(f"{'kernel':<36} {'shape':<16} {'':<6} {'block':>9} {'band':>5} {'dev us':>8} {'ideal%':>6} {'bound':>6}  pipes")
    bad, below = 0, []
    for name in names:
        ex = Example("fuse", name, ROOT / f"examples/fuse/{name}.adsl", ROOT / f"examples/fuse/{name}.py")
        shape = next(s for s in GEMM_SCALE if set(s) <= task_constants(ex))
        label = "x".join(str(v) for v in shape.values())
        for bands in (False, True):
            res, plan = run(ex, shape, bands, args.target, args.task_timeout)
            when = "after" if bands else "before"
            if not res.ok:
                print(f"{name:<36} {label:<16} {when:<6} FAILED: {res.detail}")
                bad += 1
                continue
            est = res.report
            slow = max(est.cores, key=lambda c: c.time_us)
            pipes = "/".join(f"{slow.pipes_us.get(k, 0.0):.0f}" for k in ("M", "MTE2", "V", "MTE3"))
            print(f"{name:<36} {label:<16} {when:<6} {f'{plan.base_m}x{plan.base_n}':>9} {plan.band_rows or '-':>5} "
                  f"{est.kernel_us:>8.1f} {100 * est.ideal_fraction:>5.0f}% {est.bottleneck + ('*' if est.hbm_bound else ''):>6}  {pipes}")
            if bands and est.ideal_fraction < TARGET_FRACTION:
                below.append(f"  {name} {label}: {100 * est.ideal_fraction:.0f}%, bound by {est.bottleneck}"
                             f"{' at HBM bandwidth' if est.hbm_bound else ''}")
    print(f"after: {len(names) - len(below) - bad}/{len(names)} rows >= {100 * TARGET_FRACTION:.0f}% of the ideal"
          + (":" if below else ""))
    print("\n".join(below) if below else "", end="\n" if below else "")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
