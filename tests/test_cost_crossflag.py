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


# ---- the flags timed (session 34, npu_harness/cost/crossflow.py) ------------------------------------------------------
# One AI Core: AIV 0, AIV 1, the AIC (slot 2). Each of STEPS steps the AIC computes (X MACs) and sets flag 1 (mode 2: one
# count on each AIV); each AIV waits on flag 1, does R repeats of vector work and sets flag 2 (the AIC counts once both
# have). "lockstep": the AIC waits on flag 2 after each set (a ring of one slot), so each side idles while the other works.
STEPS, X, R = 8, 1 << 24, 3600
TO_US = 1.0 / (load_params("ascend910b1").clock_ghz * 1e3)


def flagged(lockstep: bool, events: bool = True) -> dict:
    aic = {"core": "aic", "vec": {}, "cube_macs": STEPS * X, "cube_macs_useful": STEPS * X, "cross_sets": STEPS,
           "cross_waits": STEPS if lockstep else 0}
    aivs = [{"vec": {"Muls.b32": [STEPS, STEPS * R]}, "cross_sets": STEPS, "cross_waits": STEPS} for _ in range(2)]
    if events:
        aic["cross_events"], aic["cross_tail"] = [], {}
        for k in range(STEPS):
            aic["cross_events"].append({"ev": "set", "flag": 1, "work": {"cube_macs": X}})
            if lockstep:
                aic["cross_events"].append({"ev": "wait", "flag": 2, "after": [[0, 2 * k + 1], [1, 2 * k + 1]], "work": {}})
        set_at = 2 if lockstep else 1  # the index of the AIC's k-th set: k * set_at
        for v in aivs:
            v["cross_events"] = []
            for k in range(STEPS):
                v["cross_events"].append({"ev": "wait", "flag": 1, "after": [[2, set_at * k]], "work": {}})
                v["cross_events"].append({"ev": "set", "flag": 2, "work": {"vec": {"Muls.b32": [1, R]}}})
            v["cross_tail"] = {}
    return {"version": 1, "blockDim": 3, "aiv_per_aic": 2, "blocks": [*aivs, aic]}


def step_times() -> tuple[float, float, float]:
    """(one cube step, one vector step, the flag latency) in us, by the model's own rules."""
    p = load_params("ascend910b1")
    cube = X / p.cube_macs_per_cycle * TO_US
    vec = (p.vec_head_cycles + (R - 1) * p.cycles_per_repeat("Muls.b32")) * TO_US
    return cube, vec, p.cross_flag_latency_cycles * TO_US


def test_pipelined_hand_off_costs_the_chain_plus_the_fill():
    """The AIC never waits: it ends after STEPS cube steps; each AIV's step k starts when set k lands, so it ends one
    vector step (and one flag latency) after the AIC's last set: max of the chains plus the pipeline's fill and drain."""
    cube, vec, lat = step_times()
    assert cube > vec
    est = estimate(flagged(lockstep=False), "ascend910b1")
    assert est.kernel_us == pytest.approx(STEPS * cube + lat + vec)
    assert est.cores[2].time_us == pytest.approx(STEPS * cube) and est.cores[2].stall_us == pytest.approx(0)
    old = estimate(flagged(lockstep=False, events=False), "ascend910b1")
    assert old.kernel_us == pytest.approx(STEPS * cube)  # the chains alone (the rule before session 34)


def test_lockstep_ring_costs_the_sum_of_the_chains():
    """A ring of one slot: each side waits for the other every step, so the launch takes STEPS x (cube + vector + two
    flag latencies), the SUM of the chains; the model before timed it as the slower chain alone."""
    cube, vec, lat = step_times()
    est = estimate(flagged(lockstep=True), "ascend910b1")
    assert est.kernel_us == pytest.approx(STEPS * (cube + vec + 2 * lat))
    assert est.cores[0].stall_us == pytest.approx(est.cores[0].time_us - STEPS * vec)
    old = estimate(flagged(lockstep=True, events=False), "ascend910b1")
    assert old.kernel_us == pytest.approx(STEPS * max(cube, vec))  # the planted stall the chains alone miss
    assert est.kernel_us > STEPS * (cube + vec) > 1.5 * old.kernel_us
    assert "waiting on cross-core flags" in est.text()


def test_a_wait_no_set_releases_is_refused():
    """A log whose wait names a set that never happened (the emulator reports such a launch as CROSS-DEADLOCK and logs
    no unwound wait): an error, not a time."""
    counters = flagged(lockstep=True)
    counters["blocks"][2]["cross_events"][1]["after"] = [[0, 99]]
    with pytest.raises(ValueError, match="CROSS-DEADLOCK"):
        estimate(counters, "ascend910b1")


