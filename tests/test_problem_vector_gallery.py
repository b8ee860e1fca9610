"""The invariant of the headline's vector term (npu_harness/problem_vector.py): the problem's vector work never
exceeds the vector work of a correct kernel, here every gallery kernel as lowered (the emulator's counters: each
instruction's repeats at the target's rates, no head latency). A row where it does means the rule table charges
something a kernel need not do: fix the table, never clamp.

The whole gallery at benchmarks/bench_gallery_model.py's KernelBench shapes is slow (an emulator run per row:
`@pytest.mark.slow`); a subset of op classes (flat with a composite op, rows with reductions and a row vector in f16,
a scan, a box reduction, an accumulator, a matmul epilogue, flash attention with a band) at small shapes runs
unmarked."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ascend_dsl.dtypes import DType
from npu_harness import gallery

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_gallery_model.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_gallery_model", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _examples() -> dict:
    return {ex.name: ex for ex in gallery.discover()}


def check(result, where: str) -> None:
    est = result.report
    assert est is not None, f"{where}: no estimate"
    assert est.vector_basis == "problem", where
    assert est.vector_ideal_us <= est.kernel_vector_us * (1 + 1e-9) + 1e-12, (
        f"{where}: the problem's vector term {est.vector_ideal_us:.4f} us exceeds the kernel's own vector work "
        f"{est.kernel_vector_us:.4f} us")


SUBSET = [  # (kernel, dtype variable values, size overrides)
    ("gelu", {"T": DType.F32}, {"batch_size": 4, "dim": 4096}),
    ("softmax", {"T": DType.F16}, {"batch_size": 16, "dim": 1024}),
    ("layer_norm", {"T": DType.F16}, {"batch_size": 16, "dim": 1024}),
    ("cumsum", {"T": DType.F32}, {"batch_size": 16, "dim": 1024}),
    ("sum_dim1", {"T": DType.F32}, {"batch_size": 4, "dim1": 64, "dim2": 64}),
    ("mse_loss", {"T": DType.F16}, {"batch_size": 4, "dim": 4096}),
    ("linear_bias_sigmoid_f16", {"T": DType.F16}, {}),
    ("sliding_window", {"T": DType.F16}, {"B": 1, "H": 2, "S": 333}),  # flash attention, a positional band
]


@pytest.mark.parametrize("name, dtypes, shape", SUBSET, ids=[s[0] for s in SUBSET])
def test_problem_term_at_most_the_kernels_vector_work(name, dtypes, shape):
    ex = _examples()[name]
    dts = next(d for d in ex.validation_dtypes() if all(d.get(k) == v for k, v in dtypes.items()))
    r = gallery.validate(ex, dts, shape)
    assert r.ok, r.summary()
    check(r, f"{name} {dts} {shape}")
    assert r.report.vector_ideal_us > 0


@pytest.mark.slow
def test_problem_term_at_most_the_kernels_vector_work_over_the_gallery():
    bench = _bench()
    bad, checked = [], 0
    for ex in gallery.discover():
        shapes = bench.wanted_shapes(ex, bench.bench_shapes(ex), quick=False, kernelbench=True)
        for dts in ex.validation_dtypes():
            for shape in shapes:
                r = bench.largest_case(bench.validate_with_retry(ex, dts, shape, "ascend910b1", 600))
                if r is None or r.report is None:
                    continue
                try:
                    check(r, f"{ex.name} {dts} {shape}")
                    checked += 1
                except AssertionError as e:
                    bad.append(str(e))
    assert checked >= 50 and not bad, "\n".join(bad)


def test_a_planted_overcharge_fails_the_invariant(monkeypatch):
    """A table charging erf fifty Exp instructions (more than any correct gelu needs) is caught."""
    from npu_harness import problem_vector

    monkeypatch.setitem(problem_vector.COMPOSITE, "erf", ("Exp",) * 50)
    ex = _examples()["gelu"]
    r = gallery.validate(ex, {"T": DType.F32}, {"batch_size": 4, "dim": 4096})
    with pytest.raises(AssertionError, match="exceeds the kernel's own vector work"):
        check(r, "gelu with a planted rate")
