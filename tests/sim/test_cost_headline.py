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


def _mix_group(vec_repeats: int, macs: int) -> dict:
    """One AIC group: two AIV, each with `macs` cube MACs (no L1 traffic to speak of) and a serial vector part."""
    b = {"gm2ub": _dma(0, 0), "ub2gm": _dma(0, 0), "ub2ub": _dma(0, 0), "vec": {"Muls.b32": [1, vec_repeats]},
         "cube_macs": macs, "cube_macs_useful": macs, "gm2l1": 0}
    return {"blockDim": 2, "aiv_per_aic": 2, "blocks": [dict(b), dict(b)]}


def test_a_mix_core_overlaps_its_vector_work_with_the_aics_work_for_the_other_aiv():
    """Separated mode (ascendc.md §3, ascendc_next.md §2.1): the AIC serves both AIV of its group while each AIV runs
    its own vector work, so an AIV's time is max(the AIC's time for the group, its own cube share + its own pipes),
    not their sum (which charged each AIV the other AIV's cube work on top of its own vector work)."""
    cyc_us = 1 / 1850  # 910B1: 1.85 GHz
    macs = 4096 * 10000  # 10,000 cube cycles per AIV, 20,000 for the group
    vector_bound = estimate(_mix_group(30000, macs), "ascend910b1")  # own chain 10,000 + ~30,000 cycles > 20,000
    core = vector_bound.cores[0]
    assert abs(core.pipes_us["M"] - 20000 * cyc_us) < 1e-6  # the AIC's busy time for the group is still reported
    assert abs(core.time_us - (10000 * cyc_us + core.pipes_us["V"])) < 1e-6 and core.bottleneck == "V"
    cube_bound = estimate(_mix_group(2000, macs), "ascend910b1")  # own chain 12,000 cycles < the group's 20,000
    assert abs(cube_bound.cores[0].time_us - 20000 * cyc_us) < 1e-6 and cube_bound.bottleneck == "M"
    # one AIV alone in its group waits for all of the AIC's work: its own
    alone = _mix_group(30000, macs)
    alone["blocks"] = alone["blocks"][:1]
    assert abs(estimate(alone, "ascend910b1").cores[0].time_us - core.time_us) < 1e-6



def test_asynchronous_cube_work_overlaps_the_aivs_own_pipes():
    """IterateAll<false> (counters cube_macs_async / gm2l1_async) returns at once: the AIV's own pipes overlap that cube
    work, so its chain is max(its own cube work, its pipes with only the synchronous share of M), never less than
    either; counters without the async share are timed as before."""
    cyc_us = 1 / 1850
    macs = 4096 * 10000  # 10,000 cube cycles per AIV
    sync = estimate(_mix_group(30000, macs), "ascend910b1").cores[0]
    async_all = _mix_group(30000, macs)
    for b in async_all["blocks"]:
        b["cube_macs_async"] = macs
    overlapped = estimate(async_all, "ascend910b1").cores[0]
    assert abs(overlapped.time_us - (sync.time_us - 10000 * cyc_us)) < 1e-6 and overlapped.bottleneck == "V"
    half = _mix_group(30000, macs)
    for b in half["blocks"]:
        b["cube_macs_async"] = macs // 2
    assert abs(estimate(half, "ascend910b1").cores[0].time_us - (sync.time_us - 5000 * cyc_us)) < 1e-6
    # little vector work: the AIV still waits for its own cube work, and the AIC for the group's
    short = _mix_group(2000, macs)
    for b in short["blocks"]:
        b["cube_macs_async"] = macs
    short["blocks"] = short["blocks"][:1]
    core = estimate(short, "ascend910b1").cores[0]
    assert abs(core.time_us - 10000 * cyc_us) < 1e-6 and core.bottleneck == "M"

def _workspace_round_trip(workspace_bytes: int) -> dict:
    """Two AIV of one group: each writes 64 MiB to the launch's workspace (UB -> GM) and has the cube read them back
    (plus 64 MiB of its own operands from HBM)."""
    ws = 64 << 20
    b = {"gm2ub": _dma(0, 0), "ub2gm": _dma(ws, 2048), "ub2ub": _dma(0, 0), "vec": {}, "cube_macs": 4096, "cube_macs_useful": 4096,
         "gm2l1": 2 * ws, "ws_gm2l1": ws, "ws_ub2gm": ws}
    return {"blockDim": 2, "aiv_per_aic": 2, "workspace_bytes": workspace_bytes, "blocks": [dict(b), dict(b)]}