def test_launch_without_flag_events_is_unchanged():
    """Counters without cross_events (every launch without the AIC as blocks): the model before, stall 0."""
    est = estimate(counters([1 << 30, 1 << 28], 1 << 16), "ascend910b1")
    assert all(c.stall_us == 0 for c in est.cores)
    assert est.kernel_us == pytest.approx(max(c.time_us for c in est.cores))


def test_syncall_waits_for_the_latest_arrival():
    """SyncAll in such a launch (logged as "sync" events of one group): every member leaves at the latest arrival."""
    p = load_params("ascend910b1")

    def vec_us(reps: int) -> float:
        return (p.vec_head_cycles + (reps - 1) * p.cycles_per_repeat("Muls.b32")) * TO_US

    before, after = (1000, 4000), 500
    aivs = [{"vec": {"Muls.b32": [2, r + after]}, "cross_events": [{"ev": "sync", "group": 2, "work": {"vec": {"Muls.b32": [1, r]}}}],
             "cross_tail": {"vec": {"Muls.b32": [1, after]}}} for r in before]
    aic = {"core": "aic", "vec": {}, "cube_macs": 0}
    est = estimate({"version": 1, "blockDim": 3, "aiv_per_aic": 2, "blocks": [*aivs, aic]}, "ascend910b1")
    assert [c.time_us for c in est.cores[:2]] == pytest.approx([vec_us(max(before)) + vec_us(after)] * 2)
    assert est.cores[0].stall_us == pytest.approx(vec_us(max(before)) - vec_us(min(before)))


# ---- per-pipe cursors (session 35): a wait holds up issue, it does not drain the pipes -----------------------------------
# One AI Core again. The AIC sets flag 1 (on FIX) after each of STEPS cube steps of XS MACs; each AIV, double-buffered,
# waits on flag 1, then loads (MTE2), computes (V) and stores (MTE3) one tile, one DMA instruction each way per step.
XS = 1 << 12
TILE = 1 << 16


def overlapped_ring(aiv_set_pipe: str | None = None, aic_waits: bool = False) -> dict:
    """The counters of that launch; `aiv_set_pipe`: each AIV also sets flag 2 on that pipe after each step (None: no
    such set); `aic_waits`: the AIC's tail waits for the AIV's last flag-2 set and then does one more cube step."""
    aic = {"core": "aic", "vec": {}, "cube_macs": (STEPS + aic_waits) * XS, "cube_macs_useful": (STEPS + aic_waits) * XS,
           "cross_events": [{"ev": "set", "flag": 1, "pipe": "FIX", "work": {"cube_macs": XS}} for _ in range(STEPS)],
           "cross_tail": {}}
    aivs = []
    for _ in range(2):
        v = block(STEPS * TILE, STEPS * TILE, STEPS, vec={"Muls.b32": [STEPS, STEPS * R]})
        v["cross_events"] = []
        for k in range(STEPS):
            step = {"gm2ub": [TILE, 1], "ub2gm": [TILE, 1], "vec": {"Muls.b32": [1, R]}}
            v["cross_events"].append({"ev": "wait", "flag": 1, "after": [[2, k]], "work": {} if k == 0 or aiv_set_pipe else step})
            if aiv_set_pipe:
                v["cross_events"].append({"ev": "set", "flag": 2, "pipe": aiv_set_pipe, "work": step})
        v["cross_tail"] = {} if aiv_set_pipe else step
        aivs.append(v)
    if aic_waits:
        last = 2 * STEPS - 1
        aic["cross_events"].append({"ev": "wait", "flag": 2, "after": [[0, last], [1, last]], "work": {}})
        aic["cross_tail"] = {"cube_macs": XS}
    return {"version": 1, "blockDim": 3, "aiv_per_aic": 2, "blocks": [*aivs, aic]}


def per_step(counters: dict) -> tuple[float, float, float, float]:
    """(MTE2, V, MTE3 of one AIV step, one cube step) in us, from the model's pipes without the flags."""
    c = {k: v for k, v in counters.items()}
    c["blocks"] = [{k: v for k, v in b.items() if k not in ("cross_events", "cross_tail")} for b in counters["blocks"]]
    aiv = estimate(c, "ascend910b1").cores[0].pipes_us
    return aiv["MTE2"] / STEPS, aiv["V"] / STEPS, aiv["MTE3"] / STEPS, XS / load_params("ascend910b1").cube_macs_per_cycle * TO_US


