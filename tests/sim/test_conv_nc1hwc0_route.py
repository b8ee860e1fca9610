"""The NC1HWC0 route for forward convolutions (docs/design.md, session 30), on the emulator's cube APIs: a padded
3x3 convolution whose L0B image-to-column fractals are plain LoadData 2-D copies of 16 consecutive pixels of an
NC1HWC0 feature map in L1 (any tap = a 32-byte address offset, padding = a zero border), the weight on the left
and Fixpipe writing NCHW rows, matches a direct convolution; a tap loaded one pixel off does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_harness.sim.compiler import compile_program, run_program

SRC = Path(__file__).resolve().parent / "kernels" / "conv_nc1hwc0.cpp"


@pytest.fixture(scope="module")
def binary() -> Path:
    return compile_program([SRC], defines={})


@pytest.mark.parametrize("variant", ["conv", "planted_tap"])
def test_nc1hwc0_fractals_feed_l0b_without_a_transpose(binary, variant):
    res = run_program(binary, [variant], timeout=60)
    assert res.returncode == 0 and not res.errors and "EXPECT failed" not in res.stdout, res.stdout + res.stderr
    blk = res.counters["blocks"][0]
    # L0B: 18 k blocks x 5 fractals at 128 B / cycle; L0A: 2 x 18 fractals at 256 B / cycle (cube.h, ref_next §1.4)
    assert blk["mte1_cycles"] == 18 * 5 * 512 // 128 + 2 * 18 * 512 // 256, blk
    # SetFlag calls and distinct ids per HardEvent (the cost model's ping-pong rule): one stage on EVENT_ID0 each
    assert blk["flags"] == {"MTE2_MTE1": [1, 1], "MTE1_M": [1, 1], "M_FIX": [1, 1]}, blk


def test_a_tile_at_the_issues_scale_is_exact(binary):
    """64 -> 128 channels, two 256-pixel rows with W padding (halo rows copied per row), k = 576 in L0B-sized steps
    (the tiles benchmarks/bench_conv_route.py costs)."""
    res = run_program(binary, ["tile", "1", "2"], timeout=120)
    assert res.returncode == 0 and not res.errors and "EXPECT failed" not in res.stdout, res.stdout + res.stderr
    assert res.counters["blocks"][0]["cube_macs"] == 2 * 128 * 256 * 576, res.counters
