"""Whole-row vector scans (lowering/vector_scan.py): the segment offsets are an exclusive scan of the segment
totals on the vector unit (log-steps of a shifting Gather and one Add/Mul), not a scalar loop. Validated in the
emulator against torch at a row length whose segment count is not a power of two (P = 72), with no scalar UB
access left, and two planted bugs in the log-steps caught."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ascend_dsl import load_file
from lowering import lower
from npu_harness.validate import load_task_for, validate_sim

REPO = Path(__file__).resolve().parent.parent
#: 4,600 elements: P = ceil(4600 / 512) * 8 = 72 segments of 64, all holding data (the last log-step shifts by 64)
ROW = 4600


def _run(name: str, dt: str, tmp_path, patch=None):
    adsl = REPO / "examples" / "math" / f"{name}.adsl"
    kernel = load_file(adsl)[0].instantiate({"T": dt})
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    f = f"{name}_kernel.cpp"
    assert "the segment offsets on the vector unit" in project.files[f]
    if patch:
        patched = patch(project.files[f])
        assert patched != project.files[f]
        project = replace(project, files={**project.files, f: patched})
    run = load_task_for(kernel, REPO / f"examples/math/{name}.py", overrides={"batch_size": 5, "dim": ROW})
    return validate_sim(kernel, ctx.lowered, project, ctx, run, work_dir=tmp_path)


@pytest.mark.parametrize("name,dt", [("cumsum", "f32"), ("reverse_cumsum", "f16"), ("exclusive_cumsum", "f32"),
                                     ("cumprod", "f16"), ("masked_cumsum", "f16")])
def test_whole_row_scans_take_their_offsets_on_the_vector_unit(name, dt, tmp_path):
    res = _run(name, dt, tmp_path)
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])
    blocks = res.counters["blocks"]
    assert sum(b["ub_get"] + b["ub_set"] for b in blocks) == 0  # no scalar walk over the segment totals
    assert not any(b.get("flags", {}).get("V_S") for b in blocks)


@pytest.mark.slow
@pytest.mark.parametrize("bad", [
    # inclusive offsets (each segment would count its own total twice)
    lambda c: c.replace("Gather(t, z, id, (P - 1) * 4, P);", "Gather(t, z, id, P * 4, P);"),
    # one log-step short: segments more than 32 apart would miss the totals before them
    lambda c: c.replace("for (uint32_t k = 1; k < P; k *= 2) {", "for (uint32_t k = 1; 2 * k < P; k *= 2) {"),
], ids=["inclusive", "short"])
def test_planted_offset_bugs_are_caught(bad, tmp_path):
    res = _run("cumsum", "f32", tmp_path, patch=bad)
    assert not res.ok and not res.comparisons[0].ok, res.summary()
