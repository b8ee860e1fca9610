"""No tracebacks on user input in any stage (issue 11, item 5): a kernel whose inputs do not match the task's
forward() is error[BINDING] at every validation level; a task process killed by a signal names the signal
and its likely cause."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from npu_harness.subprocess_limits import describe_exit

REPO = Path(__file__).resolve().parent.parent

TWO_INPUTS = '''@kernel
def relu(x: Tensor[f32, "N"], z: Tensor[f32, "N"], y: Tensor[f32, "N"]):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], relu(load(x[t]) + load(z[t])))
'''

TASK = '''import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(1000)]
def get_init_inputs():
    return []
'''


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "npu_harness.cli", *args], check=False, capture_output=True,
                          text=True, timeout=300, cwd=REPO)


@pytest.mark.parametrize("level", ["tiling", "interp"])
def test_input_count_mismatch_is_a_binding_error_at_every_level(tmp_path, level):
    (tmp_path / "relu.adsl").write_text(TWO_INPUTS)
    (tmp_path / "relu.py").write_text(TASK)
    r = _cli(str(tmp_path / "relu.adsl"), "-o", str(tmp_path / "o"), "--validate", level)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "error[BINDING]" in r.stderr and "Traceback" not in r.stderr + r.stdout, r.stderr
    assert "relu.adsl:2:" in r.stderr  # located at the input forward() lacks


def test_signals_are_named_with_their_likely_cause():
    assert describe_exit(-signal.SIGKILL) == "killed by SIGKILL: out of memory?"
    assert describe_exit(-signal.SIGSEGV).startswith("killed by SIGSEGV: a crash in native code")
    assert describe_exit(3) == "exit 3"


def test_a_task_killed_by_a_signal_says_which(tmp_path):
    task = tmp_path / "relu.py"
    task.write_text(TASK.replace("return [torch.randn(1000)]",
                                 "import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)"))
    (tmp_path / "relu.adsl").write_text(TWO_INPUTS.replace(', z: Tensor[f32, "N"]', "").replace(" + load(z[t])", ""))
    r = _cli(str(tmp_path / "relu.adsl"), "-o", str(tmp_path / "o"), "--validate", "interp")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "error[TASK-ERROR]" in r.stderr and "killed by SIGKILL: out of memory?" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
