"""run_program's limits (npu_harness/sim/compiler.py): through prlimit, so the child starts with vfork, or in a
preexec_fn where prlimit is missing; either way the program runs under them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from npu_harness.sim import compiler
from npu_harness.sim.compiler import run_program

SH = Path("/bin/sh")
LIMIT = 3 << 30


def _limits_seen() -> list[str]:
    res = run_program(SH, ["-c", "ulimit -v; ulimit -c"], memory_limit_bytes=LIMIT, timeout=30)
    assert res.returncode == 0, res.stderr
    return res.stdout.split()


def test_the_program_runs_under_the_limits_through_prlimit():
    if compiler._prlimit() is None:
        pytest.skip("no prlimit (util-linux) here")
    assert _limits_seen() == [str(LIMIT // 1024), "0"]  # ulimit -v counts KiB


def test_without_prlimit_the_limits_are_set_before_exec(monkeypatch):
    monkeypatch.setattr(compiler, "_prlimit", lambda: None)
    assert compiler.limited_command([str(SH)], LIMIT) is None
    assert _limits_seen() == [str(LIMIT // 1024), "0"]


def test_prlimit_means_no_preexec_fn(monkeypatch):
    """A preexec_fn makes subprocess fork (page tables copied, the parent's next writes fault); prlimit lets it vfork."""
    if compiler._prlimit() is None:
        pytest.skip("no prlimit (util-linux) here")
    seen = {}
    real = subprocess.Popen

    def spy(cmd, **kw):
        seen.update(cmd=cmd, preexec_fn=kw.get("preexec_fn"))
        return real(cmd, **kw)

    monkeypatch.setattr(subprocess, "Popen", spy)
    run_program(SH, ["-c", "true"], memory_limit_bytes=LIMIT, timeout=30)
    assert seen["preexec_fn"] is None
    assert seen["cmd"][0] == compiler._prlimit() and seen["cmd"][1:4] == [f"--as={LIMIT}", "--core=0", "--"]
    assert seen["cmd"][4:] == [str(SH), "-c", "true"]


def test_a_missing_program_still_raises():
    with pytest.raises(FileNotFoundError):
        run_program(Path("/nonexistent/prog"), [], timeout=10)
