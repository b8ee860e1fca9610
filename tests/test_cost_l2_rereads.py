"""The L2 rule for the vector units' re-reads (npu_harness/cost/model.py _l2_rereads): a block's GM -> UB re-read of
bytes read before is an L2 hit when its reuse distance (the emulator's `reread` counter: the GM bytes a block moves
between the closest earlier read of them, by it or another block, and this one) times the active cores fits the L2;
anything farther crosses HBM again."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_harness.cost import estimate
from npu_harness.cost.model import load_params

SHARE = 1 << 20  # bytes of x per core


def _dma(nbytes: int, transfers: int) -> dict:
    return {"bytes": nbytes, "transfers": transfers, "bursts": transfers, "hist": [[65536, transfers, nbytes]]}


def _two_pass(distance: int | None, cores: int = 48) -> dict:
    """`cores` blocks of a norm that reads its share of x twice (statistics, then normalise) and writes y once; the
    second read at reuse distance `distance` (None: counters without the re-read histogram)."""
    b = {"gm2ub": _dma(2 * SHARE, 32), "ub2gm": _dma(SHARE, 16), "ub2ub": _dma(0, 0), "vec": {"Muls.b32": [16, SHARE // 256]},
         "in_bufs": 2, "out_bufs": 2}
    if distance is not None:
        b["reread"] = [[distance, SHARE]]
    return {"blockDim": cores, "blocks": [dict(b) for _ in range(cores)]}


LEAST = 2 * 48 * SHARE  # x and y once


def test_a_reread_within_the_l2_crosses_hbm_once_at_the_l2_rate():
    p = load_params("ascend910b1")
    plain = estimate(_two_pass(None), "ascend910b1", LEAST)
    near = estimate(_two_pass(2 * SHARE), "ascend910b1", LEAST)  # 2 MB x 48 cores = 96 MB <= 192 MB
    assert plain.gm_read_bytes == 48 * 2 * SHARE and plain.l2_bytes == 0
    assert near.gm_read_bytes == 48 * SHARE and near.l2_bytes == 48 * SHARE
    # MTE2: the first read at the core's HBM share, the re-read at L2 -> UB 137 GB/s
    hbm = min(p.gm_to_ub_core_gbps, p.gm_to_ub_all_gbps / 48) * 1e3
    latency = 32 * p.dma_latency_cycles / (p.clock_ghz * 1e3)
    assert near.cores[0].pipes_us["MTE2"] == pytest.approx(SHARE / hbm + SHARE / (p.l2_to_ub_core_gbps * 1e3) + latency)
    assert plain.ideal_fraction < 0.7 < near.ideal_fraction


def test_a_reread_farther_than_the_l2_gets_no_credit():
    """8 MB per core between the reads, 48 cores: 384 MB of traffic pass through the 192 MB L2 in between."""
    plain = estimate(_two_pass(None), "ascend910b1", LEAST)
    far = estimate(_two_pass(8 << 20), "ascend910b1", LEAST)
    assert far.l2_bytes == 0 and far.gm_read_bytes == plain.gm_read_bytes and far.kernel_us == plain.kernel_us
    # the same distance on 16 cores (128 MB in all) fits: the L2 is counted over all cores at once
    assert estimate(_two_pass(8 << 20, cores=16), "ascend910b1", LEAST).l2_bytes == 16 * SHARE
    # the 910B4's L2 is 96 MB: 2 MB x 48 = 96 MB still fits, 4 MB x 48 does not
    assert estimate(_two_pass(2 << 20), "ascend910b4", LEAST).l2_bytes == 48 * SHARE
    assert estimate(_two_pass(4 << 20), "ascend910b4", LEAST).l2_bytes == 0


def test_a_target_without_l2_never_credits_a_reread():
    assert load_params("ascend310p").l2_bytes == 0
    assert estimate(_two_pass(1024), "ascend310p", LEAST).l2_bytes == 0


def test_the_emulator_counts_rereads_by_reuse_distance():
    """tests/sim/kernels/reuse.cpp: 16 KB read, 4 KB read, 4 KB written, then [14 KB, 18 KB) read twice: 2 KB of it
    last read 24 KB of traffic before (bucket 32 KB), 2 KB 8 KB before, then all 4 KB again 4 KB later."""
    from npu_harness.sim.compiler import compile_program, run_program

    binary = compile_program([Path(__file__).resolve().parent / "sim" / "kernels" / "reuse.cpp"], defines={})
    res = run_program(binary, [])
    assert res.returncode == 0, res.stderr
    assert res.counters["blocks"][0]["reread"] == [[4096, 4096], [8192, 2048], [32768, 2048]]
    # two blocks reading the same bytes: the later reader's read is a re-read, at the distance between the two
    # blocks' clocks (0 for the bytes both read first thing; 8192 - 4096 for the second span)
    shared = run_program(binary, ["shared"])
    assert shared.returncode == 0, shared.stderr
    assert [b.get("reread") for b in shared.counters["blocks"]] == [None, [[1, 4096], [4096, 4096]]]


def test_hbm_bandwidth_is_shared_by_the_cores_still_moving_bytes():
    """Equal HBM demands keep the rule before: min(per core, aggregate / cores); a core with more HBM bytes (the
    first reader of bytes the others then find in L2) gets the bandwidth the others no longer use, capped per core."""
    from npu_harness.cost.model import _shared_gbps

    p = load_params("ascend910b1")
    core, agg = p.gm_to_ub_core_gbps, p.gm_to_ub_all_gbps
    assert _shared_gbps([1.0] * 48, core, agg) == pytest.approx([min(core, agg / 48)] * 48)
    rates = _shared_gbps([3.0] * 3 + [1.0] * 45, core, agg)
    assert rates[3:] == pytest.approx([agg / 48] * 45)  # done when the heavy ones are a third through
    assert rates[0] == pytest.approx(3 * agg / (45 + 9))  # then the heavy three share what is left
    assert _shared_gbps([1.0, 0.0], core, agg)[0] == pytest.approx(min(core, agg))  # an idle core takes no share


@pytest.mark.slow
def test_a_chunked_layer_norm_reads_x_weight_and_bias_from_hbm_once():
    """Rows of 65,536 floats (longer than UB) on 48 cores: a group of 24 cores per row, each reading its share of x
    for the statistics and right after for the normalising pass, and its share of weight and bias in step with the
    other row's group. Every re-read is within the L2's reach: HBM sees x, weight and bias once."""
    from ascend_dsl.dtypes import DType
    from npu_harness import gallery

    ex = next(e for e in gallery.discover() if (e.category, e.name) == ("normalization", "layer_norm"))
    r = gallery.validate(ex, {"T": DType.F32}, {"batch_size": 2, "dim": 65536})
    assert r.ok
    x, wb = 2 * 65536 * 4, 2 * 65536 * 4
    assert any(b.get("reread") for b in r.counters["blocks"])
    assert x + wb <= r.report.gm_read_bytes < 1.01 * (x + wb)
    assert r.report.l2_bytes >= x + wb // 2  # x's second read, and weight and bias for the second row's group
