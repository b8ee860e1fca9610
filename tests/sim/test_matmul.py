"""The emulated Matmul API (ascend_sim/matmul.h): MIX launches, fp32 accumulation against a host
reference (tails, transposes, bias, IterateAll), and one planted bug per check."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_harness.sim.compiler import compile_program, run_program
from npu_harness.sim.runner import sim_defines

SRC = Path(__file__).resolve().parent / "kernels" / "matmul.cpp"


@pytest.fixture(scope="module")
def binary() -> Path:
    return compile_program([SRC], defines=sim_defines("ascend910b1", "mix"))


def line_of(text: str) -> int:
    hits = [i for i, ln in enumerate(SRC.read_text().splitlines(), start=1) if text in ln]
    assert len(hits) == 1, (text, hits)
    return hits[0]


@pytest.mark.parametrize("variant", ["mix_ok", "iterate_all_ok"])
def test_matmul_matches_reference(binary, variant):
    res = run_program(binary, [variant], timeout=60)
    assert res.returncode == 0 and not res.errors, res.stdout + res.stderr
    blocks = res.counters["blocks"]
    assert res.counters["aiv_per_aic"] == 2 and len(blocks) == 2 * (2 if variant == "mix_ok" else 1)
    assert sum(b["cube_macs"] for b in blocks) > 0 and sum(b.get("gm2l1", 0) for b in blocks) > 0


def test_get_tensor_c_to_gm_sequential_writes_the_block_at_the_slot_start(binary):
    """enSequentialWrite to GM: each block at the start of the slot, rows baseN apart (the epilogue bands' slot); the
    kernel reads it back at that pitch, tails included, and matches the reference. Written at the block's place in C
    (pitch N, the old behaviour) the tail blocks would read stale rows."""
    res = run_program(binary, ["sequential_gm_ok"], timeout=60)
    assert res.returncode == 0 and not res.errors, res.stdout + res.stderr
    blocks = res.counters["blocks"]
    assert sum(b.get("l0c2gm", 0) for b in blocks) == 75 * 50 * 4
    # session 36 (the cost model's FIX pipe): one instruction per 32 x 32 base block (3 x 2), all with UnitFlag on (the
    # default template CFG_NORM)
    assert sum(b.get("l0c2gm_n", 0) for b in blocks) == 3 * 2
    assert sum(b.get("l0c2gm_unitflag", 0) for b in blocks) == 75 * 50 * 4


def test_sequential_get_tensor_c_into_a_short_slot_is_out_of_bounds(binary):
    res = run_program(binary, ["sequential_gm_small_slot"], timeout=60)
    assert res.returncode == 1, res.stdout + res.stderr
    assert {e.code for e in res.errors} == {"GM-OOB"}, res.stderr
    assert any(e.file == "matmul.cpp" and e.line == line_of("CHECK: slot") for e in res.errors), res.stderr


@pytest.mark.parametrize("variant", ["cleared_bias_ok", "disabled_bias_ok"])
def test_cleared_bias_is_not_added_although_the_tiling_enables_it(binary, variant):
    """ClearBias / DisableBias clear the bias flag that isBias = 1 set (CANN atlasascendc_api_07_0667 / 0636):
    no MATMUL-STATE error, and the result (compared in the kernel) has no bias."""
    res = run_program(binary, [variant], timeout=60)
    assert res.returncode == 0 and not res.errors, res.stdout + res.stderr


@pytest.mark.parametrize("variant,code,marker", [
    ("bad_fractal", "CUBE-TILING", "CHECK: tiling"),
    ("l0a_overflow", "L0A-OVERFLOW", "CHECK: tiling"),
    ("l0c_overflow", "L0C-OVERFLOW", "CHECK: tiling"),
    ("l1_overflow", "L1-OVERFLOW", "CHECK: tiling"),
    ("get_without_iterate", "MATMUL-STATE", "BUG: no Iterate before GetTensorC"),
    ("iterate_after_end", "MATMUL-STATE", "BUG: Iterate after End"),
    ("missing_a", "MATMUL-STATE", "BUG: missing SetTensorA / SetBias"),
    ("bias_not_set", "MATMUL-STATE", "BUG: missing SetTensorA / SetBias"),
])
def test_planted_matmul_bug_is_reported(binary, variant, code, marker):
    res = run_program(binary, [variant], timeout=60)
    assert res.returncode == 1, res.stdout + res.stderr
    assert {e.code for e in res.errors} == {code}, res.stderr
    assert any(e.file == "matmul.cpp" and e.line == line_of(marker) for e in res.errors), res.stderr


def test_mix_launch_is_limited_to_the_cube_core_count(tmp_path):
    src = tmp_path / "mix_dim.cpp"
    src.write_text('#include "kernel_operator.h"\nint main() {\n'
                   '    AscendC::SetKernelMode(AscendC::KernelMode::MIX_MODE);\n'
                   '    return AscendC::sim::Launch(25, [] {}) == 0 ? 0 : 1;\n}\n')
    res = run_program(compile_program([src], defines=sim_defines("ascend910b1", "mix")), [], timeout=30)
    assert [e.code for e in res.errors] == ["BLOCK-DIM"] and "[1, 24]" in res.errors[0].message


def _run_threads(binary, variant: str, threads: int):
    return run_program(binary, [variant], timeout=60, env={"ASCEND_SIM_THREADS": str(threads)})


def _same_counters(a: dict, b: dict) -> bool:
    drop = {"threads", "launch_us", "launch_cpu_us"}
    return {k: v for k, v in a.items() if k not in drop} == {k: v for k, v in b.items() if k not in drop}


@pytest.mark.parametrize("variant", ["mix_ok", "iterate_all_ok", "sequential_gm_small_slot", "bias_not_set", "atomic_unzeroed"])
def test_matmul_launch_runs_blocks_in_parallel_with_the_one_thread_result(binary, variant):
    """A kernel with a Matmul object runs its blocks on the worker threads (the counters' `threads`; it used to be
    one thread in block order), and its outputs (hashes printed by the kernel), reports and counters are those of
    the one-thread run."""
    one, three = _run_threads(binary, variant, 1), _run_threads(binary, variant, 3)
    assert one.counters["threads"] == 1 and three.counters["threads"] == 3
    assert one.returncode == three.returncode and one.stdout == three.stdout and one.stderr == three.stderr
    assert [(e.code, e.line, e.block, e.message) for e in one.errors] == [(e.code, e.line, e.block, e.message) for e in three.errors]
    assert _same_counters(one.counters, three.counters)


def test_matmul_atomic_adds_of_parallel_blocks_happen_in_block_order(binary):
    """IterateAll(enAtomic = 1) of three blocks into one float output: block 0 arrives late, yet with three threads its
    add still comes first (atomic_turn), so (1 + 1e8) - 1e8 = 0 as in block order; without the turn the other
    blocks add first and the kernel's check sees 1."""
    for threads in (1, 3):
        res = _run_threads(binary, "atomic_order_ok", threads)
        assert res.returncode == 0 and not res.errors, res.stdout + res.stderr
        assert res.counters["threads"] == threads


def test_matmul_atomic_add_into_an_unzeroed_output_is_reported(binary):
    res = _run_threads(binary, "atomic_unzeroed", 3)
    assert res.returncode == 1, res.stdout + res.stderr
    assert {e.code for e in res.errors} == {"ATOMIC-UNINIT"}, res.stderr
    assert any(e.line == line_of("BUG: accumulates into an output") and "IterateAll" in e.message for e in res.errors)


def test_async_iterate_all_result_after_the_wait_matches_and_is_counted_apart(binary):
    """IterateAll<false>(..., waitIterateAll = true) + WaitIterateAll: C (and a row copied back after the wait) match the
    reference; its cube work is counted as asynchronous (cube_macs_async, gm2l1_async) for the cost model."""
    res = run_program(binary, ["async_ok"], timeout=60)
    assert res.returncode == 0 and not res.errors, res.stdout + res.stderr
    blocks = res.counters["blocks"]
    assert sum(b.get("cube_macs_async", 0) for b in blocks) == sum(b["cube_macs"] for b in blocks) > 0
    assert sum(b.get("gm2l1_async", 0) for b in blocks) == sum(b.get("gm2l1", 0) for b in blocks) > 0


@pytest.mark.parametrize("variant,code,marker", [
    ("async_read_early", "MATMUL-ASYNC", "BUG: read before WaitIterateAll"),
    ("async_no_wait", "MATMUL-STATE", "BUG: End without WaitIterateAll"),
    ("async_wait_twice", "MATMUL-STATE", "BUG: a second wait"),
    ("async_cube_only", "MATMUL-STATE", "BUG: asynchronous outside a MIX kernel"),
])
def test_planted_async_matmul_bug_is_reported(binary, variant, code, marker):
    res = run_program(binary, [variant], timeout=60)
    assert res.returncode == 1, res.stdout + res.stderr
    assert code in {e.code for e in res.errors}, res.stderr
    assert any(e.code == code and e.file == "matmul.cpp" and e.line == line_of(marker) for e in res.errors), res.stderr
