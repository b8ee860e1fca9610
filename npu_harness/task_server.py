"""Task workers forked from a process that has already imported torch (a fork server).

Every task run (npu_harness.task) happens in a child process with a timeout and an address-space limit. Started
fresh (``python -m npu_harness.task_worker``), each child spends about 2 s of CPU importing torch before it runs
a task that often takes 0.1 s; the test suite runs hundreds of them. Instead, each process that runs tasks
starts one server (``python -m npu_harness.task_server``) on first use (and again when the worker's sources
change on disk); the server imports torch and the worker once and forks a child per task. The child is what a fresh worker would be: its own session (the
timeout kills its whole process group), RLIMIT_AS = the memory limit, stdin from /dev/null, stdout and stderr
to files, the caller's working directory and environment, ``task_worker.main(args)`` and its exit code (an
uncaught exception: the traceback on stderr and exit 1, as ``python -m`` does).

Protocol (one JSON object per line): the server writes ``{"ready": true}`` once imported; per request
``{"args", "cwd", "env", "memory_bytes", "timeout", "stdout", "stderr"}`` it answers
``{"returncode", "timed_out"}``. The server itself enforces the timeout (SIGKILL to the child's process group
before the child is reaped, so no recycled pid is ever signalled). It exits when its stdin closes (its parent
ended), killing a child still running.

``run_worker`` falls back to a fresh subprocess (``subprocess_limits.run_limited``) when
``ASCEND_DSL_TASK_SERVER=0``, when another thread of this process is using the server, in a forked copy of the
process that started it, and when the server cannot be started or stops answering.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .subprocess_limits import Completed, isolate_child, run_limited

ENV = "ASCEND_DSL_TASK_SERVER"
WORKER_MODULE = "npu_harness.task_worker"
#: the worker's source files (npu_harness/): a task result depends on them (task.py's cache key), and a server
#: whose imported worker is older than them is replaced
WORKER_SOURCES = ("task_worker.py", "task_binding.py", "task_scale.py", "task_result.py", "arrays.py")
#: how long the server may take to import torch and say it is ready
START_TIMEOUT_S = 120.0
#: extra time the caller allows the server beyond the task's own timeout before giving up on it
ANSWER_GRACE_S = 30.0


def enabled() -> bool:
    return os.environ.get(ENV, "1") not in ("0", "false", "no")


def _sources_stamp() -> tuple[int, ...]:
    """Modification times of the worker's sources: a server whose imported worker is older than the files
    is replaced (a fresh worker would run the files as they are now)."""
    here = Path(__file__).resolve().parent
    return tuple(os.stat(here / name).st_mtime_ns for name in (*WORKER_SOURCES, "task_server.py"))


# ---------------------------------------------------------------- caller side


class _Server:
    def __init__(self) -> None:
        self.owner = os.getpid()
        self.stamp = _sources_stamp()
        self.proc = subprocess.Popen([sys.executable, "-m", "npu_harness.task_server"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True)
        self.buf = b""
        if self._read(START_TIMEOUT_S) != {"ready": True}:
            raise OSError("the task server did not start")

    def _read(self, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, req: dict, timeout: float) -> dict | None:
        self.proc.stdin.write(json.dumps(req).encode() + b"\n")
        self.proc.stdin.flush()
        return self._read(timeout)

    def close(self) -> None:
        if self.owner != os.getpid():
            return
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_lock = threading.Lock()
_server: _Server | None = None


def _current() -> _Server | None:
    global _server
    if (_server is not None and _server.owner == os.getpid() and _server.proc.poll() is None
            and _server.stamp == _sources_stamp()):
        return _server
    if _server is not None and _server.owner == os.getpid():
        _server.close()
    _server = None  # a forked copy of the owner leaves the owner's server alone
    try:
        _server = _Server()
    except (OSError, ValueError):
        return None
    return _server


def _stop() -> None:
    global _server
    if _server is not None:
        _server.close()
        _server = None


atexit.register(_stop)


def run_worker(args: list[str], *, timeout: float, memory_bytes: int) -> Completed:
    """``python -m npu_harness.task_worker ARGS...`` with a timeout and RLIMIT_AS = ``memory_bytes``, forked
    from the task server when there is one (module docstring), else a fresh subprocess."""
    fresh = [sys.executable, "-m", WORKER_MODULE, *args]
    if not enabled() or not _lock.acquire(blocking=False):
        return run_limited(fresh, timeout=timeout, memory_bytes=memory_bytes)
    try:
        server = _current()
        if server is None:
            return run_limited(fresh, timeout=timeout, memory_bytes=memory_bytes)
        with tempfile.TemporaryDirectory(prefix="ascend-task-io-") as tmp:
            out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
            req = {"args": [str(a) for a in args], "cwd": os.getcwd(), "env": dict(os.environ),
                   "memory_bytes": memory_bytes, "timeout": timeout, "stdout": str(out), "stderr": str(err)}
            try:
                answer = server.request(req, timeout + ANSWER_GRACE_S)
            except (OSError, ValueError):
                answer = None
            if answer is None:  # the server died or hangs: retire it and run this task the plain way
                _stop()
                return run_limited(fresh, timeout=timeout, memory_bytes=memory_bytes)

            def text(p: Path) -> str:
                return p.read_text(errors="replace") if p.is_file() else ""

            return Completed(int(answer["returncode"]), text(out), text(err), bool(answer["timed_out"]))
    finally:
        _lock.release()


# ---------------------------------------------------------------- server side


def _child(req: dict, proto: tuple[int, int]) -> None:
    """In the forked child: become a fresh worker, run it, exit. Never returns."""
    code = 1
    try:
        isolate_child(req["memory_bytes"])  # as run_limited's children: own session, RLIMIT_AS
        for fd in proto:
            os.close(fd)
        for target, path, flags in ((0, os.devnull, os.O_RDONLY),
                                    (1, req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                    (2, req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
            fd = os.open(path, flags, 0o600)
            os.dup2(fd, target)
            os.close(fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.chdir(req["cwd"])
        os.environ.clear()
        os.environ.update(req["env"])
        from . import task_worker

        sys.argv = [task_worker.__file__, *req["args"]]
        code = task_worker.main(req["args"])
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, int) and e.code is not None:
            print(e.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - as `python -m` would: the traceback, exit 1
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code if isinstance(code, int) else 1)


def _wait(pid: int, timeout: float, stdin_fd: int) -> tuple[int, bool, bool]:
    """Wait for the child: (returncode, timed_out, parent_gone). Kills its process group at the deadline or
    when the server's stdin closes, before reaping it."""
    deadline = time.monotonic() + timeout
    pidfd = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None
    timed_out = gone = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            watch = [stdin_fd] + ([pidfd] if pidfd is not None else [])
            ready = select.select(watch, [], [], min(left, 0.05) if pidfd is None else left)[0]
            if pidfd is not None and pidfd in ready or pidfd is None:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    return os.waitstatus_to_exitcode(status), False, False
            if stdin_fd in ready:  # the parent wrote nothing: it closed the pipe (ended)
                gone = True
                break
    finally:
        if pidfd is not None:
            os.close(pidfd)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _, status = os.waitpid(pid, 0)
    return (-signal.SIGKILL if timed_out else os.waitstatus_to_exitcode(status)), timed_out, gone


def serve() -> int:
    proto_in, proto_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)  # nothing the imports print may reach the protocol
    os.close(null)
    import torch  # noqa: F401 - the point of the server: imported once, shared by every child

    from . import task_worker  # noqa: F401

    def send(obj: dict) -> None:
        os.write(proto_out, json.dumps(obj).encode() + b"\n")

    send({"ready": True})
    buf = b""
    while True:
        while b"\n" not in buf:
            chunk = os.read(proto_in, 65536)
            if not chunk:
                return 0
            buf += chunk
        line, buf = buf.split(b"\n", 1)
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(req, (proto_in, proto_out))
        returncode, timed_out, gone = _wait(pid, float(req["timeout"]), proto_in)
        if gone:
            return 0
        send({"returncode": returncode, "timed_out": timed_out})


if __name__ == "__main__":
    sys.exit(serve())
