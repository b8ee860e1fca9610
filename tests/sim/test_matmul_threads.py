"""Compiler-emitted Matmul-API kernels (a cube launch and a MIX launch with a vector epilogue) validated with the
blocks on one thread and on three: both pass, the emulator ran the second on three threads (a Matmul object no
longer keeps a launch on one thread), and the comparison figures, reports and per-block counters are the same."""

from __future__ import annotations

import pytest

from npu_harness import gallery

DROP = {"threads", "launch_us", "launch_cpu_us"}


def _example(name: str):
    return next(e for e in gallery.discover() if e.name == name)


@pytest.mark.parametrize("name,overrides", [
    ("matmul_square", {"M": 200, "N": 200, "K": 72}),
    ("batched_matmul_scale_relu", {"M": 72, "K": 40, "N": 100}),
])
def test_emitted_matmul_kernel_same_on_one_and_three_threads(monkeypatch, name, overrides):
    ex = _example(name)
    runs = []
    for threads in ("1", "3"):
        monkeypatch.setenv("ASCEND_SIM_THREADS", threads)
        r = gallery.validate(ex, ex.dtypes[0], overrides)
        assert r.ok, r.summary()
        runs.append(r)
    one, three = runs
    assert one.counters["threads"] == 1 and three.counters["threads"] == 3
    assert len(one.counters["blocks"]) > 1 and sum(b.get("cube_macs", 0) for b in one.counters["blocks"]) > 0
    assert [(c.name, c.max_abs_err, c.mismatches) for c in one.comparisons] == [
        (c.name, c.max_abs_err, c.mismatches) for c in three.comparisons]
    assert one.sim_errors == three.sim_errors
    assert {k: v for k, v in one.counters.items() if k not in DROP} == {k: v for k, v in three.counters.items() if k not in DROP}