def test_steps_overlap_across_waits():
    """The AIV is the slower chain (V per step above the cube's step): its pipes keep working across the waits, which are
    released in time, so the launch costs the AIV's flow of STEPS steps after the first release (the fill): the first
    cube step and the flag latency, then MTE2 of the first step, every V step, MTE3 of the last. Draining the pipes at
    each wait (session 34) charged each step's MTE2 + V + MTE3 in turn."""
    counters = overlapped_ring()
    a, v, c, cube = per_step(counters)
    lat = step_times()[2]
    assert cube < a < v and c < v
    est = estimate(counters, "ascend910b1")
    assert est.cores[0].time_us == pytest.approx(cube + lat + a + STEPS * v + c)
    chain = est.cores[0].time_us - est.cores[0].stall_us
    assert chain == pytest.approx(a + STEPS * v + c)  # the AIV's chain without flags (overlap rule, STEPS iterations)
    assert est.kernel_us < 0.7 * STEPS * (a + v + c)  # session 34: STEPS x (a + v + c) and the fill


def test_wait_after_long_vector_work_does_not_repay_it():
    """An AIV that reaches its wait with the vector work of the steps before it still running (issued, not done) and
    whose set arrived long ago: the wait costs nothing, the block takes its chain without flags plus the fill."""
    counters = overlapped_ring()
    est = estimate(counters, "ascend910b1")
    a, v, c, cube = per_step(counters)
    # every wait after the first returns at once: the releasing sets (k + 1 cube steps) are long done
    assert est.cores[0].stall_us == pytest.approx(cube + step_times()[2])


@pytest.mark.parametrize("pipe", ["V", "MTE3", None])
def test_set_follows_the_work_of_its_pipe(pipe):
    """A set happens once the earlier work of the pipe it is issued on is done (ref_next §2.4), not all of the core's:
    the AIV's last set on V releases the AIC before the last MTE3 store; on MTE3 after it; a log without the pipe (before
    session 35) once every pipe is done."""
    counters = overlapped_ring(aiv_set_pipe=pipe or "MTE3", aic_waits=True)
    if pipe is None:
        for b in counters["blocks"][:2]:
            for e in b["cross_events"]:
                e.pop("pipe", None)
    a, v, c, cube = per_step(counters)
    lat = step_times()[2]
    est = estimate(counters, "ascend910b1")
    v_end = cube + lat + a + STEPS * v  # the AIV's last V step ends; its last MTE3 store c later
    set_at = v_end if pipe == "V" else v_end + c
    assert est.cores[2].time_us == pytest.approx(set_at + lat + cube)


# ---- the AIC's GM -> L1 copies (session 35) -------------------------------------------------------------------------------
def test_aic_copies_at_the_gm_to_l1_figures():
    """An AIC block's MTE2 copies (DataCopy GM -> L1, Nd2Nz rows of 256 B) are timed at ascendc.md §5.3's GM -> L1 (135
    GB/s per core) and, for the bytes L2 serves, L2 -> L1 (221), without the GM -> UB small-burst efficiency (an
    ASSUMPTION for GM -> UB; the Matmul API's operand loads on the same path get none), plus the DMA latency per copy."""
    p = load_params("ascend910b1")
    rows, copies, hits = 4096, 16, 1 << 18
    aic = block(rows * 256, 0, copies, vec={}, burst=256)
    aic.update(core="aic", cube_macs=0, reread=[[1 << 12, hits]])
    counters = {"version": 1, "blockDim": 3, "aiv_per_aic": 2, "blocks": [block(0, 0, 1, vec={}), block(0, 0, 1, vec={}), aic]}
    est = estimate(counters, "ascend910b1")
    lat = copies * p.dma_latency_cycles * TO_US
    want = (rows * 256 - hits) / (p.gm_to_l1_core_gbps * 1e3) + hits / (p.l2_to_l1_core_gbps * 1e3) + lat
    assert est.cores[2].pipes_us["MTE2"] == pytest.approx(want)
    # the same copies on an AIV (GM -> UB): 100.9 / 137 GB/s at the 256-B burst efficiency (0.7)
    on_aic = est.cores[2].pipes_us["MTE2"]
    del counters["blocks"][2]["core"]
    as_ub = estimate(counters, "ascend910b1").cores[2].pipes_us["MTE2"]
    assert as_ub == pytest.approx(((rows * 256 - hits) / p.gm_to_ub_core_gbps + hits / p.l2_to_ub_core_gbps) / 1e3 / 0.7 + lat)
    assert as_ub > 1.5 * on_aic
