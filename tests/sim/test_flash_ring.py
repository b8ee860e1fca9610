"""The AIC-driven causal flash attention, written by hand (tests/sim/kernels/flash_ring.cpp; issue 15 item 6, CATLASS
FAI's pipeline, ascendc_next.md §2.2 / §2.4): the AIC computes S = Q K^T into a ring of 3 GM slots per AIV, with one K
(then V) block load for both AIV of the AI Core, while the AIV do the online softmax; cross-core flags hand the slots
over. Checked against float64 attention (numpy) at an odd size and a medium one with every emulator check clean, on
keys whose scores grow block by block (the running max moves: m, l and O are rescaled), and each planted bug is
caught: a ring of 2 slots and a missing wait for the AIC's last P V are GM-RACE at the read; no diagonal mask and no
O rescale give wrong results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from npu_harness.sim.compiler import compile_program, run_program
from tests.sim.source_lines import line_in

SRC = Path(__file__).resolve().parent / "kernels" / "flash_ring.cpp"


@pytest.fixture(scope="module")
def binary() -> Path:
    return compile_program([SRC], defines={})


def inputs(d: Path, shape: tuple[int, int, int, int], grow: bool, seed: int = 0) -> tuple[np.ndarray, ...]:
    """q, k, v (f16) written to d; with `grow` the keys' norms grow along the sequence, so later key blocks hold larger
    scores than a row's running max (the rescale path)."""
    b, h, s, dd = shape
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal(shape) for _ in range(3))
    if grow:
        k = k * (1 + np.arange(s)[:, None] / 48) * 1.5
    q, k, v = (a.astype(np.float16) for a in (q, k, v))
    for name, a in zip("qkv", (q, k, v), strict=True):
        a.tofile(d / f"{name}.bin")
    return q, k, v


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """softmax(Q K^T / sqrt(D) + causal mask) V in float64."""
    s_len, d = q.shape[2], q.shape[3]
    qf, kf, vf = (a.astype(np.float64) for a in (q, k, v))
    s = qf @ kf.transpose(0, 1, 3, 2) / np.sqrt(d)
    s = np.where(np.tril(np.ones((s_len, s_len), bool)), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ vf


def run(binary: Path, d: Path, shape, cores: int, variant: str = "ok"):
    res = run_program(binary, [str(d), *map(str, shape), str(cores), variant], timeout=600)
    out = np.fromfile(d / "o.bin", dtype=np.float32).reshape(shape)
    return res, out


@pytest.mark.parametrize(("shape", "cores", "grow"), [
    ((1, 2, 300, 64), 2, False),    # odd length: a 44-row query pair, AIV 1 without rows; tail key blocks
    ((1, 2, 300, 64), 2, True),     # growing scores: the running max moves
    ((1, 4, 1000, 128), 3, False),  # medium, D = 128
])
def test_matches_float64_attention_and_is_clean(binary, tmp_path, shape, cores, grow):
    q, k, v = inputs(tmp_path, shape, grow)
    res, out = run(binary, tmp_path, shape, cores)
    assert res.returncode == 0 and res.errors == [], res.stdout + res.stderr
    np.testing.assert_allclose(out, reference(q, k, v), rtol=1e-2, atol=3e-3)
    blocks = res.counters["blocks"]
    assert [b.get("core") for b in blocks] == [None] * (2 * cores) + ["aic"] * cores
    aiv, aic = blocks[:2 * cores], blocks[2 * cores:]
    assert all(b["cube_macs"] == 0 for b in aiv) and all(b["cube_macs"] > 0 for b in aic)
    # K and V are loaded once per key block for both AIV: the AIC's input bytes are one walk of the pair's longer band
    # per task (K and V), not one per AIV; Q and P come from the workspace (ws_gm2ub)
    b_, h_, s_, d_ = shape
    walk = 0
    for p in range(-(-s_ // 256)):
        last = min(256 * (p + 1), s_)  # the pair's last row + 1: its key blocks cover keys [0, up128(last))
        walk += sum(min(128, s_ - n0) for n0 in range(0, last, 128))
    assert sum(b["gm2ub"]["bytes"] - b.get("ws_gm2ub", 0) for b in aic) == b_ * h_ * 2 * walk * d_ * 2
    assert all(b.get("ws_gm2ub", 0) > 0 and b.get("ws_l0c2gm", 0) == b["l0c2gm"] for b in aic)
    # a head's K / V blocks are read again by its other pairs' tasks: the Nd2Nz copies log them for the L2 credit
    assert sum(n for b in aic for _, n in b.get("reread", [])) > 0


def test_ring_of_two_slots_is_a_gm_race(binary, tmp_path):
    """FAI needs 3 slots: with 2 the AIC's S of step j + 2 overwrites the slot the AIV still reads for step j."""
    shape = (1, 2, 300, 64)
    inputs(tmp_path, shape, False)
    res, _ = run(binary, tmp_path, shape, 2, "ring2")
    assert res.returncode == 1 and {e.code for e in res.errors} == {"GM-RACE"}, res.stderr
    s_read = [e for e in res.errors if e.line == line_in(SRC, "READS THE S SLOT")]
    assert s_read and not s_read[0].aic and "Fixpipe" in s_read[0].message


def test_missing_wait_for_the_last_p_v_is_a_gm_race(binary, tmp_path):
    shape = (1, 2, 300, 64)
    inputs(tmp_path, shape, False)
    res, _ = run(binary, tmp_path, shape, 2, "no_o_wait")
    assert res.returncode == 1 and {e.code for e in res.errors} == {"GM-RACE"}, res.stderr
    assert {e.line for e in res.errors} == {line_in(SRC, "READS THE O SLOT")}, res.stderr


@pytest.mark.parametrize(("variant", "grow"), [("no_diag_mask", False), ("no_o_rescale", True)])
def test_planted_wrong_result(binary, tmp_path, variant, grow):
    """Bugs no check can see (the program is well-formed): the comparison with the reference catches them."""
    shape = (1, 2, 300, 64)
    q, k, v = inputs(tmp_path, shape, grow)
    res, out = run(binary, tmp_path, shape, 2, variant)
    assert res.returncode == 0 and res.errors == [], res.stderr
    assert np.abs(out - reference(q, k, v)).max() > 0.1
