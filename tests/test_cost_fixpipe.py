"""The cube's L0C -> GM writes (Fixpipe) in the cost model (session 36, docs/cost_model.md "Fixpipe"): timed on the AIC's
FIX pipe at the target's `l0c_to_gm_core_gbps` (ascendc.md §5.3: 70 GB/s on 910B1) plus the DMA latency per instruction;
inside M when the kernel has one L0C buffer (Mmad and Fixpipe take turns), a pipe of its own when it alternates two; a
cross-core set on FIX happens once the Fixpipes before it are done (crossflow.py). Synthetic counters, closed forms."""

from __future__ import annotations

import tomllib

import pytest

from npu_harness.cost import estimate, load_params
from npu_harness.cost.model import TARGETS_DIR

MACS = 1 << 24           # 4096 cycles of fp16 cube work
FIX_BYTES = 1 << 20      # 1 MiB of f32 results
FIX_N = 16               # in 16 Fixpipes


def toml_rate(target: str) -> float:
    """The L0C -> GM figure as written in the target file (not through load_params)."""
    return float(tomllib.loads((TARGETS_DIR / f"{target}.toml").read_text())["bandwidth"]["l0c_to_gm_core_gbps"])


def cube_block(l0c2gm: int = FIX_BYTES, n: int = FIX_N, *, l0c_ids: int = 1, stages: int = 0, loads: int = 0,
               ws: int = 0) -> dict:
    """Counters of one low-level cube block: MACS of Mmad, `l0c2gm` bytes out of L0C in `n` Fixpipes, its "L0C free"
    hand-off (FIX_M) on `l0c_ids` event ids; `stages` > 0: an L1 / L0 ping-pong of that many stages with `loads` bytes
    of GM -> L1 copies (MTE2)."""
    b = {"gm2ub": {"bytes": 0, "transfers": 0, "bursts": 0, "hist": []}, "ub2gm": {"bytes": 0, "transfers": 0, "bursts": 0,
         "hist": []}, "ub2ub": {"bytes": 0, "transfers": 0, "bursts": 0, "hist": []}, "atomic_bytes": 0, "vec": {},
         "ub_get": 0, "ub_set": 0, "gm_get": 0, "gm_set": 0, "sync_all": 0, "cube_macs": MACS, "cube_macs_useful": MACS,
         "l0c2gm": l0c2gm, "l0c2gm_n": n, "flags": {"FIX_M": [n, l0c_ids], "M_FIX": [n, l0c_ids]}}
    if ws:
        b["ws_l0c2gm"] = ws
    if stages:
        b["gm2ub"] = {"bytes": loads, "transfers": stages, "bursts": stages, "hist": [[1 << 20, stages, loads]]}
        b["flags"].update(MTE2_MTE1=[stages, 2], MTE1_M=[stages, 2])
    return b


def launch(blocks: list[dict], **kw) -> dict:
    return {"version": 1, "blockDim": len(blocks), "blocks": blocks, **kw}


def fix_us(target: str, nbytes: int = FIX_BYTES, n: int = FIX_N, gbps: float | None = None) -> float:
    p = load_params(target)
    return nbytes / ((gbps or toml_rate(target)) * 1e3) + n * p.dma_latency_cycles / (p.clock_ghz * 1e3)


@pytest.mark.parametrize("target", ["ascend910b1", "ascend910b4"])
def test_fixpipe_is_timed_at_the_targets_l0c_to_gm_rate(target):
    """One L0C buffer: the block's M is its MACs then its Fixpipes, the bytes at the toml's figure (70 / 46.7 GB/s) plus
    the DMA latency per Fixpipe."""
    p = load_params(target)
    est = estimate(launch([cube_block()]), target)
    core = est.cores[0]
    macs_us = MACS / p.cube_macs_per_cycle / (p.clock_ghz * 1e3)
    assert "FIX" not in core.pipes_us
    assert core.fix_us == pytest.approx(fix_us(target))
    assert core.pipes_us["M"] == pytest.approx(macs_us + fix_us(target))
    assert est.kernel_us == pytest.approx(macs_us + fix_us(target))
    assert "Fixpipe" in est.text() and "in M" in est.text()


def test_more_fixpipe_bytes_take_longer():
    one = estimate(launch([cube_block(FIX_BYTES)]), "ascend910b1")
    two = estimate(launch([cube_block(2 * FIX_BYTES)]), "ascend910b1")
    assert two.kernel_us - one.kernel_us == pytest.approx(FIX_BYTES / (toml_rate("ascend910b1") * 1e3))
    more = estimate(launch([cube_block(FIX_BYTES, 4 * FIX_N)]), "ascend910b1")  # the same bytes in more instructions
    p = load_params("ascend910b1")
    assert more.kernel_us - one.kernel_us == pytest.approx(3 * FIX_N * p.dma_latency_cycles / (p.clock_ghz * 1e3))


def test_two_l0c_buffers_make_fix_a_pipe_of_its_own():
    """A ping-pong cube block (two L1 / L0 stages in flight): with two L0C buffers (FIX_M on two ids) Fixpipe drains one
    while Mmad fills the other, so FIX joins the overlap rule as a pipe; with one, Fixpipe follows its Mmad on M."""
    p = load_params("ascend910b1")
    stages, loads = 16, 1 << 20  # the Fixpipes (17.6 us) outweigh the copies (10.7): the L0C decides
    macs_us = MACS / p.cube_macs_per_cycle / (p.clock_ghz * 1e3)
    double = estimate(launch([cube_block(l0c_ids=2, stages=stages, loads=loads)]), "ascend910b1").cores[0]
    single = estimate(launch([cube_block(l0c_ids=1, stages=stages, loads=loads)]), "ascend910b1").cores[0]
    assert double.pipes_us["FIX"] == pytest.approx(fix_us("ascend910b1")) and double.pipes_us["M"] == pytest.approx(macs_us)
    assert "FIX" not in single.pipes_us and single.pipes_us["M"] == pytest.approx(macs_us + fix_us("ascend910b1"))
    for core in (double, single):
        pipes = [v for v in core.pipes_us.values() if v > 0]
        assert core.overlapped and core.iterations == stages
        assert core.time_us == pytest.approx(max(pipes) + (sum(pipes) - max(pipes)) / stages)
    assert double.time_us < single.time_us


