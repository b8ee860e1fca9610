"""Causal attention as the cost model sees it (ESTIMATES, not measurements): flash attention against the cube
roofline, beside the unfused chained version.

    python benchmarks/bench_attention.py [--target ascend910b1] [--shape B,H,S,D] [--short S,S,...] [--full B,H,S,D]
                                         [--time-limit SEC]

Validates in the emulator (results checked against the tasks' torch references) the fused form,
examples/attention/causal_sdpa (kind FLASH: key blocks above the diagonal skipped), and the unfused one,
examples/attention/causal_attention with `PassContext.allow_flash = False` (the two chained stages, P through
GM, whole key rows and the mask's rows in UB; its mask is a [1, 1, S, S] tensor, as GPT-2 writes it), and prints
the cost model's estimate, its bottleneck and ideal% = the ideal for the problem / the estimate. The
ideal is the cube roofline of the useful work: 2 x B·H·S·S·D multiply-adds for Q K^T and P V, halved for
the causal mask (the ideal counts only the MACs a causal kernel needs), at the cube's peak, or the least
GM traffic if that is larger. A last row runs examples/attention/sliding_window (window 64) at the main
shape against the MACs of its band, and a last one attention without a mask (examples/attention/sdpa, Bt = B·H, M = N = S)
at `--full` (default 1,8,4096,128: at issue 15's shape torch's reference holds the 128 x 4096 x 4096 fp32 scores, 8.6
GB, past the harness's memory limit) against all S·S MACs. The unfused version cannot launch past about 450 keys (its softmax rows
live in UB), so both are also run at the `--short` key lengths: the compiler always takes the fused form
(docs/language.md), and these rows are the evidence that it is the faster one wherever both launch.

Issue 15 asks for B=4, H=32, S=4096, D=128 (f16); emulating it steps ~275 G multiply-adds and every
vector instruction (well over the emulator's default 300 s on one core, ~0.5 GB of tensors; `--time-limit`
raises it): the default. `--shape 1,8,4096,128` is a quicker look (1/16 of the heads: ~115 -> ~7 tasks per
core, so load balance weighs more).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def run(shape: dict[str, int], flash: bool, target: str, example: str | None = None, ring: bool = True):
    """Lower and validate one attention example at `shape` (B, H, S, D; sdpa: Bt = B·H, M = N = S, Dk = Dv = D);
    `ring=False`: flash attention in its Matmul-API form (PassContext.allow_flash_ring)."""
    from ascend_dsl import load_file
    from lowering.context import PassContext
    from lowering.pipeline import run_pipeline
    from lowering.targets import get_target
    from npu_harness.validate import load_task_for, validate_sim

    # the unfused chain masks with a tensor (causal_attention, GPT-2 style): positions in a matmul epilogue are
    # taken by the fused form only
    path = ROOT / f"examples/attention/{example or ('causal_sdpa' if flash else 'causal_attention')}.adsl"
    kernel = load_file(path)[0].instantiate()
    if example == "sdpa":
        shape = {"Bt": shape["B"] * shape["H"], "M": shape["S"], "N": shape["S"], "Dk": shape["D"], "Dv": shape["D"]}
    task = load_task_for(kernel, path.with_suffix(".py"), overrides=shape)
    ctx = PassContext(get_target(target), path.name)
    ctx.allow_flash = flash
    ctx.allow_flash_ring = ring
    lowered = run_pipeline(kernel, ctx)
    return lowered.kind.value, validate_sim(kernel, lowered, ctx.project, ctx, task)


def ideal_cube_us(shape: dict[str, int], target: str, window: int | None = None, causal: bool = True) -> float:
    """Useful MACs of causal attention (Q K^T and P V on the kept half of the scores; with a sliding window, on
    the min(i + 1, window) keys of each query i; without a mask, on all S x S) at the cube's peak."""
    from npu_harness.cost.model import load_params

    p = load_params(target)
    b, h, s, d = shape["B"], shape["H"], shape["S"], shape["D"]
    kept = s * s if not causal else s * (s + 1) / 2 if window is None else sum(min(i + 1, window) for i in range(s))
    macs = 2 * b * h * d * kept
    return macs / (p.cube_macs_per_cycle * p.aic * p.clock_ghz * 1e3)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="ascend910b1")
    ap.add_argument("--shape", default="4,32,4096,128", help="B,H,S,D (default: issue 15's)")
    ap.add_argument("--short", default="64,200,448", help="key lengths at which the unfused version still launches")
    ap.add_argument("--full", default="1,8,4096,128", help="B,H,S,D of the row without a mask (examples/attention/sdpa)")
    ap.add_argument("--time-limit", type=int, default=3600, help="seconds an emulator run may take")
    args = ap.parse_args(argv)
    import os

    import npu_harness.validate as validate

    os.environ["ASCEND_SIM_TIME_LIMIT"] = str(args.time_limit)  # the emulator's watchdog
    validate.SIM_RUN_TIMEOUT_S = float(args.time_limit + 60)     # and the harness's kill
    b, h, s, d = (int(x) for x in args.shape.split(","))
    print(f"causal attention (examples/attention/causal_sdpa fused, causal_attention unfused; f16) on {args.target}: cost-model ESTIMATES, not "
          "measurements; ideal% = cube roofline of the useful MACs (causal half) / estimate; GM MB = HBM traffic (the workspace's "
          "P slots are L2 traffic when they fit it, docs/cost_model.md)")
    print(f"{'form':<8} {'kind':<6} {'B,H,S,D':<16} {'ok':<4} {'est us':>10} {'ideal us':>9} {'ideal%':>7} "
          f"{'bottleneck':<10} {'GM MB':>8}")
    bad = 0
    for seq in dict.fromkeys((s, *(int(x) for x in args.short.split(",")))):
        shape = {"B": b, "H": h, "S": seq, "D": d}
        for flash in (True, False):
            form = "flash" if flash else "unfused"
            label = f"{b},{h},{seq},{d}"
            try:
                kind, res = run(shape, flash, args.target)
            except Exception as e:  # noqa: BLE001 - a row that cannot run is reported, not fatal
                print(f"{form:<8} {'-':<6} {label:<16} ERROR {type(e).__name__}: {str(e).splitlines()[0][:90]}")
                bad += 1
                continue
            est = res.report
            if est is None:
                why = res.detail.splitlines()[0][:100] if res.detail else "no estimate"
                print(f"{form:<8} {kind:<6} {label:<16} {'no':<4} cannot run: {why}")
                continue
            ideal = ideal_cube_us(shape, args.target)
            gm = (est.gm_read_bytes + est.gm_write_bytes) / 1e6
            print(f"{form:<8} {kind:<6} {label:<16} {'yes' if res.ok else 'NO':<4} {est.kernel_us:10.1f} {ideal:9.1f} "
                  f"{100 * ideal / est.kernel_us:6.1f}% {est.bottleneck:<10} {gm:8.1f}", flush=True)
            bad += not res.ok
    # the sliding window (examples/attention/sliding_window, window 64 from its task): key blocks outside skipped
    shape = {"B": b, "H": h, "S": s, "D": d}
    label = f"{b},{h},{s},{d}"
    kind, res = run(shape, True, args.target, "sliding_window")
    est = res.report
    if est is None:
        print(f"{'window':<8} {kind:<6} {label:<16} no   cannot run: {(res.detail or '').splitlines()[0][:100]}")
        return 1
    ideal = ideal_cube_us(shape, args.target, window=64)
    print(f"{'window64':<8} {kind:<6} {label:<16} {'yes' if res.ok else 'NO':<4} {est.kernel_us:10.1f} {ideal:9.1f} "
          f"{100 * ideal / est.kernel_us:6.1f}% {est.bottleneck:<10} {(est.gm_read_bytes + est.gm_write_bytes) / 1e6:8.1f}")
    bad += not res.ok
    # no mask (examples/attention/sdpa): every key block of every query block
    fb, fh, fs, fd = (int(x) for x in args.full.split(","))
    shape = {"B": fb, "H": fh, "S": fs, "D": fd}
    kind, res = run(shape, True, args.target, "sdpa")
    est = res.report
    label = f"{fb},{fh},{fs},{fd}"
    if est is None:
        print(f"{'full':<8} {kind:<6} {label:<16} no   cannot run: {(res.detail or '').splitlines()[0][:100]}")
        return 1
    ideal = ideal_cube_us(shape, args.target, causal=False)
    print(f"{'full':<8} {kind:<6} {label:<16} {'yes' if res.ok else 'NO':<4} {est.kernel_us:10.1f} {ideal:9.1f} "
          f"{100 * ideal / est.kernel_us:6.1f}% {est.bottleneck:<10} {(est.gm_read_bytes + est.gm_write_bytes) / 1e6:8.1f}")
    bad += not res.ok
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
