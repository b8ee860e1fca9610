"""The cost model's time of an AIC-driven MIX launch from the emulator's flag log (impl/crosstime_rt.h ->
npu_harness/cost/crossflow.py; docs/cost_model.md "AIC-driven MIX kernels"). The FAI-style ping-pong of
tests/sim/kernels/crossflag.cpp with its 2-step lead and 3 slots costs about its slower chain (plus the pipeline's fill
and drain); the same kernel in lock-step on a ring of one slot (fai_lockstep: each side waits for the other every step)
costs about the SUM of its chains, a stall the model before session 34 (the slowest chain) did not see. A deadlock stays
CROSS-DEADLOCK."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from npu_harness.cost import estimate
from tests.sim.test_crossflag import CORES, N2, STEPS, M, N, binary, fai_reference, run  # noqa: F401 (binary: fixture)

TARGET = "ascend910b1"


def without_log(counters: dict) -> dict:
    """The same counters without the flag log: the model before session 34 (each block its own chain)."""
    c = copy.deepcopy(counters)
    for b in c["blocks"]:
        b.pop("cross_events", None)
        b.pop("cross_tail", None)
    return c


def chains(counters: dict) -> tuple[float, float]:
    """(the slowest AIC chain, the slowest AIV chain) in us, without the flags."""
    est = estimate(without_log(counters), TARGET)
    aic = [c.time_us for c, b in zip(est.cores, counters["blocks"], strict=True) if b.get("core") == "aic"]
    aiv = [c.time_us for c, b in zip(est.cores, counters["blocks"], strict=True) if b.get("core") != "aic"]
    return max(aic), max(aiv)


@pytest.fixture(scope="module")
def ring3(binary):  # noqa: F811
    res = run(binary, "fai_ring3")
    assert res.returncode == 0 and res.errors == [], res.stderr
    return res.counters


@pytest.fixture(scope="module")
def lockstep(binary, tmp_path_factory):  # noqa: F811
    out = tmp_path_factory.mktemp("lockstep")
    res = run(binary, "fai_lockstep", str(out))
    assert res.returncode == 0 and res.errors == [], res.stderr  # one slot, no lead: race-free, only slow
    got = np.fromfile(out / "out.bin", dtype=np.float32).reshape(CORES, M, N2)
    np.testing.assert_allclose(got, fai_reference(out), rtol=1e-6, atol=1e-3)
    return res.counters


def test_log_names_the_releasing_sets(ring3):
    """Every block logs one event per set (with its pipe) and wait; each wait names set events of the same flag on the other core type
    of its AI Core (mode 2: an AIV's wait one AIC set, the AIC's wait both AIV's sets)."""
    blocks = ring3["blocks"]
    for i, b in enumerate(blocks):
        events = b["cross_events"]
        assert len(events) == b["cross_sets"] + b["cross_waits"]
        for e in events:
            if e["ev"] == "set":  # the pipe the set was issued on (session 35: the cost model's set time)
                assert e["pipe"] == ("FIX" if b.get("core") == "aic" else "MTE3")
            if e["ev"] != "wait":
                continue
            assert len(e["after"]) == (2 if b.get("core") == "aic" else 1)
            for src, k in e["after"]:
                s = blocks[src]["cross_events"][k]
                assert s["ev"] == "set" and s["flag"] == e["flag"]
                assert (blocks[src].get("core") == "aic") != (b.get("core") == "aic")
                assert (src >= 2 * CORES and src - 2 * CORES == i // 2) or (i >= 2 * CORES and src // 2 == i - 2 * CORES)
    # the work logged adds up to the block's counters: the cube's MACs and the DMA bytes
    for b in blocks:
        works = [e["work"] for e in b["cross_events"]] + [b["cross_tail"]]
        assert sum(w.get("cube_macs", 0) for w in works) == b["cube_macs"]
        assert sum(w.get("gm2ub", (0, 0))[0] for w in works) == b["gm2ub"]["bytes"]
        assert sum(w.get("ub2gm", (0, 0))[0] for w in works) == b["ub2gm"]["bytes"]


def test_fixpipes_are_counted_and_logged(ring3):
    """Each AIC's Fixpipes (per step S = A B1 and O = P B2, float) are counted with their instructions (l0c2gm_n, the
    FIX pipe's DMA latency in the cost model) and the flag log's stretches carry them, summing to the block's counts;
    the AIV write none."""
    for b in ring3["blocks"]:
        if b.get("core") != "aic":
            assert not b.get("l0c2gm") and not b.get("l0c2gm_n")
            continue
        assert b["l0c2gm_n"] == 2 * STEPS and b["l0c2gm"] == STEPS * M * (N + N2) * 4
        logged = [e["work"].get("l0c2gm", [0, 0]) for e in b["cross_events"]] + [b["cross_tail"].get("l0c2gm", [0, 0])]
        assert [sum(x[0] for x in logged), sum(x[1] for x in logged)] == [b["l0c2gm"], b["l0c2gm_n"]]


def test_log_of_syncall_and_mode_1(binary):  # noqa: F811
    """A SyncAll<true> among the AIV is one "sync" group in both AIV's logs; a mode-1 wait names both AIV's sets."""
    res = run(binary, "syncall_reserved_ok")
    assert res.returncode == 0, res.stderr
    aivs = [b for b in res.counters["blocks"] if b.get("core") != "aic"]
    syncs = [[e["group"] for e in b["cross_events"] if e["ev"] == "sync"] for b in aivs]
    assert len(syncs[0]) == 1 and all(s == syncs[0] for s in syncs)
    waits = [e for b in aivs for e in b["cross_events"] if e["ev"] == "wait"]
    assert waits and all(sorted(src for src, _ in e["after"]) == [0, 1] for e in waits)
    estimate(res.counters, TARGET)


def test_ring_with_a_lead_costs_about_the_slower_chain(ring3):
    aic, aiv = chains(ring3)
    est = estimate(ring3, TARGET)
    before = estimate(without_log(ring3), TARGET)
    assert before.kernel_us == pytest.approx(max(aic, aiv))
    # the fill (the first softmax waits for the first QK) and the drain (the last PV for the last softmax): well under
    # the other chain, over 5 steps
    assert max(aic, aiv) <= est.kernel_us < max(aic, aiv) + 0.3 * min(aic, aiv)


def test_lockstep_ring_costs_about_the_sum_of_the_chains(lockstep, ring3):
    """The planted stall: the model before gave fai_lockstep the same time as fai_ring3 (its slowest chain)."""
    aic, aiv = chains(lockstep)
    est = estimate(lockstep, TARGET)
    before = estimate(without_log(lockstep), TARGET)
    assert before.kernel_us == pytest.approx(max(aic, aiv))
    assert 0.9 * (aic + aiv) < est.kernel_us <= aic + aiv + 1.0
    assert est.kernel_us > 1.4 * estimate(ring3, TARGET).kernel_us
    assert max(c.stall_us for c in est.cores) > 0.5 * min(aic, aiv)


def test_deadlock_stays_an_error(binary):  # noqa: F811
    res = run(binary, "deadlock")
    assert res.returncode == 1 and [e.code for e in res.errors] == ["CROSS-DEADLOCK"], res.stderr
    # the unwound wait is not logged: the log stays consistent and the model reads it (the run is an error anyway)
    assert any(b.get("cross_events") for b in res.counters["blocks"])
    assert not any(e["ev"] == "wait" for b in res.counters["blocks"] for e in b.get("cross_events", []))
    estimate(res.counters, TARGET)
