"""Scans over rows split between a group of cores (lowering/passes/scan_offsets.py): an offset pass folds each
core's operand, the group combine keeps only the cores before (after, for reverse scans) this one, and the scan
starts its carry there. Validated in the emulator at odd lengths against torch, the offset pass only run on core
groups (GM traffic), and two planted combine bugs caught."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ascend_dsl import ir, load_file
from lowering import lower
from npu_harness.validate import load_task_for, validate_sim

REPO = Path(__file__).resolve().parent.parent


def _example(name: str, dt: str):
    adsl = REPO / "examples" / "math" / f"{name}.adsl"
    kernel = load_file(adsl)[0].instantiate({"T": dt})
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    return kernel, project, ctx


def _plan(lowered: ir.Kernel) -> ir.ChunkPlan:
    tl = next(s for s in ir.walk(lowered.body) if isinstance(s, ir.TileLoop))
    return tl.shape.chunked


@pytest.mark.parametrize("name,combine,prefix", [("cumsum", ir.Combine.ADD, "before"),
                                                 ("reverse_cumsum", ir.Combine.ADD, "after"),
                                                 ("cumprod", ir.Combine.MUL, "before")])
def test_a_scan_pass_gets_an_offset_pass_before_it(name, combine, prefix):
    _, project, _ctx = _example(name, "f32")
    plan = _plan(_ctx.lowered)
    offsets, scan = plan.passes
    assert plan.row_groups and offsets.group_only and not scan.group_only
    assert [(f.combine, f.prefix) for f in offsets.reductions] == [(combine, prefix)]
    assert scan.scan_offsets == (offsets.reductions[0].name,)
    code = project.files[f"{name}_kernel.cpp"]
    off = f"{offsets.reductions[0].name}Row_"
    assert f"scanCarry1_0_ = rowGroup_ > 1 ? {off} : {'1.0f' if name == 'cumprod' else '0.0f'};" in code
    assert "if (rowGroup_ > 1) {  // the scans' carries" in code


def _run(name: str, dt: str, rows: int, d: int, tmp_path, patch=None):
    kernel, project, ctx = _example(name, dt)
    if patch:
        f = f"{name}_kernel.cpp"
        patched = patch(project.files[f])
        assert patched != project.files[f]
        project = replace(project, files={**project.files, f: patched})
    run = load_task_for(kernel, REPO / f"examples/math/{name}.py", overrides={"batch_size": rows, "dim": d})
    return validate_sim(kernel, ctx.lowered, project, ctx, run, work_dir=tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name,dt", [("cumsum", "f16"), ("reverse_cumsum", "f32"), ("exclusive_cumsum", "f16"),
                                     ("cumprod", "f32"), ("masked_cumsum", "f32")])
def test_scans_split_over_core_groups_validate(name, dt, tmp_path):
    """3 rows of 70,001 on 48 cores: groups of 16 cores, each with 4,608 columns (the last core fewer)."""
    res = _run(name, dt, 3, 70001, tmp_path)
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])
    assert res.report.blocks == 48


@pytest.mark.slow
def test_the_offset_pass_reads_x_only_on_core_groups(tmp_path):
    """Grouped rows read x twice (offsets, then the scan) but for the last core's columns, whose partial no core
    reads; rows that a core walks alone (50 rows on 48 cores) once."""
    grouped, alone = _run("cumsum", "f32", 3, 70001, tmp_path / "g"), _run("cumsum", "f32", 50, 20001, tmp_path / "a")
    assert grouped.ok and alone.ok, (grouped.summary(), alone.summary())
    last = 70001 - 15 * 4608  # groups of 16 cores with 4608 columns each: the last core's share
    def read(res) -> int:  # the bytes the kernel reads (HBM and L2: the cost model's L2 rule credits re-reads)
        return sum(b["gm2ub"]["bytes"] for b in res.counters["blocks"])

    assert read(grouped) == pytest.approx(3 * (2 * 70001 - last) * 4, rel=0.02)  # + the combines' slots
    assert read(alone) == pytest.approx(50 * 20001 * 4, rel=0.001)
    # the scan pass re-reads the core's columns right after the offset pass: from L2, HBM sees x about once
    assert grouped.report.gm_read_bytes < 1.1 * 3 * 70001 * 4


@pytest.mark.slow
@pytest.mark.parametrize("name,bad", [
    # every core's carry from the whole group's total, not only the cores before it
    ("cumsum", lambda c: c.replace("for (uint32_t c = 0; c < groupRank_; ++c) {", "for (uint32_t c = 0; c < rowGroup_; ++c) {")),
    # a reverse scan's carry from the cores before it instead of after it
    ("reverse_cumsum", lambda c: c.replace("for (uint32_t c = rowGroup_; c-- > groupRank_ + 1;) {",
                                           "for (uint32_t c = 0; c < groupRank_; ++c) {")),
])
def test_planted_combine_bugs_are_caught(name, bad, tmp_path):
    res = _run(name, "f32", 3, 70001, tmp_path, patch=bad)
    assert not res.ok and not res.comparisons[0].ok, res.summary()
