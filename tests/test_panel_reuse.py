"""The cube's operand panel re-loads by LRU stack distance (session 32): the emulator's `panel_reload` counter
(npu_harness/sim/include/ascend_sim/impl/panel_reuse_rt.h) and the cost model's rule on it (npu_harness/cost/model.py
_panel_share): a re-load within the L2's reach is an L2 hit even when the launch's tensors exceed L2."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_harness.cost import estimate
from npu_harness.cost.model import load_params

REPO = Path(__file__).resolve().parent.parent
MIB = 1 << 20


def _validate(example: str, overrides: dict):
    from npu_harness.gallery import Example, validate

    cat, name = example.split("/")
    ex = Example(cat, name, REPO / f"examples/{example}.adsl", REPO / f"examples/{example}.py")
    return validate(ex, {}, overrides)


def _reloads(blocks: list[dict]) -> list[tuple[int, int]]:
    return [(int(u), int(n)) for b in blocks for u, n in b.get("panel_reload", [])]


def test_every_panel_load_after_the_first_is_a_counted_reload():
    """A batched GEMM's blocks load each A panel (batch, row tile) once per column tile and each B panel once per
    row tile; every load but the first of a panel is a re-load, so the re-loaded bytes are the L1 loads less the
    operands' bytes, and no re-load is farther back than all the operand and output bytes of the launch."""
    bt, m, n, k = 2, 256, 384, 64
    res = _validate("matmul/matmul_batched", {"Bt": bt, "M": m, "N": n, "K": k})
    assert res.ok, res.detail
    blocks = res.counters["blocks"]
    operands = bt * (m * k + k * n) * 2  # f16
    loads = sum(b.get("gm2l1", 0) for b in blocks)
    reloads = _reloads(blocks)
    assert loads > operands  # panels are loaded more than once (baseM / baseN below M / N)
    assert sum(nb for _, nb in reloads) == loads - operands
    assert max(u for u, _ in reloads) <= 2 * (operands + bt * m * n * 4)


def test_a_panel_loaded_by_one_block_twice_in_a_row_has_distance_of_the_panels_between():
    """One column tile, a row tile per block: the blocks' first tasks run at the same clock and are taken in block
    order, each loading its A panel, then B; block i re-loads the B panel block i - 1 loaded, with only its own A panel
    (a row tile x K) loaded in between."""
    res = _validate("matmul/matmul_square", {"M": 512, "N": 128, "K": 64})
    assert res.ok, res.detail
    blocks = [b for b in res.counters["blocks"] if b.get("gm2l1")]
    rows = 512 // len(blocks)  # the row tile each block computes
    a_panel = rows * 64 * 2
    assert len(blocks) > 1
    assert not blocks[0].get("panel_reload")  # the first block loads everything for the first time
    for b in blocks[1:]:
        # B (64 x 128) again; the A panel of the block before is the one distinct panel loaded in between
        assert b["panel_reload"] == [[a_panel, 64 * 128 * 2]]


def _batched_launch(reload_bound: int, union: int) -> dict:
    """A MIX GEMM's counters: 48 AIV blocks (24 AIC groups), each loading 64 MiB of operand panels into L1, of which
    60 MiB are re-loads at stack distance `reload_bound` (the first 4 MiB from HBM), writing 2 MiB."""
    blk = {"cube_macs": 1 << 20, "cube_macs_useful": 1 << 20, "gm2l1": 64 * MIB, "l0c2gm": 2 * MIB,
           "panel_reload": [[reload_bound, 60 * MIB]]}
    return {"aiv_per_aic": 2, "cube_operand_bytes": union, "blocks": [dict(blk) for _ in range(48)]}


def test_reloads_within_the_l2_hit_it_farther_ones_cross_hbm():
    p = load_params("ascend910b1")
    # operands (200 MiB) + output exceed the 192 MB L2: the per-launch union rule credits nothing
    near = estimate(_batched_launch(32 * MIB, union=200 * MIB), "ascend910b1")
    far = estimate(_batched_launch(256 * MIB, union=200 * MIB), "ascend910b1")
    assert 256 * MIB > p.l2_bytes >= 32 * MIB
    assert far.gm_read_bytes == 48 * 64 * MIB  # every load crosses HBM (the rule before session 32)
    assert near.gm_read_bytes == 48 * 4 * MIB  # only the first loads
    assert near.l2_bytes == 48 * 60 * MIB
    assert near.kernel_us < far.kernel_us / 2  # L2 -> L1 at 221 GB/s per AIC against its 67.5 GB/s share of HBM
    # the re-loads are timed at the L2 -> L1 rate: an AIC's 2 x 60 MiB at 221 GB/s, plus its 2 x 4 MiB share of HBM
    hbm_core = min(p.gm_to_l1_core_gbps, p.hbm_gbps / 24) * 1e3
    assert near.cores[0].pipes_us["M"] == pytest.approx(2 * 60 * MIB / (p.l2_to_l1_core_gbps * 1e3) + 2 * 4 * MIB / hbm_core)
    # a launch that fits L2 keeps the union rule (the larger credit of the two)
    fits = estimate(_batched_launch(256 * MIB, union=48 * MIB), "ascend910b1")
    assert fits.gm_read_bytes == 48 * MIB
    # no credit without an L2 figure (310P) or without the counter (older counters)
    assert estimate(_batched_launch(32 * MIB, union=200 * MIB), "ascend310p").l2_bytes == 0
    old = _batched_launch(32 * MIB, union=200 * MIB)
    for b in old["blocks"]:
        del b["panel_reload"]
    assert estimate(old, "ascend910b1").gm_read_bytes == 48 * 64 * MIB


def test_batch_major_order_keeps_a_batched_gemms_reloads_within_l2():
    """The gallery's batched GEMM: the cores walk the tasks batch by batch (task / blocks per batch entry), so each
    panel is re-loaded while at most a few batch entries' operands and outputs were touched in between, not the
    launch's (at 8 x 2048^3, 256 MB against the 192 MB L2, the per-launch rule credited no re-load at all)."""
    bt, m, n, k = 12, 256, 256, 1024
    res = _validate("matmul/matmul_batched", {"Bt": bt, "M": m, "N": n, "K": k})
    assert res.ok, res.detail
    per_batch = (m * k + k * n) * 2 + m * n * 4
    reloads = _reloads(res.counters["blocks"])
    assert reloads and max(u for u, _ in reloads) <= 4 * per_batch < bt * per_batch
