"""The cost model's headline percentage is against the ideal for the problem: the least GM traffic
(every tensor once), the useful (unpadded) cube MACs at the cube's peak for their dtype; the old figure
stays as the efficiency of the traffic the kernel does (npu_harness/cost/model.py)."""

from __future__ import annotations

import copy

from npu_harness.cost import estimate


def _dma(nbytes: int, transfers: int) -> dict:
    return {"bytes": nbytes, "transfers": transfers, "bursts": transfers, "hist": [[65536, transfers, nbytes]]}


def _memory_bound(read_x: int) -> dict:
    """48 blocks of a 64 MiB element-wise kernel whose input is read `read_x` times."""
    per = (64 << 20) // 48
    b = {"gm2ub": _dma(per * read_x, 16 * read_x), "ub2gm": _dma(per, 16), "ub2ub": _dma(0, 0), "vec": {"Muls.b32": [16, per // 256]},
         "in_bufs": 2, "out_bufs": 2}
    return {"blockDim": 48, "blocks": [copy.deepcopy(b) for _ in range(48)]}


def test_rereading_lowers_the_headline_not_the_traffic_efficiency():
    least = 2 * (64 << 20)  # input + output once
    once = estimate(_memory_bound(1), "ascend910b1", least)
    thrice = estimate(_memory_bound(3), "ascend910b1", least)
    assert once.ideal_kind == "memory" and once.ideal_fraction > 0.9
    assert thrice.roofline_fraction > 0.9  # efficient with the traffic it does ...
    assert thrice.ideal_fraction < 0.55    # ... but it moves twice the least traffic
    assert "ideal for the problem" in thrice.summary() and "efficiency of the traffic it does" in thrice.summary()


def test_without_the_least_traffic_the_traffic_moved_is_used():
    e = estimate(_memory_bound(3), "ascend910b1")
    assert e.min_gm_bytes == 0 and abs(e.ideal_fraction - e.roofline_fraction) < 1e-9


def _cube(macs: int, useful: int, f32: bool) -> dict:
    b = {"gm2ub": _dma(0, 0), "ub2gm": _dma(0, 0), "ub2ub": _dma(0, 0), "vec": {}, "cube_macs": macs, "cube_macs_useful": useful,
         "gm2l1": 1 << 20, "l0c2gm": 1 << 18}
    if f32:
        b.update(cube_macs_f32=macs, cube_macs_useful_f32=useful)
    return {"blockDim": 2, "aiv_per_aic": 2, "blocks": [dict(b), dict(b)]}


def test_padded_macs_and_fp32_rate():
    n = 1 << 30
    exact = estimate(_cube(n, n, False), "ascend910b1")
    padded = estimate(_cube(4 * n, n, False), "ascend910b1")  # 4x the MACs issued for the same useful work
    assert exact.ideal_kind == "cube" and padded.ideal_fraction < 0.3 * exact.ideal_fraction
    fp32 = estimate(_cube(n, n, True), "ascend910b1")
    assert fp32.kernel_us > 3.5 * exact.kernel_us  # the cube runs fp32 at 1/4 of the f16 rate


def test_the_least_traffic_counts_every_tensor_at_the_kernels_dtype():
    """An f16 kernel's least traffic is 2 bytes per element of each tensor, although the reference output is
    computed (and held) in f32: counted at f32 width, relu f16's headline was 1.5x too generous."""
    from ascend_dsl.dtypes import DType
    from npu_harness import gallery

    relu = next(e for e in gallery.discover() if (e.category, e.name) == ("activation", "relu"))
    r = gallery.validate(relu, {"T": DType.F16}, {"batch_size": 4, "dim": 1000})
    assert r.ok and r.shapes["N"] == 4000
    assert r.report.min_gm_bytes == 2 * 4000 * 2  # x and y, 2 bytes each


def test_the_problems_macs_replace_the_counters_cube_term():
    """A conv lowering may compute columns no output needs (the sparse gather: 16 columns per pixel); the counters
    call them useful, the problem's MAC count (npu_harness/problem_macs.py) does not."""
    n = 1 << 30
    counters = _cube(n, n, False)
    own = estimate(counters, "ascend910b1")
    problem = estimate(counters, "ascend910b1", problem_macs=(2 * n // 16, False))  # 2 blocks of n MACs, 1/16 useful
    assert own.kernel_us == problem.kernel_us
    assert abs(problem.cube_ideal_us * 16 - own.cube_ideal_us) < 1e-6 * own.cube_ideal_us
    assert problem.ideal_fraction < own.ideal_fraction / 4  # the headline drops with it (to the memory term here)
    fp32 = estimate(counters, "ascend910b1", problem_macs=(2 * n // 16, True))
    assert abs(fp32.cube_ideal_us - 4 * problem.cube_ideal_us) < 1e-6 * fp32.cube_ideal_us  # fp32 at 1/4 of the rate
