"""Load a KernelBench/MultiKernelBench task file in a subprocess (timeout + memory limit).

Only the worker subprocess imports torch; the parent gets inputs and reference outputs as numpy
(`npu_harness.arrays.HostArray`), so `ascend-lower --validate sim` never pays the torch import.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ascend_dsl.diagnostics import DslError

from .arrays import load_result
from .subprocess_limits import describe_exit, run_limited

TASK_TIMEOUT_S = 120.0
TASK_MEMORY_BYTES = 16 << 30
#: results larger than this are not kept in the on-disk task cache
TASK_CACHE_MAX_BYTES = 256 << 20


def _task_cache_file(path: Path, request: dict) -> Path | None:
    """On-disk cache of task runs (inputs + reference outputs), keyed by the task file's content, the
    request (seed, overrides, cap, dtypes), the worker's and the result format's source and the torch
    version (torch/version.py, found without importing torch). Disabled with
    ASCEND_DSL_TASK_CACHE=0; lives in $ASCEND_DSL_CACHE/tasks (default ~/.cache/ascend-dsl/tasks)."""
    if os.environ.get("ASCEND_DSL_TASK_CACHE", "1") == "0":
        return None
    h = hashlib.sha256()
    h.update(path.read_bytes())
    h.update(json.dumps(request, sort_keys=True).encode())
    here = Path(__file__).resolve().parent
    h.update((here / "task_worker.py").read_bytes())
    h.update((here / "arrays.py").read_bytes())
    h.update(_torch_version().encode())
    env = os.environ.get("ASCEND_DSL_CACHE")
    base = Path(env) if env else Path.home() / ".cache" / "ascend-dsl"
    return base / "tasks" / f"{h.hexdigest()}.npz"


@functools.lru_cache(maxsize=1)
def _torch_version() -> str:
    """The installed torch's build, without importing torch (the worker runs our interpreter): the
    content of torch/version.py (`__version__`, `git_version`, ...), found with importlib.util.find_spec,
    which imports nothing. (importlib.metadata would cost ~0.3 s of imports per CLI run.)"""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        spec = None
    if spec is None or spec.origin is None:
        return "none"
    try:
        return (Path(spec.origin).parent / "version.py").read_text()
    except OSError:
        return "unknown"


@dataclass
class TaskRun:
    """forward()'s arguments (the k-th tensor already rounded to the kernel's k-th input dtype) and
    results. From run_task, tensors are HostArray (numpy); other producers may pass torch tensors."""

    inputs: list
    outputs: list
    attrs: dict = field(default_factory=dict)
    constants: dict = field(default_factory=dict)


def run_task(path: str | Path, *, seed: int = 0, overrides: dict[str, int] | None = None, cap: int | None = None,
             input_dtypes: list[str | None] | None = None, timeout: float = TASK_TIMEOUT_S) -> TaskRun:
    path = Path(path)
    if not path.is_file():
        raise DslError.at("TASK-ERROR", f"task file {path} does not exist", None,
                          "pass --task TASK.py (default: the .py next to the .adsl file)")
    request = {"seed": seed, "set": overrides or {}, "cap": cap, "input_dtypes": input_dtypes or []}
    cached = _task_cache_file(path, request)
    if cached is not None and cached.is_file():
        try:
            return TaskRun(*load_result(cached))
        except Exception:  # noqa: BLE001 - a damaged cache entry is simply recomputed
            cached.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="ascend-task-") as tmp:
        req = Path(tmp) / "request.json"
        req.write_text(json.dumps(request))
        out = Path(tmp) / "result.npz"
        res = run_limited([sys.executable, "-m", "npu_harness.task_worker", str(path), str(out), str(req)],
                          timeout=timeout, memory_bytes=TASK_MEMORY_BYTES)
        if res.timed_out:
            raise DslError.at("TASK-TIMEOUT", f"task file {path} did not finish within {timeout:.0f} s", None,
                              "does get_inputs() or forward() loop forever, or are the sizes too large? "
                              "try --cap N")
        if res.returncode != 0:
            tail = "\n".join(res.stderr.strip().splitlines()[-6:])
            raise DslError.at("TASK-ERROR", f"task file {path} failed ({describe_exit(res.returncode)})"
                              + (f":\n{tail}" if tail else ""), None)
        try:
            data = load_result(out)
        except (OSError, ValueError, KeyError) as e:
            raise DslError.at("TASK-ERROR", f"task file {path}: the worker's result is unreadable ({e})", None) from None
        if cached is not None and out.stat().st_size <= TASK_CACHE_MAX_BYTES:
            try:
                cached.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp_name = tempfile.mkstemp(prefix=".task-", suffix=".tmp", dir=cached.parent)
                os.close(fd)
                shutil.copyfile(out, tmp_name)
                os.replace(tmp_name, cached)
            except OSError:
                pass
    return TaskRun(*data)


@dataclass
class TaskShapes:
    """forward()'s tensor argument and result shapes, the Model's attributes and the size constants
    (task_worker.task_shapes: computed on the meta device, without tensor data)."""

    inputs: list[tuple[int, ...]]
    outputs: list[tuple[int, ...]]
    attrs: dict
    constants: dict


def run_task_shapes(path: str | Path, *, overrides: dict[str, int] | None = None,
                    timeout: float = TASK_TIMEOUT_S) -> TaskShapes:
    """The task's shapes at its own (or overridden) sizes, in a worker subprocess like run_task."""
    path = Path(path)
    if not path.is_file():
        raise DslError.at("TASK-ERROR", f"task file {path} does not exist", None,
                          "pass --task TASK.py (default: the .py next to the .adsl file)")
    with tempfile.TemporaryDirectory(prefix="ascend-task-") as tmp:
        req = Path(tmp) / "request.json"
        req.write_text(json.dumps({"shapes_only": True, "set": overrides or {}}))
        out = Path(tmp) / "shapes.json"
        res = run_limited([sys.executable, "-m", "npu_harness.task_worker", str(path), str(out), str(req)],
                          timeout=timeout, memory_bytes=TASK_MEMORY_BYTES)
        if res.timed_out:
            raise DslError.at("TASK-TIMEOUT", f"task file {path} did not finish within {timeout:.0f} s", None)
        if res.returncode != 0:
            tail = "\n".join(res.stderr.strip().splitlines()[-6:])
            raise DslError.at("TASK-ERROR", f"task file {path} failed on the meta device "
                              f"({describe_exit(res.returncode)})" + (f":\n{tail}" if tail else ""), None, "shapes come from running get_inputs() and forward() on "
                              "torch.device('meta'); an op without a meta kernel fails there")
        data = json.loads(out.read_text())
    return TaskShapes([tuple(s) for s in data["inputs"]], [tuple(s) for s in data["outputs"]], data["attrs"],
                      data["constants"])
