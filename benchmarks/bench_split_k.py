"""Split-K as the cost model sees it: before (K never split) and after (plan_split_k), an ESTIMATE.

    python benchmarks/bench_split_k.py [--target ascend910b1] [--example matmul/matmul_square]

For each shape, lowers the gallery kernel twice (PassContext.allow_split_k off / on), validates both in
the emulator against PyTorch and prints the cost model's estimated time and its headline: % of the
ideal for the problem (max(least GM traffic / HBM bandwidth, useful MACs / cube peak of all AICs),
docs/cost_model.md). The last shape has enough output blocks for every cube core: split-K must not be
chosen there (the two rows must agree).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: (M, K, N): few output blocks and a long K (split), then one the planner must leave alone.
SHAPES = [(64, 8192, 64), (128, 16384, 128), (33, 5000, 47), (768, 1024, 512)]


def run(example: str, shape: tuple[int, int, int], allow: bool, target: str):
    from lowering.context import PassContext
    from lowering.pipeline import run_pipeline
    from lowering.targets import get_target
    from npu_harness.gallery import Example
    from npu_harness.validate import load_task_for, validate_sim

    cat, name = example.split("/")
    ex = Example(cat, name, ROOT / f"examples/{example}.adsl", ROOT / f"examples/{example}.py")
    kernel = ex.source.instantiate({})
    m, k, n = shape
    task = load_task_for(kernel, ex.task, overrides={"M": m, "K": k, "N": n})
    ctx = PassContext(get_target(target), ex.adsl.name)
    ctx.allow_split_k = allow
    lowered = run_pipeline(kernel, ctx)
    return validate_sim(kernel, lowered, ctx.project, ctx, task)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="ascend910b1")
    ap.add_argument("--example", default="matmul/matmul_square")
    args = ap.parse_args(argv)
    print(f"{args.example} on {args.target}: ESTIMATES from the cost model (not measurements); "
          "ideal% = the ideal for the problem / device time")
    print(f"{'shape [M x K] @ [K x N]':>28} {'':>7} {'AICs':>5} {'busy':>5} {'split':>5} {'est. us':>9} {'ideal%':>7} {'bottleneck':>10}")
    bad = 0
    for shape in SHAPES:
        rows = []
        for allow in (False, True):
            res = run(args.example, shape, allow, args.target)
            if not res.ok:
                print(f"{shape}: FAILED ({'after' if allow else 'before'}): {res.detail}")
                bad += 1
                continue
            est = res.report
            blocks = res.counters["blocks"]
            split = "yes" if any(b.get("sync_all") for b in blocks) else "no"
            busy = len({i // 2 for i, b in enumerate(blocks) if b.get("cube_macs")})  # AICs that did cube work
            rows.append((est.time_us, est.ideal_fraction))
            m, k, n = shape
            print(f"{f'[{m} x {k}] @ [{k} x {n}]':>28} {'after' if allow else 'before':>7} {len(blocks) // 2:>5} {busy:>5} "
                  f"{split:>5} {est.time_us:>9.2f} {100 * est.ideal_fraction:>6.1f}% {est.bottleneck:>10}")
        if len(rows) == 2:
            print(f"{'':>28} speed-up {rows[0][0] / rows[1][0]:.2f}x")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
