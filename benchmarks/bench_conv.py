"""Convolution speed as the cost model sees it (an ESTIMATE from emulator counters, not a measurement).

    python benchmarks/bench_conv.py [--target ascend910b1] [--only NAME,...]

For each case, lowers the gallery kernel, validates it in the emulator against PyTorch at the shape below and
prints the cost model's estimated device time and three percentages, each "ideal time / estimated time":
  cube%   = the problem's MACs (N x K x output pixels x C/groups x taps; npu_harness/problem_macs.py) / the cube
            peak of all AICs (the cube roofline of the problem). Before session 30 this was the emulator's
            unpadded Mmad MACs, which count the sparse layout's 15 dead columns of each pixel as useful: the
            3x3 figures were 16x too high (2.6 % printed, 0.16 % real);
  memory% = least GM traffic (every tensor once) / HBM bandwidth (the memory roofline of the problem);
  ideal%  = the larger of the two bounds (the cost model's headline, docs/cost_model.md).
The two shapes of issue 14 (3x3 conv2d 64->128 on 16x64x256x256 with padding 1; ResNet-50 1x1 convs 256->64 and
64->256 at 56x56, batch 16) are large; the 1x1 ones run whole, the 3x3 one (77 G useful MACs) runs on a slice: one
image of 48 rows (the same 256-column rows, the same tiles: on the NC1HWC0 route, session 30, one row per tile,
48 tiles = 2 per cube core; the old sparse path took 16x the cube work and 768 tiles; the full shape's tile count
is a multiple of 24 too). Before session 30's route the slice was 12 rows (0.16 % then; 0.16 % at 48 rows too);
the route's conversion launch converts the weights once per launch, which the full shape's 16 images amortise
better than the slice does. Session 31 added a whole-image case (256 row tiles, ~11 per cube core: the resident
weights and the halo rows kept in L1 amortised as at the full shape, which gives each core ~171) and the full shape
itself, run only when named (`--only conv3x3_64_128_full`). A depthwise and a strided (ResNet downsampling) case run on slices the
same way. Before/after: run this script on main's tree for "before" (it takes no switch).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: (name, gallery example, task overrides, what it stands for)
CASES = [
    ("conv3x3_64_128_pad1", "convolution/conv2d_padded",
     {"batch_size": 1, "in_channels": 64, "out_channels": 128, "height": 48, "width": 256},
     "issue 14: 3x3 64->128 pad 1 on 16x64x256x256 (slice: 1 image x 48 rows)"),
    ("conv3x3_64_128_img", "convolution/conv2d_padded",
     {"batch_size": 1, "in_channels": 64, "out_channels": 128, "height": 256, "width": 256},
     "issue 14: the same, 1 whole image (256 row tiles, ~11 per cube core: the weights and halo rows amortised)"),
    ("conv1x1_256_64", "convolution/conv2d_pointwise",
     {"batch_size": 16, "in_channels": 256, "out_channels": 64, "height": 56, "width": 56},
     "issue 14: ResNet-50 1x1 256->64 at 56x56, batch 16 (whole)"),
    ("conv1x1_64_256", "convolution/conv2d_pointwise",
     {"batch_size": 16, "in_channels": 64, "out_channels": 256, "height": 56, "width": 56},
     "issue 14: ResNet-50 1x1 64->256 at 56x56, batch 16 (whole)"),
    ("depthwise3x3_64", "convolution/conv2d_depthwise",
     {"batch_size": 1, "channels": 64, "kernel_size": 3, "height": 6, "width": 56},
     "depthwise 3x3 pad 1, 64 channels at 56 columns (slice: 1 image x 6 rows)"),
    ("strided3x3_64_128", "convolution/conv2d_strided_relu",
     {"batch_size": 1, "in_channels": 64, "out_channels": 128, "height": 56, "width": 56},
     "ResNet downsampling 3x3 stride 2 pad 1, 64->128 at 56x56 (1 image)"),
]


#: run only when named in --only (minutes in the emulator): the issue's whole 3x3 shape
FULL_CASES = [
    ("conv3x3_64_128_full", "convolution/conv2d_padded",
     {"batch_size": 16, "in_channels": 64, "out_channels": 128, "height": 256, "width": 256},
     "issue 14: 3x3 64->128 pad 1 on 16x64x256x256 (whole; ~2 min)"),
]


def run(example: str, overrides: dict, target: str):
    from npu_harness.gallery import Example, validate

    cat, name = example.split("/")
    ex = Example(cat, name, ROOT / f"examples/{example}.adsl", ROOT / f"examples/{example}.py")
    return validate(ex, {}, overrides, target)


def main(argv=None) -> int:
    from npu_harness.cost.model import load_params, target_for

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="ascend910b1")
    ap.add_argument("--only", default="", help="comma-separated case names")
    args = ap.parse_args(argv)
    p = load_params(target_for(args.target))
    only = {s for s in args.only.split(",") if s}
    print(f"convolution on {args.target}: ESTIMATES from the cost model (not measurements); each % = that bound's time / "
          "the estimated device time")
    print(f"{'case':>20} {'est. us':>9} {'cube%':>6} {'memory%':>8} {'ideal%':>7} {'bottleneck':>10} {'balance':>7}  shape")
    bad = 0
    for name, example, overrides, what in CASES + [c for c in FULL_CASES if c[0] in only]:
        if only and name not in only:
            continue
        start = time.perf_counter()
        res = run(example, overrides, args.target)
        if not res.ok or res.report is None:
            print(f"{name:>20} FAILED: {res.detail}")
            bad += 1
            continue
        est = res.report
        cube_us = est.cube_ideal_us  # the problem's MACs (npu_harness/problem_macs.py) / the cube peak of all AICs
        mem_us = est.min_gm_bytes / (p.hbm_gbps * 1e3)
        dev = est.kernel_us
        print(f"{name:>20} {dev:>9.2f} {100 * cube_us / dev:>5.2f}% {100 * mem_us / dev:>7.2f}% {100 * est.ideal_fraction:>6.2f}% "
              f"{est.bottleneck:>10} {100 * est.load_balance:>6.0f}%  {what} [{time.perf_counter() - start:.0f} s]")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
