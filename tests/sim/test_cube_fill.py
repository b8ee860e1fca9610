"""InitConstValue into L1 (ascend_sim/cube.h), used by the padded convolution gather: the fill and the
copies after it give the expected fractals, a copy that overwrites the fill without PipeBarrier<PIPE_MTE2>
is a race, and one planted bug per parameter check."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_harness.sim.compiler import compile_program, run_program
from tests.sim.source_lines import line_in

SRC = Path(__file__).resolve().parent / "kernels" / "cube_fill.cpp"


@pytest.fixture(scope="module")
def binary() -> Path:
    return compile_program([SRC], defines={})


def test_fill_then_copy_gives_the_expected_fractals(binary):
    res = run_program(binary, ["fill_ok"], timeout=60)
    assert res.returncode == 0 and not res.errors, res.stdout + res.stderr


def test_copy_over_the_fill_without_a_barrier_is_a_race(binary):
    res = run_program(binary, ["fill_race"], timeout=60)
    assert res.returncode == 1 and [e.code for e in res.errors] == ["PIPE-RACE"], res.stdout + res.stderr
    err = res.errors[0]
    assert err.line == line_in(SRC, "RACE: overwrites the fill") and "PipeBarrier<PIPE_MTE2>" in err.message, res.stderr


@pytest.mark.parametrize("variant, code, marker", [
    ("misaligned", "UB-ALIGN", "BUG: misaligned"),
    ("repeat_range", "PARAM-RANGE", "BUG: repeatTimes"),
    ("past_l1", "UB-OOB", "BUG: past L1"),
    ("l0b", "UNSUPPORTED", "BUG: L0B"),
])
def test_planted_fill_bug_is_reported(binary, variant, code, marker):
    res = run_program(binary, [variant], timeout=60)
    assert res.returncode == 1, res.stdout + res.stderr
    assert [e.code for e in res.errors] == [code], res.stderr
    assert res.errors[0].file == "cube_fill.cpp" and res.errors[0].line == line_in(SRC, marker), res.stderr
