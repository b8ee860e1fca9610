"""Speed of the emitted code as the cost model sees it (an ESTIMATE, not a measurement).

    python benchmarks/bench_gallery_model.py [--target ascend910b1] [--json FILE] [--only a,b] [--quick]

For every gallery kernel and dtype, validates in the emulator at the shapes below and prints the cost
model's estimated time, bottleneck, and two percentages: ideal% (the headline) = the ideal for the
problem / device time, ideal = max(least GM traffic (every tensor once) / HBM bandwidth, useful cube
MACs / cube peak, the kernel's vector work / all AIV); traffic% = the same with the GM traffic the kernel
moves and the MACs it issues (the efficiency of the traffic it does). Also what limits it (iterations
per core, overlap, cores).

Shapes (batch_size x dim): flat (element-wise) kernels 16 x 16384 (KernelBench's default, 1 MiB f32:
latency-bound), 64 x 65536 and 256 x 65536 (benchmark scale); row kernels 128 x 4096 (task default)
and 4096 x 4096 (benchmark scale); optimizers 4M and 16M parameters; reductions over the last dim of
[256, 16, 4096], and reductions over dim 1 / dim 0 (box loops) also over [16, 4096, 256] (a long reduced
axis); matmul/fuse their task sizes; prod and pooling their gallery shapes (scalar
loops; no target in the issue); scans (vector unit) as row kernels, with rows of 393,216 too. See bench_shapes(). KernelBench's own benchmark sizes (e.g. 4096 x 393216) are too
large to emulate; per core they only repeat the 256 x 65536 tile loop more often.

Targets (the issue): element-wise kernels (flat, and row kernels that only broadcast a row or column)
>= 85 %; reductions, normalization and softmax-like kernels >= 70 %. The summary judges each kernel at its
benchmark-scale shape (the last one listed), on the headline ideal% and, separately, on traffic%.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: Flat (element-wise) kernels, any category: batch_size x dim.
FLAT_SHAPES = [{"batch_size": 16, "dim": 16384}, {"batch_size": 64, "dim": 65536}, {"batch_size": 256, "dim": 65536}]
#: Row kernels (2-D tensors: softmax, norms, per-row reductions, row/column broadcasts): the task
#: default (128 x 4096) and a benchmark-scale 4096 x 4096. Rows longer than UB (e.g. 16384 floats)
#: need multi-pass kernels.
ROW_SHAPES = [{"batch_size": 128, "dim": 4096}, {"batch_size": 4096, "dim": 4096}]
#: Rows longer than UB (KernelBench softmax rows: 393,216 floats; 256 x 256 planes of 256 KB): the row
#: kernels run chunked passes that re-read GM (lowering/passes/plan_chunks.py). Reported beside the benchmark-scale
#: shape: 16 rows (fewer rows than cores: each row's columns are split over a group of 3 cores,
#: lowering/emit/row_groups.py) and 96 rows (2 per core; the emulator steps every element, so not KernelBench's 4096).
#: Scans (vector unit, lowering/vector_scan.py) carry their running value along the row: one core per row.
SCANS = ("cumsum", "cumprod", "reverse_cumsum", "exclusive_cumsum", "masked_cumsum")
LONG_ROWS = {name: [{"batch_size": 16, "dim": 393216}, {"batch_size": 96, "dim": 393216}]
             for name in ("softmax", "log_softmax", "layer_norm", "rms_norm", *SCANS)}
LONG_ROWS.update({name: [{"batch_size": 2, "features": 8, "dim1": 256, "dim2": 256}]
                  for name in ("instance_norm", "batch_norm")})
#: Three split loops, each chunked (slot accumulators between them): 16 planes (groups of 3 cores per plane)
#: and 96 (2 per core).
LONG_ROWS.update({name: [{"batch_size": 2, "features": 8, "dim1": 256, "dim2": 256},
                         {"batch_size": 2, "features": 48, "dim1": 256, "dim2": 256}]
                  for name in ("batch_norm_train", "group_norm")})
ELEMENTWISE_TARGET = 0.85
REDUCTION_TARGET = 0.70
#: Row kernels that reduce along the row (the rest of the row kernels only broadcast: element-wise).
REDUCING = {"softmax", "log_softmax"}


#: Kernels whose work runs on the scalar unit (prod, pooling windows): the emulator steps every scalar
#: access, so they run at their gallery shapes (the issue sets no roofline target for them).
SCALAR_LOOPS = {"prod_dim"}
#: Reductions over a non-last dim (box loops: strided reads along the reduced axis).
BOX_REDUCTIONS = {"sum_dim1", "mean_dim1", "max_dim1", "min_dim1", "prod_dim1", "sum_dim0"}
#: Matmul / fused-epilogue kernels (MIX): their task's own sizes (tasks name them M, N, K, Bt).
CUBE = ("matmul", "fuse")


def tensor_bytes(ex, dts, symbols: dict[str, int]) -> int:
    """Bytes of every kernel tensor once: the least GM traffic any lowering needs (each input read
    once, each output written once)."""
    total = 0
    for p in ex.source.instantiate(dts).tensors:
        n = 1
        for d in p.shape:
            n *= symbols[d] if isinstance(d, str) else d
        total += n * p.dtype.size
    return total


def target_fraction(ex) -> tuple[str, float | None]:
    """(class, target roofline fraction) of a gallery example; None: the issue sets no target."""
    if ex.category in CUBE or ex.category in ("pooling", "resize") or ex.name in SCALAR_LOOPS:
        return ex.category if ex.category != "math" else "scan", None
    if ex.category in ("reduce", "normalization", "loss") or ex.name in REDUCING:
        return ex.category if ex.category != "activation" else "softmax", REDUCTION_TARGET
    if ex.name in SCANS:  # issue 21: >= 70% of the ideal, like the reductions
        return "scan", REDUCTION_TARGET
    return "element-wise", ELEMENTWISE_TARGET


def bench_shapes(ex) -> list[dict[str, int]]:
    """Shapes per kernel: a default-size one first, the benchmark-scale one last."""
    if ex.category in CUBE:
        return [{}]
    if ex.category in ("pooling", "resize") or ex.name in SCALAR_LOOPS:  # resize: its gallery shapes (no target)
        return ex.shapes()[:1]
    if ex.category == "optimizer":
        return [{"num_params": 1 << 22}, {"num_params": 1 << 24}]
    if ex.name == "cross_entropy":
        return [{"batch_size": 128, "num_classes": 1000}, {}]
    if ex.name in ("frobenius_norm", "instance_norm", "batch_norm", "batch_norm_train", "group_norm"):
        return [{"batch_size": 16, "features": 64, "dim1": 32, "dim2": 32},
                *LONG_ROWS.get(ex.name, []),
                {"batch_size": 16, "features": 64, "dim1": 64, "dim2": 64}]
    if ex.name in BOX_REDUCTIONS:  # the task's [16, 256, 256], a long reduced axis, the reduce benchmark shape
        return [{}, {"batch_size": 16, "dim1": 4096, "dim2": 256}, {"batch_size": 256, "dim1": 16, "dim2": 4096}]
    if ex.category == "reduce":
        return [{}, {"batch_size": 256, "dim1": 16, "dim2": 4096}]
    if ex.name in ("tril", "triu", "causal_softmax"):  # batches of matrices: the task's 16 x 256 x 256 / 16 x 512 x 512
        return [{}]
    if ex.name in LONG_ROWS:
        return [ROW_SHAPES[0], *LONG_ROWS[ex.name], ROW_SHAPES[-1]]
    return ROW_SHAPES if ex.is_rows else FLAT_SHAPES


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
    ap.add_argument("--quick", action="store_true", help="benchmark-scale shapes only")
    args = ap.parse_args(argv)

    from ascend_dsl.diagnostics import DslError
    from npu_harness import gallery

    only = {k for k in args.only.split(",") if k}
    rows = []
    print(f"cost model ESTIMATES on {args.target} (not measurements; parameters: npu_harness/cost/targets/)")
    hdr = (f"{'kernel':<22} {'dtype':<5} {'shape':<11} {'blk':>3} {'it/core':>7} {'ovl':>3} {'est us':>8} {'dev us':>8} "
           f"{'ideal us':>8} {'kind':<4} {'bottleneck':<10} {'ideal%':>6} {'traffic%':>8} {'GM x':>5} {'bal%':>4}  "
           "pipes us (slowest core: MTE2/V/MTE3)")
    print(hdr)
    for ex in gallery.discover():
        if only and ex.name not in only:
            continue
        klass, goal = target_fraction(ex)
        shapes = bench_shapes(ex)
        if args.quick:
            shapes = [s for s in shapes if s is shapes[-1] or s in LONG_ROWS.get(ex.name, [])]
        for dts in ex.dtypes:
            for shape in shapes:
                dname = "/".join(str(v) for v in dts.values()) or "-"
                sname = "x".join(str(v) for v in shape.values())
                try:
                    r = gallery.validate(ex, dts, shape, target=args.target)
                except DslError as e:
                    print(f"{ex.name:<22} {dname:<5} {sname:<11} ERROR {e.codes}")
                    continue
                est = r.report
                if est is None:
                    print(f"{ex.name:<22} {dname:<5} {sname:<11} no counters (ok={r.ok})")
                    continue
                slow = max(est.cores, key=lambda c: c.time_us)
                p = slow.pipes_us
                need = tensor_bytes(ex, dts, r.shapes)
                gm_x = (est.gm_read_bytes + est.gm_write_bytes) / need if need else 1.0
                min_frac = est.ideal_fraction  # the headline: against the ideal for the problem
                row = {"kernel": f"{ex.category}/{ex.name}", "class": klass, "target_fraction": goal, "dtype": dname,
                       "shape": shape, "benchmark_scale": shape == shapes[-1], "ok": r.ok,
                       "long_rows": shape in LONG_ROWS.get(ex.name, []),
                       "blocks": est.blocks, "iterations_per_core": slow.iterations, "overlapped": slow.overlapped,
                       "estimate_us": est.time_us, "kernel_us": est.kernel_us, "roofline_us": est.roofline_us,
                       "bottleneck": est.bottleneck, "hbm_bound": est.hbm_bound, "roofline_kind": est.roofline_kind,
                       "roofline_fraction": est.roofline_fraction, "load_balance": est.load_balance,
                       "tensor_bytes": need, "gm_traffic_ratio": gm_x, "min_traffic_fraction": min_frac,
                       "ideal_fraction": est.ideal_fraction, "ideal_kind": est.ideal_kind, "ideal_us": est.ideal_us,
                       "slowest_core_pipes_us": p}
                if goal is not None and est.roofline_fraction < goal and r.counters:
                    f, be = best_retile(r.counters, args.target)
                    row["whatif"] = {"iterations_per_core": max(1, round(slow.iterations * f)), "factor": f,
                                     "kernel_us": be.kernel_us, "roofline_fraction": be.roofline_fraction}
                rows.append(row)
                flag = "" if goal is None or est.ideal_fraction >= goal else f"  <-- below {100 * goal:.0f}%"
                if not r.ok:
                    flag += "  (VALIDATION FAILED)"
                if "whatif" in row:
                    w = row["whatif"]
                    flag += (f"; best with {w['iterations_per_core']} it/core: {w['kernel_us']:.2f} us = "
                             f"{100 * w['roofline_fraction']:.0f}%")
                print(f"{ex.name:<22} {dname:<5} {sname:<11} {est.blocks:>3} {slow.iterations:>7} "
                      f"{'y' if slow.overlapped else 'n':>3} {est.time_us:8.2f} {est.kernel_us:8.2f} {est.ideal_us:8.2f} "
                      f"{est.ideal_kind[:3]:<4} {est.bottleneck + ('*' if est.hbm_bound else ''):<10} "
                      f"{100 * est.ideal_fraction:6.0f} {100 * est.roofline_fraction:8.0f} {gm_x:5.2f} {100 * est.load_balance:4.0f}  "
                      f"{p['MTE2']:.2f}/{p['V']:.2f}/{p['MTE3']:.2f}{flag}", flush=True)
    if rows:
        print(f"\n'*' = bounded by aggregate GM bandwidth; dev us = device time without the "
              f"{rows[0]['estimate_us'] - rows[0]['kernel_us']:.0f} us launch overhead; ideal% (headline) = ideal for the "
              "problem / dev us (kind: mem = least GM traffic at HBM bandwidth, vec = the kernel's own vector work at full "
              "rate on every core, cub = useful MACs at the cube's peak); traffic% = the same bound with the traffic moved "
              "and the MACs issued (efficiency of the traffic it does).\n"
              "GM x = GM bytes moved / bytes of the kernel's tensors (1.00: every tensor crosses once).")
        print("Summary at benchmark scale (flat kernels 256 x 65536, row kernels 4096 x 4096):")
        for klass in sorted({r["class"] for r in rows}):
            mine = [r for r in rows if r["class"] == klass and r["benchmark_scale"]]
            if not mine:
                continue
            goal = mine[0]["target_fraction"]
            if goal is None:
                lo = min(r["ideal_fraction"] for r in mine)
                print(f"  {klass:<14} no target: {len(mine)} rows (lowest {100 * lo:.0f}% of the ideal)")
                continue
            miss = [f"{r['kernel'].split('/')[1]} {r['dtype']} {100 * r['ideal_fraction']:.0f}% (GM x{r['gm_traffic_ratio']:.2f})"
                    for r in mine if r["ideal_fraction"] < goal]
            lo = min(r["ideal_fraction"] for r in mine)
            traffic_ok = sum(r["roofline_fraction"] >= goal for r in mine)
            print(f"  {klass:<14} target >= {100 * goal:.0f}% of the ideal: {len(mine) - len(miss)}/{len(mine)} rows meet it "
                  f"(lowest {100 * lo:.0f}%; on traffic efficiency {traffic_ok}/{len(mine)})"
                  f"{'; below: ' + ', '.join(miss) if miss else ''}")
        longs = [r for r in rows if r["long_rows"]]
        if longs:
            print("Rows longer than UB (chunked passes re-read GM; traffic% counts the traffic moved, ideal% the tensors "
                  "once):")
            for r in longs:
                print(f"  {r['kernel'].split('/')[1]:<14} {r['dtype']:<4} {'x'.join(map(str, r['shape'].values())):<12} "
                      f"{100 * r['roofline_fraction']:.0f}% traffic efficiency, {100 * r['ideal_fraction']:.0f}% "
                      f"of the ideal (GM x{r['gm_traffic_ratio']:.2f}; target "
                      f"{100 * r['target_fraction']:.0f}%)")
        for label, pick in (("all shapes", rows), ("KernelBench default shapes (16 x 16384, 128 x 4096)",
                                                    [r for r in rows if r["shape"] in (FLAT_SHAPES[0], ROW_SHAPES[0])])):
            if pick:
                pick = [r for r in pick if r["target_fraction"] is not None]
                ok = sum(r["ideal_fraction"] >= r["target_fraction"] for r in pick)
                ok_t = sum(r["roofline_fraction"] >= r["target_fraction"] for r in pick)
                print(f"  {label}: {ok}/{len(pick)} rows meet their target of the ideal ({ok_t} on traffic efficiency)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
