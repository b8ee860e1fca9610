"""The NC1HWC0 convolution route (docs/design.md, session 30) as the cost model would see it: a PROJECTION from one
emulated tile, not a lowering (the compiler does not emit this path yet). An ESTIMATE, not a measurement.

    python benchmarks/bench_conv_route.py [--target ascend910b1]

Runs tests/sim/kernels/conv_nc1hwc0.cpp's `tile` variant (64 -> 128 channels, interior 256-pixel rows, W padding
1, k = 576 in L0B-sized steps; the weight resident in L1, 3 halo rows copied per row) on 24 blocks (every cube
core active, so the per-core GM bandwidth is the shared one), once with 1 row and once with 2 rows per block; the
difference is the marginal cost of one row tile. It prints that tile's pipes (M, MTE1, MTE2), then projects the
issue's 3x3 64->128 on 16x64x256x256 (4096 row tiles over the AICs) with the pipes summed (what the model charges
a cube kernel that runs one stage at a time, as conv_kernel.cpp.jinja does) and overlapped (ping-pong buffers),
with 3 halo rows copied per row tile or 1 (a core keeping the previous rows in L1; the copies' bytes and GM reads scaled by 1/3, not their count),
bounded below by HBM (all cores' GM traffic), plus the NCHW -> NC1HWC0 conversion launch at the HBM bound (its x
traffic twice, one launch overhead), against the cube roofline of the problem.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BLOCKS = 24
N, C, K, H, W = 16, 64, 128, 256, 256


def main(argv=None) -> int:
    from npu_harness.cost import estimate
    from npu_harness.cost.model import load_params, target_for
    from npu_harness.sim.compiler import compile_program, run_program

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="ascend910b1")
    args = ap.parse_args(argv)
    p = load_params(target_for(args.target))
    binary = compile_program([ROOT / "tests/sim/kernels/conv_nc1hwc0.cpp"], defines={})
    pipes, reads, writes = {}, {}, {}
    for rows in (1, 2):
        res = run_program(binary, ["tile", str(BLOCKS), str(rows)], timeout=1800)
        if res.returncode != 0 or res.errors:
            print(f"FAILED ({rows} rows): {res.stdout[-2000:]}{res.stderr[-2000:]}")
            return 1
        est = estimate(res.counters, args.target)
        pipes[rows], reads[rows], writes[rows] = est.cores[0].pipes_us, est.gm_read_bytes / BLOCKS, est.gm_write_bytes / BLOCKS
    tile = {k: pipes[2][k] - pipes[1][k] for k in ("M", "MTE1", "MTE2")}
    first = {k: pipes[1][k] - tile[k] for k in tile}  # the weight's one copy into L1 (and the zero border)
    read, write = reads[2] - reads[1], writes[2] - writes[1]  # GM bytes of one row tile (3 halo rows in, the row out)
    tiles = math.ceil(N * H / p.aic)
    convert = 2 * N * C * H * W * 2 / (p.hbm_gbps * 1e3) + p.launch_overhead_us
    roof = N * K * H * W * C * 9 / (p.cube_macs_per_cycle * p.clock_ghz * 1e3 * p.aic)
    print(f"NC1HWC0 route on {args.target}: a PROJECTION from emulated tiles (cost-model ESTIMATES, not measurements)")
    print("one row tile (128 channels x 256 pixels, k = 576): " + ", ".join(f"{k} {v:.2f} us" for k, v in tile.items())
          + f", GM {read / 1024:.0f} KB in / {write / 1024:.0f} KB out; once per core: {sum(first.values()):.2f} us")
    for halo in (3, 1):  # halo rows copied per row tile: 3, or 1 when a core keeps the previous rows in L1
        hbm = N * H * (read * halo / 3 + write) / (p.hbm_gbps * 1e3)  # all cores share HBM
        lat = C // 16 * p.dma_latency_cycles / (p.clock_ghz * 1e3)  # one copy per c1 either way: only the bytes shrink
        mte2 = lat + (tile["MTE2"] - lat) * halo / 3
        per = {**tile, "MTE2": mte2}
        for name, core in (("pipes summed", sum(per.values())), ("pipes overlapped", max(per.values()))):
            conv = max(tiles * core + sum(first.values()), hbm)
            total = conv + p.launch_overhead_us + convert
            print(f"  {halo} halo row(s) per tile, {name:>16}: conv {conv:7.1f} us (HBM bound {hbm:5.1f}) + conversion "
                  f"{convert:5.1f} us + launch {p.launch_overhead_us:.0f} us = {total:7.1f} us = {100 * roof / total:5.1f} % "
                  f"of the cube roofline ({roof:.1f} us)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
