"""Issue 16, item 3, as the cost model sees it (ESTIMATES, not measurements): per-row broadcasts on rows of 64-1024
(goal >= 50 % of the ideal) and reductions over a middle dim (goal >= 70 %).

    python benchmarks/bench_row_broadcast.py [--target ascend910b1] [--task-timeout S] [--only a,b]

Per-row broadcasts: the gallery kernels that combine whole rows with one value per row (`load(c[r])`:
sub_col, div_col) and with a row vector (add_row, mul_row, max_row, scale_shift), at 4M elements (f32: 16 MiB in,
16 MiB out, every core busy) as rows of 64, 128, 256, 512 and 1024. Reductions over a middle dim: the box
kernels (sum/mean/max/min/prod over dim 1, sum over dim 0) at the shapes benchmarks/bench_gallery_model.py runs
them (`BOX_REDUCTIONS`). Every row is validated in the emulator against torch (gallery.validate) and prints
ideal% = the ideal for the problem / device time (docs/cost_model.md), its bottleneck and GM traffic multiple.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_gallery_model import (  # noqa: E402
    BENCH_TASK_TIMEOUT_S,
    BOX_REDUCTIONS,
    bench_shapes,
    tensor_bytes,
    validate_with_retry,
)

#: Row kernels whose rows combine with a per-row value or a row vector.
BROADCASTS = ("sub_col", "div_col", "add_row", "mul_row", "max_row", "scale_shift")
ROW_LENGTHS = (64, 128, 256, 512, 1024)
ELEMENTS = 1 << 22
BROADCAST_GOAL, BOX_GOAL = 0.50, 0.70


def cases(ex) -> list[dict[str, int]]:
    """The shapes this script runs a gallery kernel at (none: not one of issue 16's item 3)."""
    if ex.name in BROADCASTS:
        return [{"batch_size": ELEMENTS // d, "dim": d} for d in ROW_LENGTHS]
    if ex.name in BOX_REDUCTIONS:
        return [s for s in bench_shapes(ex) if s]
    return []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="ascend910b1")
    ap.add_argument("--only", default="", help="comma-separated kernel names")
    ap.add_argument("--task-timeout", type=float, default=BENCH_TASK_TIMEOUT_S)
    args = ap.parse_args(argv)

    from ascend_dsl.diagnostics import DslError
    from npu_harness import gallery

    only = {k for k in args.only.split(",") if k}
    print(f"cost model ESTIMATES on {args.target} (not measurements)")
    print(f"{'kernel':<14} {'dtype':<5} {'shape':<14} {'blk':>3} {'dev us':>8} {'ideal us':>8} {'bottleneck':<10} "
          f"{'ideal%':>6} {'GM x':>5}  goal")
    met = total = 0
    for ex in gallery.discover():
        if only and ex.name not in only:
            continue
        goal = BROADCAST_GOAL if ex.name in BROADCASTS else BOX_GOAL
        for dts in ex.validation_dtypes():
            for shape in cases(ex):
                dname = "/".join(str(v) for v in dts.values()) or "-"
                sname = "x".join(str(v) for v in shape.values())
                total += 1
                try:
                    r = validate_with_retry(ex, dts, shape, args.target, args.task_timeout)
                except DslError as e:
                    print(f"{ex.name:<14} {dname:<5} {sname:<14} ERROR {'; '.join(map(str, e.codes))}", flush=True)
                    continue
                est = r.report
                gm_x = (est.gm_read_bytes + est.gm_write_bytes) / tensor_bytes(ex, dts, r.shapes)
                ok = r.ok and est.ideal_fraction >= goal
                met += ok
                print(f"{ex.name:<14} {dname:<5} {sname:<14} {est.blocks:>3} {est.kernel_us:8.2f} {est.ideal_us:8.2f} "
                      f"{est.bottleneck + ('*' if est.hbm_bound else ''):<10} {100 * est.ideal_fraction:6.0f} "
                      f"{gm_x:5.2f}  {100 * goal:.0f}%{'' if r.ok else ' VALIDATION FAILED'}"
                      f"{'' if ok else '  <-- below'}", flush=True)
    print(f"issue 16 item 3: {met}/{total} rows meet their goal (per-row broadcasts >= {100 * BROADCAST_GOAL:.0f}%, "
          f"reductions over a middle dim >= {100 * BOX_GOAL:.0f}% of the ideal)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
