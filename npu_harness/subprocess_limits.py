"""Run a child process with a wall-clock timeout and an address-space limit; never hang."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class Completed:
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool


def run_limited(cmd: list[str], *, timeout: float, memory_bytes: int | None = None, cwd=None,
                env=None) -> Completed:
    def limits() -> None:
        os.setsid()
        if memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env,
                            preexec_fn=limits, stdin=subprocess.DEVNULL)  # noqa: PLW1509 - no threads here
    try:
        out, err = proc.communicate(timeout=timeout)
        return Completed(proc.returncode, out, err, False)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return Completed(-9, out or "", err or "", True)


#: Likely causes of a child killed by a signal (RLIMIT_AS makes allocations fail: torch then raises, but
#: native code may abort; the kernel's OOM killer sends SIGKILL).
_CAUSES = {"SIGKILL": "out of memory?", "SIGSEGV": "a crash in native code (torch, numpy or the emulator)",
           "SIGABRT": "an abort in native code, often a failed allocation (out of memory?)",
           "SIGBUS": "a crash in native code", "SIGFPE": "an arithmetic fault in native code",
           "SIGTERM": "terminated from outside", "SIGINT": "interrupted"}


def describe_exit(returncode: int) -> str:
    """`exit 3`, or for a child killed by a signal its name and the likely cause: `killed by SIGKILL: out of
    memory?`."""
    if returncode >= 0:
        return f"exit {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    cause = _CAUSES.get(name)
    return f"killed by {name}" + (f": {cause}" if cause else "")

