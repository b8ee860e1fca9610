"""i32 reductions (found by the fuzzer's focused stream, session 33): over whole rows they are a located
DTYPE-UNSUPPORTED (AscendC's ReduceSum / ReduceMax / ReduceMin take half and float only on A2, so the emitted C++ did
not compile); over a box (Add / Max / Min folds, which take int32) max and min start at the type's ends, not at
+-inf (the emitter raised an INTERNAL OverflowError), and validate against PyTorch, the reduced axis split over
cores included."""

from __future__ import annotations

import pytest

from ascend_dsl import parse_text
from ascend_dsl.diagnostics import DslError
from lowering import lower
from npu_harness.fuzz.runner import Job, run_jobs

ROWS = '''@kernel
def k(x: Tensor[i32, "B, D"], y: Tensor[i32, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            v = load(x[r, :])
            store(y[r, :], v - {op}(v, axis=1))
'''

BOX = '''@kernel
def k(x: Tensor[i32, "A, R, C"], y: Tensor[i32, "A, C"]):
    for blk in split(A * C, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], {op}(load(x[t]), axis=1))
'''


@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_an_i32_row_reduction_is_a_located_error(op):
    with pytest.raises(DslError) as info:
        parse_text(ROWS.format(op=op), "rows.adsl")[0].instantiate()
    text = str(info.value)
    assert "DTYPE-UNSUPPORTED" in text and "rows.adsl:6:" in text and f"{op}(cast(v, f32), axis=1)" in text, text


def test_an_f32_row_reduction_of_cast_i32_values_still_lowers():
    src = ROWS.format(op="max").replace("v - max(v, axis=1)", "cast(v, f32) - max(cast(v, f32), axis=1)")
    src = src.replace('y: Tensor[i32, "B, D"]', 'y: Tensor[f32, "B, D"]')
    lower(parse_text(src, "rows.adsl")[0].instantiate(), "ascend910b1", "rows.adsl")


@pytest.mark.parametrize("op,identity", [("max", "static_cast<int32_t>(-2147483648LL)"),
                                         ("min", "static_cast<int32_t>(2147483647LL)")])
def test_an_i32_box_max_or_min_starts_at_the_type_end(op, identity):
    project, _ = lower(parse_text(BOX.format(op=op), "box.adsl")[0].instantiate(), "ascend910b1", "box.adsl")
    cpp = project.files["k_kernel.cpp"]
    assert identity in cpp and "1.0f / 0.0f" not in cpp


@pytest.mark.slow
def test_i32_boxes_validate_against_torch():
    """Few rows of positions (the reduced axis split over cores: partials through the workspace as int32) and
    whole rows, dim 1 and dim 0."""
    dim0 = BOX.replace('"A, C"', '"R, C"').replace("A * C", "R * C").replace("axis=1", "axis=0")
    jobs = [Job(BOX.format(op=op), {"A": a, "R": r, "C": c}, 1, "ascend910b1", 48, f"{op}-{a}x{r}x{c}")
            for op in ("sum", "max", "min") for a, r, c in ((2, 700, 64), (3, 5, 40))]
    jobs += [Job(dim0.format(op=op), {"A": 900, "R": 1, "C": 33}, 1, "ascend910b1", 48, f"{op}-dim0") for op in ("max",
                                                                                                            "min")]
    bad = [f"{o.job.label}: {o.status} {o.detail[:300]}" for o in run_jobs(jobs) if o.status != "pass"]
    assert not bad, bad
