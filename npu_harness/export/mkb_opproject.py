"""`--export mkb-opproject`: the kernel in MultiKernelBench's six-string op-project form (benchmarks.md §1.4;
MKB prompts/ascendc_new_model_add.py): project_json_src (msopgen op prototype), host_tiling_src (the
kernel's plain tiling struct and host tiling function), host_operator_src (TilingFunc, InferShape,
InferDataType, OpDef), kernel_src (the emitted kernel plus the msopgen entry `<op>_custom(inputs,
outputs, workspace, tiling)` reading the struct from GM), python_bind_src (EXEC_NPU_CMD binding,
module custom_ops_lib) and model_src (ModelNew). Names follow MKB: kernel `<op>_custom`, operator
PascalCase `<Op>Custom`. Scalar parameters are baked into TilingFunc; ModelNew gathers the kernel inputs that
are the Model's parameters as the direct export's does."""

from __future__ import annotations

import json

from ascend_dsl import ir
from lowering import EmittedProject, PassContext
from lowering.emit import kind_of, render, view_fields

from ..device.emulator_build import inline_include
from . import cxx
from .mkb_direct import model_view, tensor_view

STRINGS = ("project_json_src", "host_tiling_src", "host_operator_src", "kernel_src", "python_bind_src", "model_src")


def pascal(name: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in name.split("_") if w)


def _outputs(kernel: ir.Kernel, shape_of_like) -> list[dict]:
    out = []
    for p in kernel.outputs:
        like, dims = cxx.output_dims(kernel, p)
        out.append({"name": p.name, "like": like, "dims": dims, "ge_type": cxx.GE_TYPE[p.dtype.value],
                    "at_type": cxx.AT_TYPE[p.dtype.value], "shape": shape_of_like(like, dims)})
    return out


def kernel_source(project: EmittedProject, ctx: PassContext, view: dict, op_kernel: str) -> str:
    """The emitted kernel re-rendered with its direct entry renamed (`<k>_direct`, so it never clashes with
    the op's `<op>_custom`), its tiling header inlined, and the op-project entry appended."""
    name = project.name
    template = kind_of(ctx.lowered).kernel_template
    direct = f"{name}_direct"
    text = render(template, **{**view, "entry": direct})
    text = inline_include(text, f"{name}_tiling.h", project.files[f"{name}_tiling.h"], f"{op_kernel}.cpp")
    return text + render("mkb_op_kernel_entry.cpp.jinja", **view, op_kernel=op_kernel, direct_entry=direct)


def strings(kernel: ir.Kernel, project: EmittedProject, ctx: PassContext, facts) -> dict[str, str]:
    """The six strings for `kernel` and the task's export.ExportFacts."""
    op, scalars = facts.op, facts.scalars
    view = view_fields(project.view)
    op_kernel, op_class = f"{op}_custom", pascal(f"{op}_custom")
    inputs = [{**tensor_view(p), "ge_type": cxx.GE_TYPE[p.dtype.value]} for p in kernel.inputs]
    failed = lambda code: lambda cond, msg: f"if (!({cond})) {{ return {code}; }}  // {msg}"  # noqa: E731
    dim = lambda i, p, a: f"ViewDim({p.name}, {len(p.shape)}, {a})"  # noqa: E731
    outputs = _outputs(kernel, lambda like, dims: f"{like}.sizes()" if like else
                       "{" + ", ".join(f"static_cast<int64_t>({d})" for d in dims) + "}")
    names = [o["name"] for o in outputs]
    multi = len(names) > 1
    common = {**view, "op": op, "op_kernel": op_kernel, "op_class": op_class, "inputs": inputs, "outputs": outputs,
              "first": kernel.inputs[0].name, "soc_family": ctx.target.soc_family,
              "scalars": [{"name": p.name, "ctype": p.dtype.ctype, "value": repr(float(scalars[p.name]))}
                          for p in kernel.scalars]}
    project_json = [{"op": op_class, "language": "cpp",
                     "input_desc": [{"name": p.name, "param_type": "required", "format": ["ND"],
                                     "type": [cxx.JSON_TYPE[p.dtype.value]]} for p in kernel.inputs],
                     "output_desc": [{"name": p.name, "param_type": "required", "format": ["ND"],
                                      "type": [cxx.JSON_TYPE[p.dtype.value]]} for p in kernel.outputs]}]
    return {
        "project_json_src": json.dumps(project_json, indent=4),
        "host_tiling_src": project.files[f"{project.name}_tiling.h"],
        "host_operator_src": render("mkb_op_host.cpp.jinja", **common,
                                    tiling_symbol_lines=cxx.symbol_lines(kernel, dim, failed("ge::GRAPH_FAILED"), facts.sizes),
                                    infer_symbol_lines=cxx.symbol_lines(kernel, dim, failed("GRAPH_FAILED"), facts.sizes)),
        "kernel_src": kernel_source(project, ctx, view, op_kernel),
        "python_bind_src": render("mkb_op_bind.cpp.jinja", **common, symbol_lines=cxx.symbol_lines(
            kernel, dim, lambda cond, msg: f'TORCH_CHECK({cond}, "{op_kernel}: {msg}");', facts.sizes),
            result_type="std::vector<at::Tensor>" if multi else "at::Tensor",
            result_expr=("std::vector<at::Tensor>{" + ", ".join(names) + "}") if multi else names[0]),
        "model_src": render("mkb_op_model.py.jinja", **{**common, **model_view(kernel, facts), "inputs": inputs}),
    }


def module_text(six: dict[str, str], header: str) -> str:
    """The six strings as the Python file an LLM answer would be (`name = '''...'''` each)."""
    parts = [f'"""{header}"""\n']
    for key in STRINGS:
        text = six[key]
        if "'''" in text:
            raise ValueError(f"{key} contains ''' and cannot be written as a raw triple-quoted string")
        parts.append(f"{key} = r'''\n{text.rstrip()}\n'''\n")
    return "\n".join(parts)
