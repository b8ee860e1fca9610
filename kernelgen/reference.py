"""Reference runs of a task (inputs + PyTorch outputs), always computed in a subprocess with a timeout and a
memory limit (npu_harness.task). A get_inputs() task gives one case per seed (fresh inputs each trial); a
get_input_groups() task gives every one of its cases. Each case carries the kernel dtype variant its data
picked (npu_harness.task_binding)."""

from __future__ import annotations

from ascend_dsl import ir
from npu_harness.task import TASK_TIMEOUT_S, TaskRun
from npu_harness.validate import load_cases_for

from .tasks import Task


def reference_runs(task: Task, variants: list[ir.Kernel], seeds: list[int], *, cap: int | None = None,
                   timeout: float = TASK_TIMEOUT_S) -> list[tuple[str, TaskRun]]:
    """(label, run) per trial: fresh inputs per seed, or every case of a groups task (first seed)."""
    if task.format == "groups":
        cases = load_cases_for(variants, task.path, seed=seeds[0], cap=cap, timeout=timeout)
        return [(run.label, run) for run in cases.cases]
    return [(f"seed {s}", load_cases_for(variants, task.path, seed=s, cap=cap, timeout=timeout).cases[0])
            for s in seeds]
