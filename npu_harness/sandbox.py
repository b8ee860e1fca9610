"""A sandbox for running untrusted emulator programs (kernels holding model-written C++, issue 17).

`command(cmd, writable)` wraps a command so that it runs in fresh Linux namespaces (util-linux `unshare`,
unprivileged: a user namespace mapping the caller to root inside it) with

- no network: an empty network namespace (not even loopback is up);
- no other processes: its own PID namespace (with its own /proc), so it can neither see nor signal
  anything outside;
- one writable path: every mount but its own /proc is remounted read-only, then `writable` (the run's scratch directory)
  is bind-mounted writable onto itself; the working directory is that scratch directory.

CPU time, address space and file size limits are set by the caller (`limits`, applied in the child before
exec; the wall-clock timeout is the caller's too). When the namespaces cannot be made (no `unshare`, user
namespaces disabled) `unavailable()` says why and callers refuse to run the program: the sandbox fails
closed, it never silently runs unconfined.

This file is also the program that sets the sandbox up inside the namespaces (`python -I -S sandbox.py
WRITABLE -- CMD...`), so it imports only the standard library.
"""

from __future__ import annotations

import ctypes
import functools
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC = 0x20, 0x1000, 0x4000
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 0x400, 0x800, 0x200000
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
          "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME}
#: CPU seconds a sandboxed program may use (beside the caller's wall-clock timeout)
CPU_SECONDS = 300
#: the largest file it may write
FILE_BYTES = 1 << 30


def _unshare_args() -> list[str]:
    return ["unshare", "--user", "--map-root-user", "--net", "--mount", "--propagation", "private", "--pid", "--fork",
            "--mount-proc", "--kill-child"]


def command(cmd: list[str], writable: Path) -> list[str]:
    """`cmd` wrapped to run sandboxed with `writable` (a directory) as its only writable path."""
    return [*_unshare_args(), "--", sys.executable, "-I", "-S", str(Path(__file__).resolve()),
            str(Path(writable).resolve()), "--", *cmd]


def limits(memory_bytes: int, cpu_seconds: int = CPU_SECONDS, file_bytes: int = FILE_BYTES) -> None:
    """Resource limits for the sandboxed child (call in preexec_fn)."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))


@functools.lru_cache(maxsize=1)
def unavailable() -> str | None:
    """Why sandboxed runs are impossible here (None: they work). Probed once: a read-only file system, the
    scratch directory writable, no network interface up."""
    if shutil.which("unshare") is None:
        return "util-linux `unshare` is not installed"
    import tempfile

    with tempfile.TemporaryDirectory(prefix="ascend-sandbox-probe-") as tmp:
        probe = ("import pathlib,sys; w=pathlib.Path(sys.argv[1]); (w/'ok').write_text('1'); "
                 "import os; ro=True\ntry:\n open('/probe-ro','w')\n ro=False\nexcept OSError: pass\n"
                 "sys.exit(0 if ro else 3)")
        try:
            p = subprocess.run(command([sys.executable, "-I", "-S", "-c", probe, tmp], Path(tmp)),
                               capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"the sandbox could not start ({e})"
        if p.returncode != 0 or not (Path(tmp) / "ok").is_file():
            return f"the sandbox could not be set up (exit {p.returncode}: {p.stderr.strip()[-300:]})"
    return None


def _mount_points() -> list[tuple[str, int]]:
    """(mount point, flags to keep) of every mount, parents first."""
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        f = line.split()
        point = f[4].encode().decode("unicode_escape")  # \040 etc.
        keep = 0
        for opt in f[5].split(","):
            keep |= _FLAGS.get(opt, 0)
        out.append((point, keep))
    return sorted(out, key=lambda m: m[0].count("/"))


def _enter(writable: str, cmd: list[str]) -> None:
    """Inside the namespaces: everything read-only but `writable`, then exec `cmd` there."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
    for point, keep in _mount_points():
        if point == "/proc" or point.startswith("/proc/"):
            continue  # this PID namespace's own proc (its files are the kernel's to guard); the maps are written there
        if libc.mount(None, point.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY | keep, None) != 0:
            err = ctypes.get_errno()
            if not os.path.exists(point):
                continue  # hidden under another mount
            sys.stderr.write(f"sandbox: cannot make {point} read-only: {os.strerror(err)}\n")
            sys.exit(125)
    w = writable.encode()
    keep = dict(_mount_points()).get("/", 0) & (MS_NOSUID | MS_NODEV | MS_NOEXEC)
    if libc.mount(w, w, None, MS_BIND, None) != 0 or libc.mount(
            None, w, None, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | keep, None) != 0:
        sys.stderr.write(f"sandbox: cannot bind {writable}: {os.strerror(ctypes.get_errno())}\n")
        sys.exit(125)
    _lock()
    os.chdir(writable)
    os.execv(cmd[0], cmd)


def _lock() -> None:
    """Enter a nested user and mount namespace: the mounts, copied into a less privileged namespace, are
    locked (the program, root in its namespace, can no longer remount them writable or unmount them)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        sys.stderr.write(f"sandbox: cannot lock the mounts: {os.strerror(ctypes.get_errno())}\n")
        sys.exit(125)
    Path("/proc/self/setgroups").write_text("deny")
    Path("/proc/self/uid_map").write_text("0 0 1")
    Path("/proc/self/gid_map").write_text("0 0 1")


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.stderr.write("usage: sandbox.py WRITABLE -- CMD...\n")
        sys.exit(125)
    _enter(sys.argv[1], sys.argv[3:])
