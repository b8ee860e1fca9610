"""MultiKernelBench exports of an emitted kernel (`ascend-lower FILE --export mkb-direct|mkb-opproject`), so
the project's kernels can be evaluated by that benchmark's own NPU harness (benchmarks.md §1.4)."""

from __future__ import annotations

import json
from pathlib import Path

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from lowering import EmittedProject, PassContext

from ..call_shapes import output_shapes


def task_facts(kernel: ir.Kernel, task: Path | None, overrides: dict, timeout: float) -> tuple[str, dict, list]:
    """(problem name, scalar values, ModelNew reshapes) from the task file when there is one (its shapes on
    the meta device, its Model's attributes), else the kernel name and the DSL defaults."""
    from ..binding import bind_shapes

    if task is None or not task.is_file():
        missing = [p.name for p in kernel.scalars if p.default is None]
        if missing:
            raise DslError.at("EXPORT", f"scalar parameter(s) {', '.join(missing)} have no default and there is no "
                              "task file to take them from", kernel.span, "pass --task TASK.py")
        return kernel.name, {p.name: p.default for p in kernel.scalars}, []
    from ..task import run_task_shapes

    shapes = run_task_shapes(task, overrides=overrides, timeout=timeout)
    outs = output_shapes(kernel, shapes.inputs)
    _, scalars = bind_shapes(kernel, shapes.inputs, outs, shapes.attrs)
    if len(shapes.outputs) != len(outs):
        raise DslError.at("BINDING", f"kernel '{kernel.name}' stores {len(outs)} output tensor(s) but the task's "
                          f"forward() returns {len(shapes.outputs)}", kernel.span)
    reshapes = [(i, tuple(ref)) for i, (got, ref) in enumerate(zip(outs, shapes.outputs, strict=True))
                if tuple(got) != tuple(ref)]
    return task.stem, scalars, reshapes


def write_export(kind: str, kernel: ir.Kernel, project: EmittedProject, ctx: PassContext, task: Path | None,
                 out: Path, overrides: dict, timeout: float) -> Path:
    op, scalars, reshapes = task_facts(kernel, task, overrides, timeout)
    if kind == "mkb-direct":
        from .mkb_direct import submission

        path = out / f"{op}_mkb_direct.json"
        path.write_text(json.dumps(submission(kernel, project, ctx, op, scalars, reshapes), indent=2) + "\n")
        return path
    from .mkb_opproject import module_text, strings

    path = out / f"{op}_mkb_opproject.py"
    header = (f"{op}: the ascend-dsl kernel {project.name} ({project.manifest['source']}, {ctx.target.name}) as "
              "MultiKernelBench's six op-project strings.")
    path.write_text(module_text(strings(kernel, project, ctx, op, scalars, reshapes), header))
    return path