def test_a_workspace_that_fits_l2_is_l2_traffic():
    """The AIC and AIV hand data over through GM (L2) (ascendc_next.md §2.1); a launch whose workspace tensors fit the
    L2 (192 MB on 910B1, ascendc.md §5.2) reads and writes them at the L2 figures (§5.3: L2->L1 221, UB->L2 93 GB/s
    per core) and crosses HBM with them once (the write-back), not at every access. A workspace larger than L2 stays
    HBM traffic, as does everything without a workspace."""
    fits = estimate(_workspace_round_trip(1 << 20), "ascend910b1")
    too_big = estimate(_workspace_round_trip(300 << 20), "ascend910b1")
    no_counters = _workspace_round_trip(1 << 20)
    for b in no_counters["blocks"]:
        del b["ws_gm2l1"], b["ws_ub2gm"]
    plain = estimate(no_counters, "ascend910b1")
    assert too_big.l2_bytes == 0 and plain.l2_bytes == 0 and fits.l2_bytes == 4 * (64 << 20)
    assert too_big.gm_read_bytes == plain.gm_read_bytes == 4 * (64 << 20)
    assert fits.gm_read_bytes == 2 * (64 << 20) and fits.gm_write_bytes == 1 << 20  # the operands; the write-back
    mb = 64 << 20
    hbm_share = min(135, 1620 / 1) * 1e3  # one AIC active: GM -> L1 at its single-core figure
    assert abs(fits.cores[0].pipes_us["M"] - (2 * mb / hbm_share + 2 * mb / 221e3)) < 1e-3
    # UB -> L2 (93 GB/s per core) is slower than two cores' share of UB -> GM (188): never charged more than that
    assert abs(fits.cores[0].pipes_us["MTE3"] - plain.cores[0].pipes_us["MTE3"]) < 1e-9
    assert fits.kernel_us < 0.85 * plain.kernel_us and abs(too_big.kernel_us - plain.kernel_us) < 1e-9
    crowded = _workspace_round_trip(1 << 20)
    crowded["blocks"] = [dict(crowded["blocks"][0]) for _ in range(48)]  # 48 AIV: UB -> GM share 1646.4 / 48 = 34.3 GB/s
    e = estimate(crowded, "ascend910b1")
    assert abs(e.cores[0].pipes_us["MTE3"] - (mb / 93e3 + 2048 * 300 / 1850)) < 1e-3  # 2048 transfers' latency too


def test_a_rewritten_workspace_slot_occupies_l2_once():
    """The L2 rule for cube operand re-reads asks whether the operands and what the launch writes fit L2 together. A
    workspace that fits L2 takes its own size there, however often it is rewritten: the epilogue bands
    (lowering/passes/epilogue_bands.py) hand every block over through a per-core slot, 128 MiB written into 6 MiB.
    Counted as 128 MiB more output, the same launch would lose its L2 hits (a planted model without the rule)."""
    mib = 1 << 20
    b = {"gm2ub": _dma(64 * mib, 512), "ub2gm": _dma(32 * mib, 512), "ub2ub": _dma(0, 0), "vec": {}, "cube_macs": 1 << 30,
         "cube_macs_useful": 1 << 30, "gm2l1": 512 * mib, "l0c2gm": 64 * mib, "ws_l0c2gm": 64 * mib, "ws_gm2ub": 64 * mib}
    counters = {"blockDim": 2, "aiv_per_aic": 2, "workspace_bytes": 6 * mib, "cube_operand_bytes": 64 * mib,
                "blocks": [dict(b), dict(b)]}
    slot = estimate(counters, "ascend910b1")
    as_output = copy.deepcopy(counters)
    for blk in as_output["blocks"]:
        del blk["ws_l0c2gm"], blk["ws_gm2ub"]
    as_output["workspace_bytes"] = 0
    bulk = estimate(as_output, "ascend910b1")
    # operands 64 MiB + the output 64 MiB + the slot's writes 128 MiB > 192 MiB; with the slot's 6 MiB instead it fits:
    # the operand loads past the first (1024 - 64 MiB) come from L2
    assert slot.l2_bytes >= (1024 - 64) * mib and bulk.l2_bytes == 0
    assert slot.cores[0].pipes_us["M"] < 0.7 * bulk.cores[0].pipes_us["M"]


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
