"""Epilogue bands (lowering/passes/epilogue_bands.py, mix_*.jinja): the cube keeps its 256 x 128 block, hands each
block over through the AIV's GM slot and the epilogue runs on bands of its rows. Validated in the emulator against
PyTorch at an odd shape (several bands per block, tail bands, tail blocks), with planted bugs in the band walk."""

from __future__ import annotations

from pathlib import Path

import pytest

import ascend_dsl
from ascend_dsl import ir
from lowering.context import PassContext
from lowering.passes import epilogue_bands, plan_cube
from lowering.pipeline import run_pipeline
from lowering.targets import get_target

REPO = Path(__file__).resolve().parent.parent


def test_band_rows_fill_the_budget_and_leave_split_k_room():
    gelu = ascend_dsl.load_file(REPO / "examples/fuse/matmul_gelu.adsl")[0].instantiate()
    t = get_target("ascend910b1")
    plan = ir.cube_loop(run_pipeline(gelu, PassContext(t))).plan
    bufs = ir.cube_loop(run_pipeline(gelu, PassContext(t))).epilogue.buffers_decl
    reserve = epilogue_bands.SPLIT_K_RESERVE_ROWS * plan.base_n * 4
    assert plan.band_rows and plan.band_rows % epilogue_bands.BAND_STEP == 0
    assert plan_cube.ub_bytes(bufs, plan.band_rows, plan.base_n) + reserve <= t.ub_budget
    more = plan.band_rows + epilogue_bands.BAND_STEP
    assert plan_cube.ub_bytes(bufs, more, plan.base_n) + reserve > t.ub_budget  # the most rows that fit
    # a block the buffers hold whole needs no bands; a budget below one band's buffers gets none either (the caller
    # shrinks the block as before)
    assert epilogue_bands.band_rows(bufs, 32, 32, t.ub_budget, plan_cube.ub_bytes) == 0
    assert epilogue_bands.band_rows(bufs, 256, 128, 1000, plan_cube.ub_bytes) == 0


def _validate(source: str, overrides: dict, plant=None):
    from npu_harness.gallery import Example
    from npu_harness.validate import load_task_for, validate_sim

    ex = Example("fuse", source, REPO / f"examples/fuse/{source}.adsl", REPO / f"examples/fuse/{source}.py")
    kernel = ex.source.instantiate({})
    run = load_task_for(kernel, ex.task, overrides=overrides)
    ctx = PassContext(get_target("ascend910b1"), ex.adsl.name)
    lowered = run_pipeline(kernel, ctx)
    name = f"{kernel.name}_kernel.cpp"
    if plant:
        old, new = plant
        assert old in ctx.project.files[name]
        ctx.project.files[name] = ctx.project.files[name].replace(old, new)
    return validate_sim(kernel, lowered, ctx.project, ctx, run)


#: 300 x 200 outputs: 128-row blocks of 64 columns (the host narrows both for 12 blocks on 48 cores), a gelu's
#: bands of 96 rows: two bands per block, the second a tail of 32 rows, and a last block of 44 rows.
ODD = {"M": 300, "K": 70, "N": 200}


@pytest.mark.slow
def test_bands_match_torch_at_odd_sizes():
    res = _validate("matmul_gelu", ODD)
    assert res.ok, res.detail
    blocks = res.counters["blocks"]
    assert sum(b.get("ws_gm2ub", 0) for b in blocks) == ODD["M"] * ODD["N"] * 4  # every element read back once
    assert sum(b.get("ws_l0c2gm", 0) for b in blocks) == ODD["M"] * ODD["N"] * 4
    # more band copies than blocks: blocks of several bands
    assert sum(b["gm2ub"]["transfers"] for b in blocks) > 12


@pytest.mark.slow
@pytest.mark.parametrize("plant", [
    ("bandOff_ = static_cast<uint64_t>(r0) * rowPitch_;", "bandOff_ = 0;"),  # every band reads the block's first rows
    ("r0 += tileLength_) {", "r0 += 2 * tileLength_) {"),  # bands skipped
], ids=["band-offset", "skipped-band"])
def test_planted_band_bugs_are_caught(plant):
    res = _validate("matmul_gelu", ODD, plant)
    assert not res.ok and [c.name for c in res.comparisons if not c.ok] == ["c"], res.summary()  # wrong values, no crash
