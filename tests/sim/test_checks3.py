"""Bug classes a sequential run hides (checks3.cpp): a cross-core exchange through GM without SyncAll
(GM-RACE on the read; ORDER-DEPENDENT when the blocks are re-run in reverse order), an atomic-add
output nobody zeroed (ATOMIC-UNINIT: launches leave outputs poisoned), fp16 overflow (FP16-OVERFLOW,
opt-in); each with its correct twin clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_harness.sim.compiler import compile_program, run_program
from tests.sim.source_lines import line_in

SRC = Path(__file__).resolve().parent / "kernels" / "checks3.cpp"


@pytest.fixture(scope="module")
def binary() -> Path:
    return compile_program([SRC], defines={})


def line_of(text: str) -> int:
    return line_in(SRC, text)


def test_exchange_without_syncall(binary):
    res = run_program(binary, ["exchange_race"], timeout=60)
    assert [e.code for e in res.errors] == ["GM-RACE"], res.stderr
    e = res.errors[0]
    assert e.line == line_of("BUG without SyncAll") and "reads 32 GM bytes that block 1 writes" in e.message
    assert res.error_count == 4  # every block reads its neighbour's slot


def test_order_check_reruns_in_reverse(binary):
    res = run_program(binary, ["exchange_race"], timeout=60, env={"ASCEND_SIM_ORDER_CHECK": "1"})
    assert {e.code for e in res.errors} == {"GM-RACE", "ORDER-DEPENDENT"}, res.stderr
    assert "reverse order" in next(e for e in res.errors if e.code == "ORDER-DEPENDENT").message


@pytest.mark.parametrize("variant", ["exchange_ok", "atomic_zeroed_ok"])
def test_ordered_twins_are_clean_in_both_orders(binary, variant):
    res = run_program(binary, [variant], timeout=60, env={"ASCEND_SIM_ORDER_CHECK": "1"})
    assert res.returncode == 0 and res.errors == [], res.stdout + res.stderr


def test_atomic_add_into_poison(binary):
    res = run_program(binary, ["atomic_uninit"], timeout=60)
    assert [e.code for e in res.errors] == ["ATOMIC-UNINIT"], res.stderr
    assert res.errors[0].line == line_of("BUG unless zeroed") and "never zeroed" in res.errors[0].message


def test_fp16_overflow_is_opt_in(binary):
    assert run_program(binary, ["f16_overflow"], timeout=60).errors == []
    res = run_program(binary, ["f16_overflow"], timeout=60, env={"ASCEND_SIM_FP16_OVERFLOW": "1"})
    assert [e.code for e in res.errors] == ["FP16-OVERFLOW"] and res.errors[0].line == line_of("overflows to inf"), res.stderr
