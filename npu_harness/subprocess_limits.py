"""Run a child process with a wall-clock timeout and an address-space limit; never hang, never take the
machine down.

The memory limit of every process the tools start (task workers, emulator runs) and of `ascend-lower` itself
is one setting: ASCEND_DSL_MEMORY_LIMIT, either a size ("12G", "800M", "1073741824" bytes) or a fraction of
the machine's physical RAM ("0.4"); default 40 % of RAM. It is an RLIMIT_AS: an allocation beyond it fails
inside the process (MemoryError, torch's "can't allocate memory", std::bad_alloc), which the tools report as
error[MEMORY-LIMIT] instead of the kernel's OOM killer ending the process, or another one, unannounced.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
from dataclasses import dataclass

DEFAULT_FRACTION = 0.4
ENV = "ASCEND_DSL_MEMORY_LIMIT"
_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def physical_ram() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 16 << 30


class LimitSettingError(ValueError):
    pass


def memory_limit() -> int:
    """The address-space limit in bytes (ASCEND_DSL_MEMORY_LIMIT, default 40 % of physical RAM)."""
    text = os.environ.get(ENV, "").strip().upper().removesuffix("B")
    if not text:
        return int(physical_ram() * DEFAULT_FRACTION)
    try:
        if text[-1] in _UNITS:
            return int(float(text[:-1]) * _UNITS[text[-1]])
        value = float(text)
    except ValueError:
        raise LimitSettingError(f"{ENV}={os.environ[ENV]!r} is neither a size (12G, 800M) nor a fraction of RAM "
                                "(0.4)") from None
    if 0 < value <= 1:
        return int(physical_ram() * value)
    return int(value)


def describe_limit(limit: int | None = None) -> str:
    limit = memory_limit() if limit is None else limit
    return (f"{limit / (1 << 30):.1f} GB ({100 * limit / physical_ram():.0f} % of RAM; set {ENV}, e.g. "
            f"{ENV}=0.6 or {ENV}=16G)")


def limit_self(limit: int | None = None) -> None:
    """Put this process under the memory limit (soft RLIMIT_AS; children may set their own)."""
    limit = memory_limit() if limit is None else limit
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def is_out_of_memory(stderr: str) -> bool:
    """Whether a child's stderr shows an allocation that failed (what an RLIMIT_AS hit looks like)."""
    return any(s in stderr for s in ("MemoryError", "std::bad_alloc", "can't allocate memory", "out of host memory",
                                     "Cannot allocate memory",
                                     "failed to map segment"))  # a shared library (torch) that cannot be mapped in


@dataclass(frozen=True)
class Completed:
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool


def isolate_child(memory_bytes: int) -> None:
    """In a child before it runs: its own session (a timeout kills its whole group) and RLIMIT_AS =
    `memory_bytes` (0: no limit). Shared by run_limited and the task server's forked workers."""
    os.setsid()
    if memory_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))


def run_limited(cmd: list[str], *, timeout: float, memory_bytes: int | None = None, cwd=None,
                env=None) -> Completed:
    """memory_bytes: the child's RLIMIT_AS (default: memory_limit())."""
    memory_bytes = memory_limit() if memory_bytes is None else memory_bytes
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env,
                            preexec_fn=lambda: isolate_child(memory_bytes), stdin=subprocess.DEVNULL)  # noqa: PLW1509 - no threads here
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

