"""The vector conversion of the NC1HWC0 conv route (docs/design.md, session 30) on the emulator: x NCHW ->
NC1HWC0 and the weight -> [K][C1][KH][KW][C0] by DataCopyPad + TransDataTo5HD, odd sizes, four blocks, exact; a
kernel that does not zero the missing channels of the last block is caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_harness.sim.compiler import compile_program, run_program

SRC = Path(__file__).resolve().parent / "kernels" / "nchw_to_5hd.cpp"


@pytest.fixture(scope="module")
def binary() -> Path:
    return compile_program([SRC], defines={})


def test_nchw_and_weight_convert_to_nc1hwc0(binary):
    res = run_program(binary, ["convert"], timeout=60)
    assert res.returncode == 0 and not res.errors and "EXPECT failed" not in res.stdout, res.stdout + res.stderr
    # 18 x tasks (2 images x 3 channel blocks x 3 chunks) and 60 weight tasks: one TransDataTo5HD each
    assert sum(b["vec"]["TransDataTo5HD.b16"][0] for b in res.counters["blocks"]) == 18 + 60, res.counters


def test_missing_zero_channels_are_caught(binary):
    res = run_program(binary, ["missing_zero_rows"], timeout=60)
    assert res.returncode == 1 and "EXPECT failed" in res.stdout, res.stdout + res.stderr
