"""Level-0 mask / repeat forms, reductions (tree order, half saturation, indices, documented work-buffer
sizes), gather / index / sort APIs (ascend_sim/level0.h, reduce.h, gather.h): correct variants checked
against values computed in the kernel, and one planted bug per check."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_harness.sim.compiler import compile_program, run_program
from tests.sim.source_lines import line_in

SRC = Path(__file__).resolve().parent / "kernels" / "vecapi.cpp"


@pytest.fixture(scope="module")
def binary() -> Path:
    return compile_program([SRC], defines={})


def line_of(text: str) -> int:
    return line_in(SRC, text)


@pytest.mark.parametrize("variant", ["reduce_tree_half", "reduce_forms", "level0_counter_and_masks", "gather_ok", "sort_ok"])
def test_api_computes(binary, variant):
    res = run_program(binary, [variant], timeout=60)
    assert res.returncode == 0 and res.errors == [], res.stdout + res.stderr


@pytest.mark.parametrize("variant,code,marker,words", [
    ("reduce_tmp_small", "REDUCE-TMP", "ReduceSum(dst, src, small", "minimum for firstMaxRepeat = 20 is 24"),
    ("reduce_max_index_tmp_small", "REDUCE-TMP", "BUG: REDUCE-TMP with index", "is 56 elements"),
    ("reduce_min_tmp_small", "REDUCE-TMP", "BUG: REDUCE-TMP of ReduceMin", "is 40"),
    ("reduce_level0_tmp_small", "REDUCE-TMP", "BUG: REDUCE-TMP of the level-0", "is 24"),
    ("reduce_dst_misaligned", "UB-ALIGN", "BUG: dst not element-aligned", "dst"),
    ("reduce_src_misaligned", "UB-ALIGN", "BUG: src not 32-B aligned", "src"),
    ("mask_high_b32", "PARAM-RANGE", "BUG: maskHigh", "maskHigh = 0x1 must be 0"),
    ("gather_oob", "UB-OOB", "BUG: offset past", "reads byte 1048576 of src"),
    ("gather_unaligned", "PARAM-RANGE", "Gather(f[2048], f, off, 0, 8);", "not a multiple of sizeof(T)"),
])
def test_api_check_fires(binary, variant, code, marker, words):
    res = run_program(binary, [variant], timeout=60)
    assert res.returncode == 1, res.stdout + res.stderr
    assert [e.code for e in res.errors] == [code], res.stderr
    e = res.errors[0]
    assert e.file == "vecapi.cpp" and words in e.message and e.line == line_of(marker), res.stderr


def test_cast_float_to_half_is_counted_apart_and_charged_one_cycle_per_repeat(binary):
    """ascendc.md §5.5 (CONV): f16 -> f32 2 cycles per repeat, f32 -> f16 1. The emulator counts float -> half as its own
    class (CastF32ToF16, repeats by the wider type, level 2 and level 0), so the cost model charges the two directions
    apart; half -> float stays Cast.b32."""
    from npu_harness.cost.model import load_params

    res = run_program(binary, ["cast_counter_classes"], timeout=60)
    assert res.returncode == 0 and res.errors == [], res.stdout + res.stderr
    vec = res.counters["blocks"][0]["vec"]
    assert vec["CastF32ToF16.b32"] == [2, 8 + 2]
    assert vec["Cast.b32"] == [1, 4]
    p = load_params("ascend910b1")
    assert p.cycles_per_repeat("CastF32ToF16.b32") == 1 and p.cycles_per_repeat("Cast.b32") == 2
