"""Row reductions whose halves are folded with Add / Max / Min before the count-form reduction (emit/row_fold.py):
row lengths at the fold's edges, in the emulator against PyTorch, and a planted bug in the fold."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ascend_dsl import load_file
from lowering import lower
from npu_harness.validate import load_task_for, validate_sim

REPO = Path(__file__).resolve().parent.parent


def _run(example: str, dtype: str | None, overrides: dict, patch=None):
    adsl = REPO / "examples" / f"{example}.adsl"
    kernel = load_file(adsl)[0].instantiate({"T": dtype} if dtype else None)
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    fname = f"{kernel.name}_kernel.cpp"
    if patch is not None:
        old, new = patch
        assert old in project.files[fname]
        project = replace(project, files={**project.files, fname: project.files[fname].replace(old, new)})
    run = load_task_for(kernel, adsl.with_suffix(".py"), overrides=overrides)
    return project.files[fname], validate_sim(kernel, ctx.lowered, project, ctx, run)


# f32 rows (64 per repeat): 257 / 1000 not folded (fewer than 8 repeats; fewer than 16 and not whole halves);
# 640 (10 repeats) folded once into halves of 5; 1088 (17 repeats) and 3000 / 4095: halves and the rest past them;
# 4096: halves down to 4 repeats
@pytest.mark.parametrize("dim2", [257, 640, 1000, 1088, 3000, 4095, 4096])
@pytest.mark.parametrize("example", ["reduce/sum_dim", "reduce/max_dim", "reduce/min_dim"])
def test_folded_row_reductions_match_pytorch(example, dim2):
    code, res = _run(example, None if example.endswith("sum_dim") else "f32",
                     {"batch_size": 2, "dim1": 3, "dim2": dim2})
    assert "emit/row_fold.py" in code
    assert res.ok, res


def test_fold_pays_from_8_repeats_or_16_with_a_rest():
    import re

    from lowering.emit import row_fold

    worth = re.sub(r"&&", "and", re.sub(r"\|\|", "or", row_fold.WORTH))  # the C++ condition, as Python
    folds = [r for r in range(1, 40) if eval(worth, {"n": r * 64, "lanes": 64})]
    assert folds == [8, 10, 12, 14, *range(16, 40)]


@pytest.mark.parametrize("dim", [300, 1024, 2100, 4096])  # f16: 128 per repeat
def test_folded_f16_softmax_rows_match_pytorch(dim):
    _, res = _run("activation/softmax", "f16", {"batch_size": 5, "dim": dim})
    assert res.ok, res


def test_planted_bug_fold_drops_the_odd_repeats():
    # the elements past both halves not folded in: rows of 3000 floats lose their last 184 elements' sum
    old = "Add(reduceTmp_f32, reduceTmp_f32, xLocal[i * rowPitch_ + 2 * h], static_cast<int32_t>(n - 2 * h));"
    _, res = _run("reduce/sum_dim", None, {"batch_size": 2, "dim1": 3, "dim2": 3000}, patch=(old, ""))
    assert not res.ok
