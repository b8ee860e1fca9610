"""TransDataTo5HD (ascend_sim/transdata.h): NCHW -> NC1HWC0 of a 16-channel tile matches the definition in both
forms (LocalTensor array, uint64_t addresses) and the repeatTimes = 1 stride quirk; its vector count is one
instruction of repeatTimes repeats; one planted bug per check."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_harness.sim.compiler import compile_program, run_program
from tests.sim.source_lines import line_in

SRC = Path(__file__).resolve().parent / "kernels" / "transdata5hd.cpp"


@pytest.fixture(scope="module")
def binary() -> Path:
    return compile_program([SRC], defines={})


@pytest.mark.parametrize("variant, repeats", [("tensors", 5), ("addresses", 5), ("once_with_stride", 1)])
def test_nchw_to_nc1hwc0_matches_the_definition(binary, variant, repeats):
    res = run_program(binary, [variant], timeout=60)
    assert res.returncode == 0 and not res.errors and "EXPECT failed" not in res.stdout, res.stdout + res.stderr
    assert res.counters["blocks"][0]["vec"]["TransDataTo5HD.b16"] == [1, repeats], res.counters


@pytest.mark.parametrize("variant, code, marker", [
    ("src_align", "UB-ALIGN", "BUG: src align"),
    ("dst_past", "UB-OOB", "BUG: dst past its tensor"),
    ("b32", "UNSUPPORTED", "BUG: b32"),
    ("high_half", "PARAM-RANGE", "BUG: high half"),
    ("outside_ub", "UB-OOB", "BUG: address outside UB"),
    ("uninit", "UB-UNINIT", "BUG: uninit reaches GM"),
])
def test_planted_transdata_bug_is_reported(binary, variant, code, marker):
    res = run_program(binary, [variant], timeout=60)
    assert res.returncode == 1, res.stdout + res.stderr
    assert [e.code for e in res.errors] == [code], res.stderr
    assert res.errors[0].file == "transdata5hd.cpp" and res.errors[0].line == line_in(SRC, marker), res.stderr
