"""Whole-row vector scans (lowering/vector_scan.py): the segment offsets are an exclusive scan of the segment
totals on the vector unit, not a scalar loop: log-steps of a shifting Gather and one Add/Mul, or for sums over 64
segments two levels (a triangle of the 8 group sums and one of the totals within each group; session 36). Validated in the emulator against
torch at a segment count that is not a power of two (P = 72: log-steps) and at P = 64 with a short last segment
(two levels for sums), with no scalar UB access left, and planted bugs in both forms caught."""

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
#: 4,001 elements: P = 64 (sums: the two-level form), the last segment 33 elements and the identity
TWO_LEVEL = 4001


def _run(name: str, dt: str, tmp_path, patch=None, row: int = ROW):
    adsl = REPO / "examples" / "math" / f"{name}.adsl"
    kernel = load_file(adsl)[0].instantiate({"T": dt})
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    f = f"{name}_kernel.cpp"
    assert "the segment offsets on the vector unit" in project.files[f]
    if patch:
        patched = patch(project.files[f])
        assert patched != project.files[f]
        project = replace(project, files={**project.files, f: patched})
    run = load_task_for(kernel, REPO / f"examples/math/{name}.py", overrides={"batch_size": 5, "dim": row})
    return validate_sim(kernel, ctx.lowered, project, ctx, run, work_dir=tmp_path)


@pytest.mark.parametrize("row", [ROW, TWO_LEVEL])
@pytest.mark.parametrize("name,dt", [("cumsum", "f32"), ("reverse_cumsum", "f16"), ("exclusive_cumsum", "f32"),
                                     ("cumprod", "f16"), ("masked_cumsum", "f16")])
def test_whole_row_scans_take_their_offsets_on_the_vector_unit(name, dt, row, tmp_path):
    res = _run(name, dt, tmp_path, row=row)
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


@pytest.mark.slow
@pytest.mark.parametrize("bad", [
    # the group offsets from the sums of groups <= g (the triangle's diagonal included)
    lambda c: c.replace("Gather(q[16], q, ot, 0, 64);", "Gather(q[16], q, ot, 4, 64);"),
    # inclusive within a group: the totals 8 g + 1 .. 8 g + m instead of 8 g .. 8 g + m - 1
    lambda c: c.replace("Gather(t[512], scanTmp_fwd, wt, 0, 512);", "Gather(t[512], scanTmp_fwd, wt, 4, 512);"),
], ids=["triangle", "inclusive"])
def test_planted_two_level_bugs_are_caught(bad, tmp_path):
    res = _run("cumsum", "f32", tmp_path, patch=bad, row=TWO_LEVEL)
    assert not res.ok and not res.comparisons[0].ok, res.summary()
