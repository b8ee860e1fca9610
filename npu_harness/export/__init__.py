"""MultiKernelBench exports of an emitted kernel (`ascend-lower FILE --export mkb-direct|mkb-opproject`), so
the project's kernels can be evaluated by that benchmark's own NPU harness (benchmarks.md §1.4)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from lowering import EmittedProject, PassContext

from ..call_shapes import output_shapes
from .task_source import model_source


@dataclass(frozen=True)
class ExportFacts:
    """What an export takes from the task: the problem name, the dtype variant its data picks, the scalar
    values (baked in), the outputs ModelNew reshapes to the task's shapes, and the kernel inputs that are
    the Model's parameters or buffers (with the task's Model source, which ModelNew then subclasses so
    they are created exactly as the reference's, under the harness's seed)."""

    op: str
    variant: int = 0
    scalars: dict | None = None
    reshapes: tuple = ()  # ((output index, shape), ...)
    params: tuple = ()  # kernel input names bound to parameters/buffers, in the kernel's order
    model_source: str | None = None  # the task file without @kernel functions (only when params)
    #: ((symbol, value), ...): the task's sizes, baked in when an output has dims no input determines (a pool's,
    #: a resize's or a convolution's OH, OW); the export then checks every input symbol against its value.
    sizes: tuple = ()
    #: ((symbol, value), ...): every shape symbol at the task's sizes (empty without a task)
    symbols: tuple = ()


#: Why an export format cannot hold a kernel of several launches (docs/npu.md "MultiKernelBench exports").
SEVERAL_LAUNCHES = {
    "mkb-opproject": ("cannot be expressed in the op-project format: an op project is one operator whose "
                      "kernel_src holds one kernel, launched by its own host operator"),
    "mkb-direct": ("is not written yet: the direct format's one kernel file would hold every launch's kernel (each "
                   "in a namespace of its own, as their helpers share names) and pybind11.cpp would chain their "
                   "tilings, workspaces and launches"),
}


def output_only_symbols(kernel: ir.Kernel) -> list[str]:
    """Shape symbols that only outputs declare: no input tensor determines them at run time."""
    known = {d for p in kernel.inputs for d in p.shape if isinstance(d, str)}
    return sorted({d for p in kernel.outputs for d in p.shape if isinstance(d, str) and d not in known})


def export_facts(kernels: list[ir.Kernel], task: Path | None, overrides: dict, timeout: float) -> ExportFacts:
    """ExportFacts from the task's first case on the meta device (the task's own sizes: MultiKernelBench runs
    those), or, without a task, the kernel's name and its DSL defaults (variant 0)."""
    kernel = kernels[0]
    if task is None:
        missing = [p.name for p in kernel.scalars if p.default is None]
        if missing:
            raise DslError.at("EXPORT", f"scalar parameter(s) {', '.join(missing)} have no default and there is no "
                              "task file to take them from", kernel.span, "pass --task TASK.py")
        derived = output_only_symbols(kernel)
        if derived:
            raise DslError.at("EXPORT", f"output dimension(s) {', '.join(derived)} are not determined by any input "
                              "tensor and there is no task file to take them from", kernel.span, "pass --task TASK.py")
        return ExportFacts(kernel.name, 0, {p.name: p.default for p in kernel.scalars})
    from ..binding import bind
    from ..task_result import is_tensor
    from ..validate import load_cases_for

    cases = load_cases_for(kernels, task, overrides=overrides, meta=True, timeout=timeout)
    bound = []
    for run in cases.cases:
        v = run.variant or 0
        if run.error:
            raise DslError.at(run.error["code"], f"{run.label}: {run.error['message']}", kernels[v].span)
        bound.append((run, v, bind(kernels[v], run)))
    run, v, b = bound[0]
    differ = [r.label for r, _, other in bound[1:] if other.scalars != b.scalars]
    if differ:
        raise DslError.at("EXPORT", f"the task's cases bind different scalar values ({run.label}: {b.scalars}; "
                          f"differs in {', '.join(differ)}); an export bakes in one set", kernels[v].span)
    kernel = kernels[v]
    n_args = sum(1 for x in run.inputs if is_tensor(x))
    params = tuple(p.name for p in kernel.inputs[n_args:])
    ins = [tuple(b.tensors[p.name].shape) for p in kernel.inputs]
    sizes = tuple(sorted(b.symbols.items())) if output_only_symbols(kernel) else ()
    outs = output_shapes(kernel, ins, dict(sizes))
    refs = [tuple(b.tensors[p.name].shape) for p in kernel.outputs]
    reshapes = tuple((i, ref) for i, (got, ref) in enumerate(zip(outs, refs, strict=True)) if tuple(got) != ref)
    return ExportFacts(task.stem, v, b.scalars, reshapes, params, model_source(task) if params else None, sizes,
                       tuple(sorted(b.symbols.items())))


def write_export(kind: str, kernel: ir.Kernel, project: EmittedProject, ctx: PassContext, facts: ExportFacts,
                 out: Path) -> Path:
    """Write the `kind` export ("mkb-direct" or "mkb-opproject") of the lowered kernel into `out`."""
    from ..validate_launches import require_one_launch

    require_one_launch(project, ctx, f"the {kind} export", SEVERAL_LAUNCHES[kind])
    _require_fused_runs(kind, kernel, project, ctx, facts)
    op = facts.op
    if kind == "mkb-direct":
        from .mkb_direct import submission

        path = out / f"{op}_mkb_direct.json"
        path.write_text(json.dumps(submission(kernel, project, ctx, facts), indent=2) + "\n")
        return path
    from .mkb_opproject import module_text, strings

    path = out / f"{op}_mkb_opproject.py"
    header = (f"{op}: the ascend-dsl kernel {project.name} ({project.manifest['source']}, {ctx.target.name}) as "
              "MultiKernelBench's six op-project strings.")
    path.write_text(module_text(strings(kernel, project, ctx, facts), header))
    return path


def _require_fused_runs(kind: str, kernel: ir.Kernel, project: EmittedProject, ctx: PassContext,
                        facts: ExportFacts) -> None:
    """A row-fallback kernel (npu_harness/row_fallback.py) is exported in its fused form: a located UNSUPPORTED
    when that form's tiling launches no block at the task's sizes (its launches form would run there, and an
    export of several launches is not possible: SEVERAL_LAUNCHES)."""
    if project.fallback is None or not facts.symbols:
        return
    from ..tiling_probe import launch_blocks

    symbols = dict(facts.symbols)
    if launch_blocks(project, ctx.target.name, symbols, facts.scalars or {}, ctx.target.aiv) > 0:
        return
    shapes = ", ".join(f"{k}={v}" for k, v in facts.symbols)
    raise DslError.at("UNSUPPORTED", f"the {kind} export of {kernel.name}: its fused form has no block at the task's "
                      f"sizes ({shapes}), where its host runs the launches form, and the {kind} export of a kernel of "
                      f"several launches {SEVERAL_LAUNCHES[kind]}", kernel.span,
                      "export it at sizes whose rows fit (--set), or validate it with --validate sim / npu")
