"""`--export mkb-direct`: the kernel as a MultiKernelBench `ascendc_direct_launch` submission (benchmarks.md
§1.4; MKB prompts/ascendc_direct_launch_model_*.json): one JSON object whose `sources` hold ModelNew.py,
kernel/<op>_launch.h, kernel/<op>_kernel.cpp (the emitted kernel plus a `<<<>>>` launch function, built
with bisheng -xasc), kernel/<name>_tiling.h and kernel/pybind11.cpp (module benchmark_ops).

Scalar parameters are baked in from the task's Model (or the DSL defaults); outputs whose shape at the
task's sizes differs from the task's results (e.g. keepdim) are reshaped to them in ModelNew; kernel inputs
that are the Model's parameters come from ModelNew, a subclass of the task's Model (ExportFacts)."""

from __future__ import annotations

from ascend_dsl import ir
from lowering import EmittedProject, PassContext
from lowering.emit import render, view_fields

from . import cxx

FORMAT_VERSION = "0.1"


def tensor_view(p: ir.TensorParam) -> dict:
    return {"name": p.name, "rank": len(p.shape), "dtype": str(p.dtype), "at_type": cxx.AT_TYPE[p.dtype.value],
            "torch_dtype": cxx.TORCH_DTYPE[p.dtype.value]}


def pybind_source(kernel: ir.Kernel, view: dict, op: str, sizes: tuple = ()) -> str:
    lines = cxx.symbol_lines(kernel, lambda i, p, a: f"ViewDim({p.name}, {len(p.shape)}, {a})",
                             lambda cond, msg: f'TORCH_CHECK({cond}, "{op}: {msg}");', sizes)
    outputs = []
    for p in kernel.outputs:
        like, dims = cxx.output_dims(kernel, p)
        outputs.append({"name": p.name, "at_type": cxx.AT_TYPE[p.dtype.value],
                        "shape": f"{like}.sizes()" if like else "{" + ", ".join(f"static_cast<int64_t>({d})"
                                                                                  for d in dims) + "}"})
    names = [o["name"] for o in outputs]
    multi = len(names) > 1
    tiling_error = view["tiling_error"]
    return render("mkb_pybind11.cpp.jinja", **{**view, "op": op, "inputs": [tensor_view(p) for p in kernel.inputs],
                  "symbol_lines": lines, "outputs": outputs, "first": kernel.inputs[0].name,
                  "result_type": "std::vector<at::Tensor>" if multi else "at::Tensor",
                  "result_expr": ("std::vector<at::Tensor>{" + ", ".join(names) + "}") if multi else names[0],
                  "tiling_error": tiling_error.replace('"', "'")})


def model_view(kernel: ir.Kernel, facts) -> dict:
    """What both exports' ModelNew templates take from ExportFacts."""
    return {"op": facts.op, "inputs": [tensor_view(p) for p in kernel.inputs],
            "scalars": [{"name": p.name, "value": repr(float(facts.scalars[p.name]))} for p in kernel.scalars],
            "reshapes": list(facts.reshapes), "params": list(facts.params), "model_source": facts.model_source}


def model_source(kernel: ir.Kernel, view: dict, facts) -> str:
    return render("mkb_model_new.py.jinja", **{**view, **model_view(kernel, facts)})


def submission(kernel: ir.Kernel, project: EmittedProject, ctx: PassContext, facts) -> dict:
    """The ascendc_direct_launch JSON object for `kernel` and the task's export.ExportFacts."""
    op = facts.op
    view = view_fields(project.view)
    name = project.name
    kernel_cpp = project.files[f"{name}_kernel.cpp"] + render("mkb_kernel_launch.cpp.jinja", **view, op=op)
    sources = {
        "ModelNew.py": model_source(kernel, view, facts),
        f"kernel/{op}_launch.h": render("mkb_launch.h.jinja", **view, op=op),
        f"kernel/{op}_kernel.cpp": kernel_cpp,
        f"kernel/{name}_tiling.h": project.files[f"{name}_tiling.h"],
        "kernel/pybind11.cpp": pybind_source(kernel, view, op, facts.sizes),
    }
    return {
        "name": f"ascend_dsl_{op}", "author": "ascend-dsl", "problem": op, "format_version": FORMAT_VERSION,
        "description": f"ascend-dsl kernel {name} ({project.manifest['source']}, {ctx.target.name}) lowered to AscendC, "
                       "launched directly with <<<>>> through a PyTorch pybind module.",
        "entry": {"model": "ModelNew.py::ModelNew"},
        "build": {"type": "ascendc_direct_launch"},
        "sources": [{"path": path, "content": text} for path, text in sources.items()],
    }
