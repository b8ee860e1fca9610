"""The NPU harness (`--validate npu`, `--level npu`): without CANN or torch_npu it stops with one line
naming what is missing; its compare-and-time worker runs here with the emulator standing in for the
NPU (the same code path except the device, the build and the timer); timing follows MultiKernelBench."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from npu_harness.device import benchmark, env, npu_worker
from npu_harness.device.npu_validate import validate_npu

REPO = Path(__file__).resolve().parents[2]
LEAKY = REPO / "examples/activation/leaky_relu.adsl"
RMS = REPO / "examples/normalization/rms_norm_param.adsl"  # norm.weight (random) is an input, eps = norm.eps


def _no_cann_env(tmp_path=None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME",
                                                               "ASCEND_INSTALL_PATH")}
    if tmp_path is not None:  # a directory that looks like a CANN install
        (tmp_path / "include" / "acl").mkdir(parents=True)
        (tmp_path / "include" / "acl" / "acl.h").write_text("")
        env["ASCEND_HOME_PATH"] = str(tmp_path)
    return env


def _run(cmd: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *cmd], capture_output=True, text=True, timeout=300, cwd=REPO, env=env)


@pytest.mark.skipif(Path("/usr/local/Ascend").exists(), reason="a CANN install is present")
def test_validate_npu_without_cann_says_what_is_missing(tmp_path):
    out = _run(["npu_harness.cli", str(LEAKY), "-o", str(tmp_path / "o"), "--validate", "npu"], _no_cann_env())
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error[NPU-UNAVAILABLE]: CANN toolkit not found")
    assert "set_env.sh" in lines[0]


def test_without_torch_npu_the_harness_says_what_is_missing(tmp_path, monkeypatch):
    for k, v in _no_cann_env(tmp_path / "cann").items():
        monkeypatch.setenv(k, v)
    with pytest.raises(env.NpuUnavailable) as ei:
        validate_npu(LEAKY, "leaky_relu", {}, "ascend910b1", LEAKY.with_suffix(".py"))
    assert str(ei.value).startswith("torch_npu is not installed") and "pip install torch-npu" in str(ei.value)
    assert "torch_npu" not in sys.modules


@pytest.mark.parametrize("tool", ["kernelgen.cli_eval", "kernelgen.cli_gen"])
def test_level_npu_without_cann_stops_at_once(tool, tmp_path):
    out = _run([tool, str(REPO / "examples/activation/relu.py"), "--level", "npu", "--provider", "replay",
                "--replay", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "o")], _no_cann_env())
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1].startswith("error[NPU-UNAVAILABLE]: ")


@pytest.mark.slow
def test_harness_compares_and_times_with_the_emulator_standing_in():
    # the Model's parameter reaches the kernel: a kernel run on any other weight differs from the reference
    r = validate_npu(RMS, "rms_norm_param", {}, "ascend910b1", RMS.with_suffix(".py"), cap=20000, device="cpu",
                     correct_trials=2, warmup=1, trials=4, fast_p=(0.0, 1.0))
    assert r.ok, r.error
    assert len(r.comparisons) == 2 and all(c.ok and c.numel == r.shapes["B"] * r.shapes["D"] for c in r.comparisons)
    assert r.kernel_ms["trials"] == 4 and r.reference_ms["trials"] == 4
    assert r.speedup == pytest.approx(r.reference_ms["mean_ms"] / r.kernel_ms["mean_ms"])
    assert r.fast_p == {"0.0": 1, "1.0": int(r.speedup > 1.0)}
    assert "PASS" in r.summary()


GROUPS_TASK = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor, negative_slope: float) -> torch.Tensor:
        return torch.nn.functional.leaky_relu(x, negative_slope)


def get_input_groups():
    return [[torch.randn(7, 333), 0.2], [torch.randn(2000), 0.05]]


def get_init_inputs():
    return []
"""


@pytest.mark.slow
def test_harness_runs_every_case_of_a_groups_task(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_DSL_TARGET", "ascend910b1")  # restored afterwards (the worker sets it)
    task = tmp_path / "leaky_groups.py"
    task.write_text(GROUPS_TASK)
    req = {"dsl": str(LEAKY), "kernel": "leaky_relu", "target": "ascend910b1", "device": "cpu", "task": str(task),
           "warmup": 1, "trials": 2}
    r = npu_worker.run(req)  # each case once; the slope from forward()'s number argument (not the default 0.01)
    assert r["ok"], r
    assert [c["numel"] for c in r["comparisons"]] == [7 * 333, 2000]
    assert r["shapes"] == {"N": 2000}  # the last case's, which is the one timed


@pytest.mark.slow
def test_harness_reports_a_kernel_that_computes_something_else(monkeypatch):
    monkeypatch.setenv("ASCEND_DSL_TARGET", "ascend910b1")  # restored afterwards (the worker sets it)
    req = {"dsl": str(LEAKY), "kernel": "leaky_relu", "target": "ascend910b1", "device": "cpu", "cap": 20000,
           "task": str(REPO / "examples/activation/relu.py"), "correct_trials": 2, "warmup": 1, "trials": 4}
    r = npu_worker.run(req)  # in this process (validate_npu runs it in a worker)
    assert not r["ok"] and "kernel_ms" not in r  # a wrong kernel is not timed
    assert r["comparisons"][0]["mismatches"] > 0


class _FakeEvent:
    """Device events on a fake clock: each timed call advances it by 2 ms."""
    clock = 0.0

    def __init__(self, enable_timing: bool):
        assert enable_timing
        self.t = None

    def record(self):
        self.t = _FakeEvent.clock

    def elapsed_time(self, end) -> float:
        return end.t - self.t


def test_event_timing_follows_multikernelbench():
    calls = []

    def fn():
        calls.append(1)
        _FakeEvent.clock += 2.0 + 0.5 * (len(calls) % 2)

    syncs = []
    t = benchmark.time_events(fn, _FakeEvent, lambda: syncs.append(1))
    assert len(calls) == benchmark.WARMUP + benchmark.TRIALS == 103
    assert len(syncs) == 1 + benchmark.TRIALS  # after the warm-up, then after every trial
    assert t.trials == 100 and t.min_ms == 2.0 and t.max_ms == 2.5 and t.mean_ms == pytest.approx(2.25)
    assert benchmark.fast_p(True, 1.3, [1.0, 1.5]) == {"1.0": 1, "1.5": 0}
    assert benchmark.fast_p(False, 9.0, [1.0]) == {"1.0": 0}


def test_eval_report_fast_p_uses_measured_npu_speedups():
    from kernelgen.report import build_report, markdown

    def rec(task, passed, speedup):
        return {"task": task, "category": "activation", "sample": 0, "passed": passed, "error": None,
                "final": {"parsed": True, "checked": True, "interp_ok": True, "lowered": True, "sim_ok": True,
                          "npu_ok": passed, "speedup": speedup, "estimate_us": None}}

    records = [rec("relu", True, 1.8), rec("relu", True, 0.7), rec("gelu", True, 0.9), rec("tanh", False, None)]
    rep = build_report(records, [1], [0.0, 1.0], "npu", {"level": "npu"})
    assert rep["overall"]["fast_p"] == {"0.0": pytest.approx(2 / 3), "1.0": pytest.approx(1 / 3)}  # best per task
    assert rep["overall"]["npu_rate"] == 0.75
    assert "measured on the NPU" in markdown(rep)