def test_hbm_bound_fixpipes_share_the_aggregate_write_bandwidth():
    """24 AIC writing at once: bytes bound for HBM at min(70, aggregate / 24) GB/s each (1646.4 / 24 = 68.6), a workspace
    kept in L2 at the full 70 (ASSUMPTION: the same figure for an L2 destination)."""
    p = load_params("ascend910b1")
    share = min(toml_rate("ascend910b1"), p.ub_to_gm_all_gbps / 24)
    assert share < toml_rate("ascend910b1")
    hbm = estimate(launch([cube_block() for _ in range(24)]), "ascend910b1")
    ws = estimate(launch([cube_block(ws=FIX_BYTES) for _ in range(24)], workspace_bytes=24 * FIX_BYTES), "ascend910b1")
    assert hbm.cores[0].fix_us == pytest.approx(fix_us("ascend910b1", gbps=share))
    assert ws.cores[0].fix_us == pytest.approx(fix_us("ascend910b1"))


def test_matmul_api_result_writes_follow_the_macs_not_the_loads():
    """The Matmul API (counters without FIX_M flags: one L0C buffer assumed): its operand loads overlap the MACs, its
    result writes do not: M = max(MACs + Fixpipe, loads)."""
    p = load_params("ascend910b1")
    b = cube_block()
    del b["flags"]
    to_us = 1.0 / (p.clock_ghz * 1e3)
    macs_us = MACS / p.cube_macs_per_cycle * to_us
    for loads, expect in ((1 << 10, macs_us + fix_us("ascend910b1")), (64 << 20, (64 << 20) / (p.gm_to_l1_core_gbps * 1e3))):
        est = estimate(launch([dict(b, gm2l1=loads)]), "ascend910b1")
        assert est.cores[0].pipes_us["M"] == pytest.approx(expect)


def test_unitflag_overlaps_the_matmul_apis_writes_with_its_macs():
    """The Matmul API with UnitFlag on (CFG_NORM: counter l0c2gm_unitflag covers every byte): Mmad and Fixpipe hand L0C
    over 512 B at a time, so M = max(MACs, Fixpipe, loads); a block whose bytes are not all covered keeps them in turn."""
    p = load_params("ascend910b1")
    macs_us = MACS / p.cube_macs_per_cycle / (p.clock_ghz * 1e3)
    b = cube_block()
    del b["flags"]
    fix = fix_us("ascend910b1")
    assert fix > macs_us  # the writes outweigh the MACs here: M is the Fixpipes'
    unit = estimate(launch([dict(b, gm2l1=1 << 10, l0c2gm_unitflag=FIX_BYTES)]), "ascend910b1").cores[0]
    part = estimate(launch([dict(b, gm2l1=1 << 10, l0c2gm_unitflag=FIX_BYTES // 2)]), "ascend910b1").cores[0]
    assert unit.pipes_us["M"] == pytest.approx(fix) and "FIX" not in unit.pipes_us
    assert part.pipes_us["M"] == pytest.approx(macs_us + fix)


# ---- crossflow: a set on FIX waits for the Fixpipes before it ------------------------------------------------------------
R = 64  # the AIV's vector repeats after the wait


def ring(set_pipe: str, l0c_ids: int) -> dict:
    """One AIC (Mmad then Fixpipe, then a set on `set_pipe`) and one AIV that waits for it, then computes."""
    aic = cube_block(n=1, l0c_ids=l0c_ids)
    aic.update(core="aic", cross_sets=1, cross_waits=0, cross_tail={},
               cross_events=[{"ev": "set", "flag": 1, "pipe": set_pipe, "work": {"cube_macs": MACS, "l0c2gm": [FIX_BYTES, 1]}}])
    aiv = {"vec": {"Muls.b32": [1, R]}, "cross_sets": 0, "cross_waits": 1, "cross_tail": {"vec": {"Muls.b32": [1, R]}},
           "cross_events": [{"ev": "wait", "flag": 1, "after": [[1, 0]], "work": {}}]}
    return launch([aiv, aic], aiv_per_aic=2)


@pytest.mark.parametrize("l0c_ids", [1, 2])
@pytest.mark.parametrize("set_pipe", ["FIX", "M"])
def test_a_set_on_fix_follows_the_fixpipe(set_pipe, l0c_ids):
    """A set on FIX releases the AIV once the Fixpipe is done (before session 36: with the Mmad, the Fixpipe untimed). A
    set on M does so after the Mmad alone when L0C has two buffers (FIX is a pipe of its own), after both with one
    (the Fixpipe runs on M)."""
    p = load_params("ascend910b1")
    to_us = 1.0 / (p.clock_ghz * 1e3)
    macs_us = MACS / p.cube_macs_per_cycle * to_us
    est = estimate(ring(set_pipe, l0c_ids), "ascend910b1")
    aiv = est.cores[0]
    fix = fix_us("ascend910b1", n=1)
    set_at = macs_us if set_pipe == "M" and l0c_ids == 2 else macs_us + fix
    assert aiv.time_us == pytest.approx(set_at + p.cross_flag_latency_cycles * to_us + aiv.pipes_us["V"])
    assert est.cores[1].time_us == pytest.approx(macs_us + fix)
