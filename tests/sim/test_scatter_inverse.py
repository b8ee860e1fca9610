"""The session-36 prototype of index_copy / index_add with one shared index on the vector unit
(tests/sim/kernels/scatter_inverse.cpp; benchmarks/scatter_inverse_estimate.py charges it): the program compares
every output element with the interpreter's order (last source wins; repeats added in column order, rounded per
step) and exits 3 on a mismatch, so the planted bugs (the first source kept, the last repeat level dropped) must
fail, and an index outside [0, D) must stop the kernel (Trap)."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_harness.sim.compiler import compile_program, run_program

SRC = Path(__file__).resolve().parent / "kernels" / "scatter_inverse.cpp"


@pytest.fixture(scope="module")
def binary() -> Path:
    return compile_program([SRC], defines={})


@pytest.mark.parametrize("args", [
    "copy f32 64 2 perm", "copy f16 256 2 perm", "copy f32 128 2 randint", "copy f16 512 2 repeat",
    "add f32 64 2 randint", "add f16 256 2 randint", "add f32 512 2 repeat", "add f16 128 2 perm",
    "copy f32 192 1 randint", "add f32 768 1 repeat", "add f16 128 1 randint",  # a last 3- / 2-way merge
])
def test_inverse_matches_the_interpreter_order(binary, args):
    res = run_program(binary, args.split(), timeout=120)
    assert res.returncode == 0 and res.errors == [], res.stdout + res.stderr


@pytest.mark.parametrize("args", ["copy f32 256 1 randint last_first", "add f32 256 1 repeat drop_level",
                                  "add f16 512 1 randint drop_level"])
def test_planted_bug_fails(binary, args):
    res = run_program(binary, args.split(), timeout=120)
    assert res.returncode == 3 and "wrong elements" in res.stdout, res.stdout + res.stderr


@pytest.mark.parametrize("mode", ["copy", "add"])
def test_index_out_of_range_traps(binary, mode):
    res = run_program(binary, [mode, "f32", "256", "1", "oob"], timeout=120)
    assert res.returncode == 1 and [e.code for e in res.errors] == ["TRAP"], res.stdout + res.stderr


def test_mrgsort_is_counted_by_the_bytes_it_writes(binary):
    """D = 64: 128 (score, index) pairs, one 4-way merge of 4 x 32: 128 x 8 B = 1 KB = 4 repeats of 256 B (the
    emulator counted 16 before session 36: the pairs' bytes taken as elements of T)."""
    res = run_program(binary, ["copy", "f32", "64", "0", "perm"], timeout=120)
    assert res.returncode == 0 and res.errors == [], res.stdout + res.stderr
    vec = res.counters["blocks"][0]["vec"]
    assert vec["MrgSort.b32"] == [1, 4]
    assert vec["Sort32.b32"] == [1, 4]  # 4 groups of 32 pairs
