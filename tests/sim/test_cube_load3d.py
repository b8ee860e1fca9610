"""LoadData 3-D (Load3Dv2, ascend_sim/load3d.h): the img2col blocks it writes to L0A (Zz) and L0B (transposed
fractals) match a direct img2col of the feature map (padding, stride, dilation, a block inside the matrix and
one ending at its bottom edge), and one planted bug per check."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_harness.sim.compiler import compile_program, run_program
from tests.sim.source_lines import line_in

SRC = Path(__file__).resolve().parent / "kernels" / "cube_load3d.cpp"


@pytest.fixture(scope="module")
def binary() -> Path:
    return compile_program([SRC], defines={})


#: MTE1 cycles charged: the destination bytes (whole fractals) / the Load3D bandwidth to L0A for strideW 1 and a
#: 3-row kernel, floor(512 / (3 + 2)) = 102 B / cycle; to L0B the documented 128 B / cycle for stride 1 and one
#: kernel row, else the assumed 32 B / cycle (load3d.h).
@pytest.mark.parametrize("variant, mte1", [("l0a_all", -(-2 * 12 * 512 // 102)), ("l0a_block", -(-1 * 5 * 512 // 102)),
                                           ("l0b_block", 2 * 4 * 512 // 32), ("l0b_one_row", 2 * 3 * 512 // 128)])
def test_img2col_block_matches_the_definition(binary, variant, mte1):
    res = run_program(binary, [variant], timeout=60)
    assert res.returncode == 0 and not res.errors and "EXPECT failed" not in res.stdout, res.stdout + res.stderr
    assert res.counters["blocks"][0]["mte1_cycles"] == mte1, res.counters


@pytest.mark.parametrize("variant, code, marker", [
    ("channel_size", "PARAM-RANGE", "BUG: channelSize"),
    ("k_start", "PARAM-RANGE", "BUG: kStartPt"),
    ("m_extension", "PARAM-RANGE", "BUG: mExtension"),
    ("stride", "PARAM-RANGE", "BUG: stride"),
    ("past_k", "PARAM-RANGE", "BUG: past K"),
    ("dst_align", "UB-ALIGN", "BUG: dst align"),
    ("past_l0a", "UB-OOB", "BUG: past L0A"),
    ("transpose", "UNSUPPORTED", "BUG: enTranspose"),
    ("small_channels", "UNSUPPORTED", "BUG: small channels"),
    ("b32_l0b", "UNSUPPORTED", "BUG: b32 L0B"),
    ("kernel_too_big", "PARAM-RANGE", "BUG: kernel too big"),
    ("src_not_l1", "UB-OOB", "BUG: src not L1"),
])
def test_planted_load3d_bug_is_reported(binary, variant, code, marker):
    res = run_program(binary, [variant], timeout=60)
    assert res.returncode == 1, res.stdout + res.stderr
    assert [e.code for e in res.errors] == [code], res.stderr
    assert res.errors[0].file == "cube_load3d.cpp" and res.errors[0].line == line_in(SRC, marker), res.stderr
