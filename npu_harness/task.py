"""Load a KernelBench/MultiKernelBench task file in a subprocess (timeout + memory limit)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ascend_dsl.diagnostics import DslError

from .subprocess_limits import run_limited

TASK_TIMEOUT_S = 120.0
TASK_MEMORY_BYTES = 16 << 30
#: results larger than this are not kept in the on-disk task cache
TASK_CACHE_MAX_BYTES = 256 << 20


def _task_cache_file(path: Path, request: dict) -> Path | None:
    """On-disk cache of task runs (inputs + reference outputs), keyed by the task file's content, the
    request (seed, overrides, cap, dtypes), the worker's source and the torch version. Disabled with
    ASCEND_DSL_TASK_CACHE=0; lives in $ASCEND_DSL_CACHE/tasks (default ~/.cache/ascend-dsl/tasks)."""
    if os.environ.get("ASCEND_DSL_TASK_CACHE", "1") == "0":
        return None
    import torch

    h = hashlib.sha256()
    h.update(path.read_bytes())
    h.update(json.dumps(request, sort_keys=True).encode())
    h.update((Path(__file__).resolve().parent / "task_worker.py").read_bytes())
    h.update(torch.__version__.encode())
    env = os.environ.get("ASCEND_DSL_CACHE")
    base = Path(env) if env else Path.home() / ".cache" / "ascend-dsl"
    return base / "tasks" / f"{h.hexdigest()}.pt"


@dataclass
class TaskRun:
    inputs: list
    outputs: list
    attrs: dict = field(default_factory=dict)
    constants: dict = field(default_factory=dict)


def run_task(path: str | Path, *, seed: int = 0, overrides: dict[str, int] | None = None, cap: int | None = None,
             input_dtypes: list[str | None] | None = None, timeout: float = TASK_TIMEOUT_S) -> TaskRun:
    import torch

    path = Path(path)
    if not path.is_file():
        raise DslError.at("TASK-ERROR", f"task file {path} does not exist", None,
                          "pass --task TASK.py (default: the .py next to the .adsl file)")
    request = {"seed": seed, "set": overrides or {}, "cap": cap, "input_dtypes": input_dtypes or []}
    cached = _task_cache_file(path, request)
    if cached is not None and cached.is_file():
        try:
            data = torch.load(cached, weights_only=False)
            return TaskRun(data["inputs"], data["outputs"], data["attrs"], data["constants"])
        except Exception:  # noqa: BLE001 - a damaged cache entry is simply recomputed
            cached.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="ascend-task-") as tmp:
        req = Path(tmp) / "request.json"
        req.write_text(json.dumps(request))
        out = Path(tmp) / "result.pt"
        res = run_limited([sys.executable, "-m", "npu_harness.task_worker", str(path), str(out), str(req)],
                          timeout=timeout, memory_bytes=TASK_MEMORY_BYTES)
        if res.timed_out:
            raise DslError.at("TASK-TIMEOUT", f"task file {path} did not finish within {timeout:.0f} s", None,
                              "does get_inputs() or forward() loop forever, or are the sizes too large? "
                              "try --cap N")
        if res.returncode != 0:
            tail = "\n".join(res.stderr.strip().splitlines()[-6:])
            raise DslError.at("TASK-ERROR", f"task file {path} failed (exit {res.returncode}):\n{tail}", None)
        data = torch.load(out, weights_only=False)
        if cached is not None and out.stat().st_size <= TASK_CACHE_MAX_BYTES:
            try:
                cached.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp_name = tempfile.mkstemp(prefix=".task-", suffix=".tmp", dir=cached.parent)
                os.close(fd)
                shutil.copyfile(out, tmp_name)
                os.replace(tmp_name, cached)
            except OSError:
                pass
    return TaskRun(data["inputs"], data["outputs"], data["attrs"], data["constants"])
