"""Causal linear attention as the cost model sees it (ESTIMATES, not measurements), against the problem's ideal.

    python benchmarks/bench_causal_linear_attention.py [--target ascend910b1] [--shape Bt,S,D,chunk] [--time-limit SEC]

Validates examples/attention/causal_linear_attention in the emulator (checked against its task's torch reference,
the recurrent form) and prints the cost model's estimate per launch and in all. The ideal is the larger of the
least GM traffic (q, k, v read once in f16, o written once in f32) at the HBM bandwidth and the recurrent form's
useful multiply-adds, 2 x Bt·S·D² (phi(k_j)^T v_j into the state, phi(q_i) S_i out of it), at the cube's peak;
ideal% = ideal / the estimate's device time (launch overheads are printed apart). The default, Bt = 8 (1 x 8
heads), S = 4096, D = 128, chunks of 64, is issue 15's sequence length and head size on 1/16 of its heads
(`--validate tiling` checks the host tiling at B·H = 128, tests/test_benchmark_shapes.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def ideal_us(shape: dict[str, int], target: str) -> tuple[float, float]:
    """(memory term, cube term) of the problem's ideal, in us."""
    from npu_harness.cost.model import load_params

    p = load_params(target)
    bt, s, d = shape["Bt"], shape["S"], shape["D"]
    memory = bt * s * d * (3 * 2 + 4) / (p.hbm_gbps * 1e3)
    cube = 2 * bt * s * d * d / (p.cube_macs_per_cycle * p.aic * p.clock_ghz * 1e3)
    return memory, cube


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="ascend910b1")
    ap.add_argument("--shape", default="8,4096,128,64", help="Bt,S,D,chunk")
    ap.add_argument("--time-limit", type=int, default=3600, help="seconds an emulator run may take")
    args = ap.parse_args(argv)
    import os

    import npu_harness.validate as validate
    from ascend_dsl import load_file
    from lowering.context import PassContext
    from lowering.pipeline import run_pipeline
    from lowering.targets import get_target
    from npu_harness.validate import load_task_for, validate_sim

    os.environ["ASCEND_SIM_TIME_LIMIT"] = str(args.time_limit)
    validate.SIM_RUN_TIMEOUT_S = float(args.time_limit + 60)
    bt, s, d, chunk = (int(x) for x in args.shape.split(","))
    shape = {"Bt": bt, "S": s, "D": d, "chunk": chunk}
    path = ROOT / "examples/attention/causal_linear_attention.adsl"
    kernel = load_file(path)[0].instantiate()
    task = load_task_for(kernel, path.with_suffix(".py"), overrides=shape)
    ctx = PassContext(get_target(args.target), path.name)
    lowered = run_pipeline(kernel, ctx)
    res = validate_sim(kernel, lowered, ctx.project, ctx, task)
    est = res.report
    print(f"causal linear attention (examples/attention/causal_linear_attention, f16) on {args.target}, Bt,S,D,chunk = "
          f"{args.shape}: cost-model ESTIMATES, not measurements")
    if est is None:
        print(f"cannot run: {(res.detail or 'no estimate').splitlines()[0][:200]}")
        return 1
    memory, cube = ideal_us(shape, args.target)
    ideal = max(memory, cube)
    print(f"validated: {'yes' if res.ok else 'NO'}")
    print(f"launches (us, device + overhead each): {est.note.split('launches in order: ')[-1]}")
    print(f"estimate: {est.kernel_us:.1f} us device + {est.launch_overhead_us:.1f} us launch overhead; bottleneck "
          f"{est.bottleneck}; GM {(est.gm_read_bytes + est.gm_write_bytes) / 1e6:.1f} MB, L2 {est.l2_bytes / 1e6:.1f} MB")
    print(f"ideal: {ideal:.1f} us ({'memory' if memory >= cube else 'cube'}-bound: least traffic {memory:.1f} us, "
          f"useful MACs {cube:.1f} us); ideal% = {100 * ideal / est.kernel_us:.1f} % of the device time, "
          f"{100 * ideal / est.time_us:.1f} % with the launch overheads")
    return 0 if res.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
