"""Planted-bug tests of the newer emulator checks (L1/L0 budgets, REPEAT-RANGE, UB-UNINIT, GM-RACE,
SetAtomicAdd, SyncAll, HANG) and of the per-block counters."""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from npu_harness.sim.compiler import RunResult, compile_program, run_program

KERNELS = Path(__file__).resolve().parent / "kernels"
SRC = KERNELS / "checks2.cpp"


@pytest.fixture(scope="module")
def checks2() -> dict[str, Path]:
    builds = {"default": {}}
    with ThreadPoolExecutor(max_workers=2) as pool:
        futs = {k: pool.submit(compile_program, [SRC], defines=d) for k, d in builds.items()}
        return {k: f.result() for k, f in futs.items()}


def run(binaries: dict[str, Path], variant: str, build: str = "default", timeout: float = 30, **env: str) -> RunResult:
    return run_program(binaries[build], [variant], timeout=timeout, env=env)


def line_of(text: str) -> int:
    hits = [i for i, ln in enumerate(SRC.read_text().splitlines(), start=1) if text in ln]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def assert_only(res: RunResult, code: str, line: int | None = None) -> None:
    assert not res.timed_out, res.stderr
    assert res.returncode == 1, res.stdout + res.stderr
    assert {e.code for e in res.errors} == {code}, res.stderr
    if line is not None:
        assert any(e.file == "checks2.cpp" and e.line == line for e in res.errors), res.stderr


def assert_clean(res: RunResult) -> None:
    assert res.returncode == 0 and res.errors == [], res.stdout + res.stderr


def test_l1_overflow(checks2):
    res = run(checks2, "l1_overflow")
    assert_only(res, "L1-OVERFLOW", line_of("BUG: 600 KB of L1"))
    assert "524288 B L1" in res.errors[0].message


def test_l0c_overflow(checks2):
    assert_only(run(checks2, "l0_overflow"), "L0C-OVERFLOW", line_of("BUG: L0C is 128 KB"))


def test_cube_budgets_are_separate(checks2):
    assert_clean(run(checks2, "cube_budgets_ok"))


def test_level0_forms_compute(checks2):
    assert_clean(run(checks2, "level0_ok"))


@pytest.mark.parametrize("variant,marker", [("repeat_range", "BUG: repeatTime > 255"),
                                            ("dup_repeat_range", "BUG: repeatTime = 256")])
def test_repeat_range(checks2, variant, marker):
    res = run(checks2, variant)
    assert_only(res, "REPEAT-RANGE", line_of(marker))
    assert "wrap" in res.errors[0].message


def test_uninit_in_reused_arena(checks2):
    # every odd block reads a UB element it never wrote, in bytes an earlier block on its thread may have defined
    res = run(checks2, "uninit_reused_arena")
    assert_only(res, "UB-UNINIT", line_of("BUG: never written by this block"))
    assert len(res.errors) == 1 and res.errors[0].suppressed == 7, res.stderr  # one per odd block


def test_uninit_copy_to_gm(checks2):
    res = run(checks2, "uninit_copy")
    assert_only(res, "UB-UNINIT", line_of("BUG: 24 of them never written"))
    assert "byte 160" in res.errors[0].message  # element 40: the first never-written one


def test_uninit_scalar_read(checks2):
    assert_only(run(checks2, "uninit_getvalue"), "UB-UNINIT", line_of("x.GetValue(50)"))


def test_uninit_compare_roundup_is_not_reported(checks2):
    # Compare over a whole repeat reads unwritten elements; their mask bits are never used.
    assert_clean(run(checks2, "uninit_compare_ok"))


def test_uninit_select_on_undefined_mask_bits(checks2):
    assert_only(run(checks2, "uninit_select"), "UB-UNINIT", line_of("DataCopy(go, y, 48);"))


def test_uninit_overwritten_is_clean(checks2):
    assert_clean(run(checks2, "uninit_overwritten_ok"))


def test_short_chunk_reduction_is_exact(checks2):
    assert_clean(run(checks2, "pad_exact_ok"))


@pytest.mark.parametrize("variant", ["pad_block_reduce", "pad_stale_reduce"])
def test_padding_entering_a_reduction_is_reported(checks2, variant):
    # DataCopyPad's padding, and a queue buffer's data from the previous tile, are garbage to a reduction.
    assert_only(run(checks2, variant), "UB-UNINIT", line_of("got = out.GetValue(0);"))


def test_gm_race(checks2):
    res = run(checks2, "gm_race")
    assert_only(res, "GM-RACE")
    first = res.errors[0]
    assert first.block == 1 and "block 0" in first.message
    assert res.error_count == 3  # blocks 1, 2, 3 each overlap their predecessor


def test_disjoint_gm_writes_are_clean(checks2):
    assert_clean(run(checks2, "gm_disjoint"))


def test_atomic_add_is_exempt_and_deterministic(checks2):
    a, b = run(checks2, "atomic_ok"), run(checks2, "atomic_ok")
    assert_clean(a)
    assert a.stdout == b.stdout and "atomic sum=" in a.stdout
    assert a.counters["blocks"][0]["atomic_bytes"] == 256


def test_syncall_phases(checks2):
    res = run(checks2, "syncall_ok")
    assert_clean(res)  # the post-barrier overwrite of another block's slot is not a race
    assert all(b["sync_all"] == 2 for b in res.counters["blocks"])


def test_syncall_deadlock_reports_hang(checks2):
    t0 = time.monotonic()
    res = run(checks2, "syncall_hang")
    assert time.monotonic() - t0 < 10
    assert_only(res, "HANG", line_of("return;  // BUG: block 2 never reaches the barrier") + 1)
    assert "block(s) 2 ended" in res.errors[0].message


def test_endless_loop_reports_time_limit(checks2):
    # a launch past the emulator's time limit is reported as such (it may be slow, not hung), not as HANG
    t0 = time.monotonic()
    res = run(checks2, "spin", timeout=20, ASCEND_SIM_TIME_LIMIT="1")
    assert time.monotonic() - t0 < 10
    assert res.returncode == 1 and not res.timed_out
    assert [e.code for e in res.errors] == ["TIME-LIMIT"], res.stderr
    assert "time limit of 1 s" in res.errors[0].message


def test_counters_of_add_kernel():
    binary = compile_program([KERNELS / "add_kernel.cpp"], defines={})
    n, blocks, tile = 16384, 4, 512
    res = run_program(binary, [str(n), str(blocks), str(tile)])
    assert res.returncode == 0, res.stderr
    c = res.counters
    assert c["blockDim"] == blocks and len(c["blocks"]) == blocks
    per = n // blocks
    for b in c["blocks"]:
        assert b["gm2ub"]["bytes"] == 2 * per * 4 and b["ub2gm"]["bytes"] == per * 4
        assert b["gm2ub"]["transfers"] == 2 * per // tile and b["ub2gm"]["transfers"] == per // tile
        # one burst size: 512 floats = 2048 B -> bucket (1024, 2048]
        assert b["gm2ub"]["hist"] == [[2048, 2 * per // tile, 2 * per * 4]]
        instr, reps = b["vec"]["Add.b32"]
        assert instr == per // tile and reps == per * 4 // 256
        assert b["in_bufs"] == 2 and b["out_bufs"] == 2
    assert "sim-counters" not in res.stderr
    assert re.search(r"sim: 4 blocks, 0 errors", res.stderr)
