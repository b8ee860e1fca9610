"""Load a KernelBench/MultiKernelBench task file in a subprocess (timeout + memory limit)."""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ascend_dsl.diagnostics import DslError

from .subprocess_limits import run_limited

TASK_TIMEOUT_S = 120.0
TASK_MEMORY_BYTES = 16 << 30


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
    with tempfile.TemporaryDirectory(prefix="ascend-task-") as tmp:
        req = Path(tmp) / "request.json"
        req.write_text(json.dumps({"seed": seed, "set": overrides or {}, "cap": cap,
                                   "input_dtypes": input_dtypes or []}))
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
    return TaskRun(data["inputs"], data["outputs"], data["attrs"], data["constants"])
