"""What a kernel for a task binds to, as prompt text: forward()'s tensors and numbers, the Model's parameters
and buffers (kernel input names and shapes), the scalars available by name, what forward() returns. Found by
running the task on PyTorch's meta device in a subprocess (npu_harness.task.run_task_shapes: no data, so
benchmark-scale sizes cost nothing)."""

from __future__ import annotations

from ascend_dsl.diagnostics import DslError
from npu_harness.task import run_task_shapes
from npu_harness.task_binding import FLOATS, as_number, param_key
from npu_harness.task_result import is_tensor

from ..tasks import Task

MAX_CASES = 3


def _tensor(t) -> str:
    return f"{t.dtype} {list(t.shape)}"


def _case_lines(run) -> list[str]:
    names = list(run.arg_names) + [f"arg{i}" for i in range(len(run.arg_names), len(run.inputs))]
    args = "; ".join(f"{n}: {_tensor(x)}" if is_tensor(x) else f"{n} = {x!r} (a number)"
                     for n, x in zip(names, run.inputs, strict=False))
    outs = "; ".join(_tensor(t) if is_tensor(t) else repr(t) for t in run.outputs)
    return [f"- forward() arguments: {args or 'none'}", f"- forward() returns: {outs or 'nothing'}"]


def describe(cases) -> str:
    """The prompt section for a task's meta-device cases (npu_harness.task.TaskCases)."""
    first = cases.cases[0]
    lines = ["## What the kernel binds to (from running the task on PyTorch's meta device)"]
    if cases.format == "groups":
        lines.append(f"The task has {len(cases.cases)} cases (get_input_groups); each runs on the dtype variant "
                     "matching its data. The first ones:")
        for run in cases.cases[:MAX_CASES]:
            lines.append(f"### {run.label}")
            lines += _case_lines(run)
    else:
        lines += _case_lines(first)
    if first.params:
        lines.append("- Model parameters and buffers (kernel inputs after forward()'s tensors, by these names): "
                     + "; ".join(f"{k}: {_tensor(t)}" + ("" if t.dtype in FLOATS else " (integer: optional)")
                                 for k, t in first.params.items()))
    scalars = {**{k: v for k, v in first.attrs.items()},
               **{f"{param_key(k)} (or {k.rsplit('.', 1)[-1]})": v for k, v in first.sub_attrs.items()}}
    scalars = {k: as_number(v) for k, v in scalars.items() if as_number(v) is not None}
    if scalars:
        lines.append("- Scalars available by name: " + "; ".join(f"{k} = {v!r}" for k, v in scalars.items()))
    return "\n".join(lines)


def task_bindings(task: Task) -> str | None:
    """describe() for the task, or a line saying why it is unavailable (the task fails on the meta device)."""
    try:
        return describe(run_task_shapes(task.path))
    except DslError as e:
        first = e.diagnostics[0].message.splitlines()[0] if e.diagnostics else "unknown error"
        return f"## What the kernel binds to\n(unavailable: {first})"
