"""Reference runs of a task (inputs + PyTorch outputs), always computed in a subprocess with a
timeout and a memory limit. Standard tasks go through npu_harness.task.run_task (one fresh seed per
trial); `get_input_groups()` tasks through kernelgen.groups_worker (one run per case)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from npu_harness.subprocess_limits import run_limited
from npu_harness.task import TASK_MEMORY_BYTES, TASK_TIMEOUT_S, TaskRun
from npu_harness.validate import load_task_for

from .tasks import Task

MAX_GROUPS = 8
_PKG_PARENT = str(Path(__file__).resolve().parent.parent)


def _dtypes(kernel: ir.Kernel) -> list[str]:
    return [p.dtype.torch.__repr__().removeprefix("torch.") for p in kernel.inputs]


def reference_runs(task: Task, kernel: ir.Kernel, seeds: list[int], *, cap: int | None = None,
                   timeout: float = TASK_TIMEOUT_S) -> list[tuple[str, TaskRun]]:
    """(label, run) per trial: fresh inputs per seed, or every case (up to MAX_GROUPS) of a groups task."""
    if task.format == "groups":
        return [(f"case {i}", r) for i, r in enumerate(_group_runs(task, kernel, seeds[0], timeout))]
    return [(f"seed {s}", load_task_for(kernel, task.path, seed=s, cap=cap)) for s in seeds]


def _group_runs(task: Task, kernel: ir.Kernel, seed: int, timeout: float) -> list[TaskRun]:
    import torch

    with tempfile.TemporaryDirectory(prefix="kernelgen-task-") as tmp:
        req = Path(tmp) / "request.json"
        req.write_text(json.dumps({"seed": seed, "max_groups": MAX_GROUPS, "input_dtypes": _dtypes(kernel)}))
        out = Path(tmp) / "result.pt"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [_PKG_PARENT, env.get("PYTHONPATH")]))
        res = run_limited([sys.executable, "-m", "kernelgen.groups_worker", str(task.path.resolve()), str(out),
                           str(req)], timeout=timeout, memory_bytes=TASK_MEMORY_BYTES, env=env)
        if res.timed_out:
            raise DslError.at("TASK-TIMEOUT", f"task file {task.path} did not finish within {timeout:.0f} s", None)
        if res.returncode != 0:
            tail = "\n".join(res.stderr.strip().splitlines()[-6:])
            raise DslError.at("TASK-ERROR", f"task file {task.path} failed (exit {res.returncode}):\n{tail}", None)
        data = torch.load(out, weights_only=False)
    return [TaskRun(g["inputs"], g["outputs"], g["attrs"], {}) for g in data["groups"]]
