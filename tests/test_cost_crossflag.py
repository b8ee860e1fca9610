"""Cost model of a MIX launch whose AIC ran as blocks of their own (cross-core flags, docs/cost_model.md "AIC-driven MIX
kernels"): each block, AIC or AIV, is its own chain of pipes; the AIC's cube work is its own (not summed with the next
AI Core's AIC, as grouping the block list by aiv_per_aic would do), and the kernel takes the slowest chain."""

from __future__ import annotations

import pytest

from npu_harness.cost import estimate, load_params
from tests.test_cost import block


def aic_block(macs: int) -> dict:
    b = block(0, 0, 1, vec={})
    b.update(core="aic", cube_macs=macs, cube_macs_useful=macs, cross_sets=2, cross_waits=1)
    return b


def aiv_block(nbytes: int) -> dict:
    b = block(nbytes, nbytes, 8)
    b.update(cross_sets=1, cross_waits=2)
    return b


def counters(aic_macs: list[int], aiv_bytes: int) -> dict:
    cores = len(aic_macs)
    blocks = [aiv_block(aiv_bytes) for _ in range(2 * cores)] + [aic_block(m) for m in aic_macs]
    return {"version": 1, "blockDim": 3 * cores, "aiv_per_aic": 2, "blocks": blocks}


def test_each_aic_is_timed_on_its_own_macs():
    p = load_params("ascend910b1")
    macs = [1 << 30, 1 << 28]
    est = estimate(counters(macs, 1 << 16), "ascend910b1")
    for k, m in enumerate(macs):
        aic = est.cores[4 + k]
        assert aic.pipes_us["M"] == pytest.approx(m / p.cube_macs_per_cycle / (p.clock_ghz * 1e3))
    assert all(c.pipes_us["M"] == 0 for c in est.cores[:4])  # the AIV issue no cube work here


@pytest.mark.parametrize("aiv_bytes", [1 << 12, 1 << 24])
def test_kernel_takes_the_slowest_chain(aiv_bytes):
    est = estimate(counters([1 << 30, 1 << 30], aiv_bytes), "ascend910b1")
    slowest = max(est.cores, key=lambda c: c.time_us)
    assert est.hbm_bound or est.kernel_us == pytest.approx(slowest.time_us)
    assert est.bottleneck == slowest.bottleneck or est.hbm_bound
    # a cube-bound AIC chain at 1 GMAC vs a light AIV chain: the AIC decides; a heavy AIV chain decides otherwise
    assert (slowest.block >= 4) == (aiv_bytes == 1 << 12)
