"""Weak checks are reported as weak (issue 11): a PASS against a degenerate reference (all zeros, one value,
all NaN/inf, all within tolerance of 0) or with a select the inputs drive one way only says so."""

from __future__ import annotations

import pytest
import torch

from ascend_dsl import parse_text
from lowering import lower
from npu_harness import compare as compare_mod
from npu_harness.compare import compare, weakness
from npu_harness.task import TaskRun
from npu_harness.validate import validate_interp, validate_sim


@pytest.mark.parametrize(("values", "expected"), [
    ([0.0, 0.0, 0.0], "reference is all zeros"),
    ([2.5, 2.5, 2.5], "reference is one value (2.5)"),
    ([float("nan"), float("inf"), float("nan")], "reference is all NaN/inf"),
    ([1e-6, -2e-6, 0.0], "reference is all within tolerance of 0 (an all-zero output passes)"),
    ([], "reference is empty"),
])
def test_degenerate_references_are_named(values, expected):
    assert weakness(torch.tensor(values, dtype=torch.float32), 1e-4) == expected


@pytest.mark.parametrize("values", [[0.0, 1.0, 2.0], [float("nan"), 1.0, 1.0], [0.5]])
def test_ordinary_references_are_not_weak(values):
    assert weakness(torch.tensor(values), 1e-4) is None


def test_weakness_reads_the_reference_in_chunks(monkeypatch):
    """Chunk by chunk (large outputs are never widened whole): a difference in a later chunk counts."""
    monkeypatch.setattr(compare_mod, "CHUNK", 4)
    ref = torch.zeros(10)
    assert weakness(ref) == "reference is all zeros"
    ref[9] = 1.0
    assert weakness(ref) is None
    nan_then_finite = torch.tensor([float("nan")] * 5 + [1.0] * 5)
    assert weakness(nan_then_finite) is None
    assert weakness(torch.full((10,), 3.0)) == "reference is one value (3)"


def test_a_passing_comparison_carries_its_weakness_and_a_failing_one_does_not():
    ref = torch.zeros(8)
    assert compare("y", ref.clone(), ref, "f32").weak == "reference is all zeros"
    assert compare("y", ref + 1, ref, "f32").weak is None
    assert "weak: reference is all zeros" in compare("y", ref.clone(), ref, "f32").describe()


RELU_SELECT = '''@kernel
def k(x: Tensor[f32, "N"], y: Tensor[f32, "N"]):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            xt = load(x[t])
            store(y[t], select(xt < 0.0, xt * 0.1, xt))
'''


def _kernel():
    return parse_text(RELU_SELECT, "k.adsl")[0].instantiate()


def _run(x: torch.Tensor) -> TaskRun:
    return TaskRun([x], [torch.where(x < 0, x * 0.1, x)])


def test_interp_pass_names_a_select_the_inputs_never_take_one_way():
    """torch.rand inputs never test x < 0: PASS, but weak."""
    x = torch.rand(1000, generator=torch.Generator().manual_seed(0))
    r = validate_interp(_kernel(), _run(x))
    assert r.ok and r.summary().startswith("interp: PASS (weak: the select at k.adsl:6 always takes its second operand")
    r = validate_interp(_kernel(), _run(torch.randn(1000, generator=torch.Generator().manual_seed(0))))
    assert r.ok and not r.weaknesses and r.summary().startswith("interp: PASS (")


def test_interp_pass_names_a_degenerate_reference():
    r = validate_interp(_kernel(), _run(torch.zeros(64)))
    assert r.ok and "y: reference is all zeros" in r.summary()


@pytest.mark.slow
def test_sim_pass_is_weak_for_the_same_reasons(tmp_path):
    k = _kernel()
    project, ctx = lower(k, "ascend910b1", "k.adsl")
    x = torch.rand(1000, generator=torch.Generator().manual_seed(0))
    r = validate_sim(k, ctx.lowered, project, ctx, _run(x), work_dir=tmp_path)
    assert r.ok and "weak: the select at k.adsl:6 always takes its second operand" in r.summary(), r.summary()


def test_select_coverage_runs_the_interpreter_on_one_thread_and_restores_the_count(monkeypatch):
    """The coverage run is many small-tile ops, where torch's thread pool only spins on a loaded machine: it runs
    with one intra-op thread, and the caller's setting is back afterwards (also when the run raises)."""
    from ascend_dsl import interpreter
    from ascend_dsl.diagnostics import DslError
    from npu_harness.binding import bind
    from npu_harness.validate import select_coverage

    k = _kernel()
    b = bind(k, _run(torch.rand(1000, generator=torch.Generator().manual_seed(0))))
    seen = []
    real = interpreter.run

    def spy(*a, **kw):
        seen.append(torch.get_num_threads())
        return real(*a, **kw)

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        monkeypatch.setattr(interpreter, "run", spy)
        assert select_coverage(k, b)  # the select is driven one way only: the run happened and was recorded
        assert seen == [1] and torch.get_num_threads() == 2

        def fails(*a, **kw):
            seen.append(torch.get_num_threads())
            raise DslError.at("UNSUPPORTED", "planted", None)

        monkeypatch.setattr(interpreter, "run", fails)
        assert select_coverage(k, b) == []
        assert seen == [1, 1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
