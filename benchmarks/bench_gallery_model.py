"""Speed of the emitted code as the cost model sees it (an ESTIMATE, not a measurement).

    .venv/bin/python benchmarks/bench_gallery_model.py [--target ascend910b1] [--json FILE]

For every gallery kernel and dtype, at benchmark-scale shapes (activation: batch_size x dim =
16 x 16384 and 64 x 65536; row kernels: 128 x 4096 and 4096 x 4096), validates in the emulator
and prints the cost model's estimated time, bottleneck, fraction of the roofline, and what limits it (iterations per core, overlap, cores).
Element-wise kernels should reach >= 85 % of the memory roofline.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SHAPES = {"activation": [{"batch_size": 16, "dim": 16384}, {"batch_size": 64, "dim": 65536}]}
#: Row kernels (2-D tensors: softmax, norms, per-row reductions): the task default (128 x 4096) and a
#: benchmark-scale 4096 x 4096. Rows longer than UB (e.g. 16384 floats) need multi-pass kernels.
ROW_SHAPES = [{}, {"batch_size": 4096, "dim": 4096}]
TARGET_FRACTION = 0.85
#: Matmul / fused-epilogue kernels (MIX): their task's own sizes (tasks name them M, N, K, Bt).
CUBE = ("matmul", "fuse")


def retile(counters: dict, factor: float) -> dict:
    """What-if: the same kernel with `factor` times as many (smaller) tiles per core. Transfers,
    bursts and vector instructions scale by `factor`; bytes and repeats stay (repeats at least one
    per instruction). Used to tell the lowering how many iterations per core it should plan."""
    import copy

    out = copy.deepcopy(counters)
    for b in out["blocks"]:
        for key in ("gm2ub", "ub2gm"):
            d = b.get(key)
            if not d or not d.get("bytes"):
                continue
            d["transfers"] = max(1, round(d["transfers"] * factor))
            hist = []
            for _upper, count, nbytes in d["hist"]:
                n = max(1, round(count * factor))
                burst = nbytes / n
                upper = 32
                while upper < burst and upper < (32 << 15):
                    upper *= 2
                hist.append([upper, n, nbytes])
            d["hist"] = hist
            d["bursts"] = sum(h[1] for h in hist)
        for k, (instr, reps) in list(b.get("vec", {}).items()):
            n = max(1, round(instr * factor))
            b["vec"][k] = [n, max(reps, n)]
    return out


def best_retile(counters: dict, target: str):
    """(factor, estimate) with the best roofline fraction over a few tile-count factors."""
    from npu_harness.cost import estimate

    best = None
    for f in (0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4, 6, 8):
        e = estimate(retile(counters, f), target)
        if best is None or e.kernel_us < best[1].kernel_us - 1e-9:
            best = (f, e)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="ascend910b1")
    ap.add_argument("--json", type=Path, help="write all rows as JSON")
    ap.add_argument("--only", default="", help="comma-separated kernel names")
    args = ap.parse_args(argv)

    from ascend_dsl.diagnostics import DslError
    from npu_harness import gallery

    only = {k for k in args.only.split(",") if k}
    rows = []
    print(f"cost model ESTIMATES on {args.target} (not measurements; parameters: npu_harness/cost/targets/)")
    hdr = (f"{'kernel':<22} {'dtype':<5} {'shape':<12} {'blk':>3} {'it/core':>7} {'ovl':>3} {'est us':>8} {'dev us':>8} "
           f"{'roof us':>8} {'bottleneck':<10} {'roof%':>5} {'bal%':>4}  pipes us (slowest core: MTE2/V/MTE3)")
    print(hdr)
    for ex in gallery.discover():
        if only and ex.name not in only:
            continue
        for dts in ex.dtypes:
            for shape in ROW_SHAPES if ex.is_rows and ex.category not in CUBE else SHAPES.get(ex.category, [{}]):
                dname = "/".join(str(v) for v in dts.values()) or "-"
                sname = "x".join(str(v) for v in shape.values()) or "default"
                try:
                    r = gallery.validate(ex, dts, shape, target=args.target)
                except DslError as e:
                    print(f"{ex.name:<22} {dname:<5} {sname:<12} ERROR {e.codes}")
                    continue
                est = r.report
                if est is None:
                    print(f"{ex.name:<22} {dname:<5} {sname:<12} no counters (ok={r.ok})")
                    continue
                slow = max(est.cores, key=lambda c: c.time_us)
                p = slow.pipes_us
                row = {"kernel": f"{ex.category}/{ex.name}", "dtype": dname, "shape": shape, "ok": r.ok,
                       "blocks": est.blocks, "iterations_per_core": slow.iterations, "overlapped": slow.overlapped,
                       "estimate_us": est.time_us, "kernel_us": est.kernel_us, "roofline_us": est.roofline_us,
                       "bottleneck": est.bottleneck, "hbm_bound": est.hbm_bound, "roofline_kind": est.roofline_kind,
                       "roofline_fraction": est.roofline_fraction, "load_balance": est.load_balance,
                       "slowest_core_pipes_us": p}
                if est.roofline_fraction < TARGET_FRACTION and r.counters:
                    f, be = best_retile(r.counters, args.target)
                    row["whatif"] = {"iterations_per_core": max(1, round(slow.iterations * f)), "factor": f,
                                     "kernel_us": be.kernel_us, "roofline_fraction": be.roofline_fraction}
                rows.append(row)
                flag = "" if est.roofline_fraction >= TARGET_FRACTION else "  <-- below 85%"
                if "whatif" in row:
                    w = row["whatif"]
                    flag += (f"; best with {w['iterations_per_core']} it/core: {w['kernel_us']:.2f} us = "
                             f"{100 * w['roofline_fraction']:.0f}%")
                print(f"{ex.name:<22} {dname:<5} {sname:<12} {est.blocks:>3} {slow.iterations:>7} "
                      f"{'y' if slow.overlapped else 'n':>3} {est.time_us:8.2f} {est.kernel_us:8.2f} {est.roofline_us:8.2f} "
                      f"{est.bottleneck + ('*' if est.hbm_bound else ''):<10} {100 * est.roofline_fraction:5.0f} "
                      f"{100 * est.load_balance:4.0f}  {p['MTE2']:.2f}/{p['V']:.2f}/{p['MTE3']:.2f}{flag}")
    if rows:
        below = [r for r in rows if r["roofline_fraction"] < TARGET_FRACTION]
        print(f"\n{len(rows)} rows; {len(rows) - len(below)} at >= 85% of their roofline (memory or vector); "
              f"{len(below)} below. '*' = bounded by aggregate GM bandwidth. dev us = device time without the "
              f"{rows[0]['estimate_us'] - rows[0]['kernel_us']:.0f} us launch overhead; roof% = roofline / dev us.")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
