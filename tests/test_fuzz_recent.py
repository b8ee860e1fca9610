"""The fuzzer's focused stream (npu_harness/fuzz/recent.py) and its coverage classifier (npu_harness/fuzz/coverage.py):
the programs parse, every recent form is drawn, the other streams are unchanged, and the classifier decides a form
from the sizes the way the host tiling does."""

from __future__ import annotations

import random

from ascend_dsl import parse_text
from npu_harness.fuzz import campaign
from npu_harness.fuzz.coverage import forms
from npu_harness.fuzz.exprs import leaf
from npu_harness.fuzz.gen import generate, generate_recent, generate_stages
from npu_harness.fuzz.program import Loop, Program, Stmt
from npu_harness.fuzz.recent import RECENT_KINDS

TARGETED = {"slot_value_brcb", "middim_split", "middim_rows_near_half_cores", "long_rows_on_groups",
            "long_rows_on_groups_ragged", "norm_long_rows_over_1mb", "row_value_brcb", "gather_narrow",
            "index_select_cols", "scatter_value_dim0", "scatter_dim0", "flat_reduction_only", "sum_tree_combine",
            "batched_gemm", "batched_gemm_several_m_blocks", "i32_box_reduction", "i32_rows", "gather_middle_vec",
            "gather_middle_long_slab", "gather_middle_scalar_walk", "flash_ring", "flash_ring_api", "flash_ring_causal",
            "scatter_shared_vec", "scatter_shared_scalar_walk", "scatter_shared_add", "scan_direct", "scan_padded",
            "scan_square"}


def test_recent_programs_parse_and_draw_every_kind():
    rng = random.Random(33)
    programs = [generate_recent(rng, i, i) for i in range(240)]
    bad = []
    for p in programs:
        try:
            parse_text(p.text(), "r.adsl")[0].instantiate()
        except Exception as e:  # noqa: BLE001
            bad.append((p.text(), e))
    assert len(bad) <= 2, bad[:2]
    assert {p.kind for p in programs} == set(RECENT_KINDS)


def test_every_targeted_form_is_drawn_by_the_focused_stream():
    rng = random.Random(32)  # session 36: new kinds moved the draws; gather_middle's long forms are ~1 in 400
    drawn = set().union(*(forms(generate_recent(rng, i, i)) for i in range(400)))
    assert TARGETED <= drawn, TARGETED - drawn


def test_focused_stream_leaves_the_other_streams_unchanged():
    """The main and multi-stage programs of a campaign are those without the focused stream."""
    rng, stage_rng = random.Random(101), random.Random("stages-101")
    alone = [generate(rng, i, i).text() for i in range(30)] + [generate_stages(stage_rng, i, i).text() for i in (0, 12, 24)]
    rng, stage_rng, recent_rng = random.Random(101), random.Random("stages-101"), random.Random("recent-101")
    main, stages = [], []
    for i in range(30):
        main.append(generate(rng, i, i).text())
        if i % campaign.RECENT_EVERY == 0:
            generate_recent(recent_rng, i, i)
        if i % campaign.STAGE_EVERY == 0:
            stages.append(generate_stages(stage_rng, i, i).text())
    assert main + stages == alone


def _box(a: int, r: int, c: int, cores: int, keep_shape: bool = False) -> Program:
    body = (Stmt("xb = load(x1[t])", None, "xb"), Stmt("m = sum(xb, axis=1)", None, "m"), Stmt("store(y2[t], m)"))
    if keep_shape:
        body += (Stmt("store(z3[t], xb - m)"),)
    loop = Loop("for blk in split(A * C, cores=AIV):", "for t in tile(blk, size=auto, buffers=2):", body)
    return Program("k", "@kernel", ('x1: Tensor[f32, "A, R, C"]',), (loop,), {"A": a, "R": r, "C": c}, 0,
                   "ascend910b1", cores, "box")


def test_middle_dim_split_is_decided_by_rows_against_cores_and_the_axis_length():
    assert "middim_split" in forms(_box(2, 700, 64, 48))
    assert "middim_rows_near_half_cores" in forms(_box(23, 700, 64, 48))
    assert "middim_split" not in forms(_box(24, 700, 64, 48))  # rows >= cores / 2: whole rows per core
    assert "middim_split" not in forms(_box(2, 20, 64, 48))  # R / 16 = 1 part
    assert "middim_split" not in forms(_box(2, 700, 64, 48, keep_shape=True))  # the box's shape kept: whole axis


def _rows(b: int, d: int, cores: int) -> Program:
    body = (Stmt("v = load(x1[r, :])", None, "v"), Stmt("cv = load(c2[r])", None, "cv"), Stmt("store(y3[r, :], v * cv)"))
    loop = Loop("for blk in split(B, cores=AIV):", "for r in tile(blk, size=auto, buffers=2):", body)
    return Program("k", "@kernel", (), (loop,), {"B": b, "D": d}, 0, "ascend910b1", cores, "row_values")


def test_brcb_form_is_decided_by_rows_per_core_and_strips():
    assert "row_value_brcb" in forms(_rows(48 * 4, 64, 48))  # 4 rows, 1 strip: 1 + 1 < 4
    assert "row_value_brcb" not in forms(_rows(48 * 2, 64, 48))  # 2 rows: row by row
    assert "row_value_brcb" not in forms(_rows(48 * 4, 256, 48))  # 4 strips: 4 + 1 >= 4
    assert leaf("x", "f32", "rows").render() == "x"
