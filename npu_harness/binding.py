"""Bind a kernel's parameters to one case of a task (the rules: npu_harness.task_binding).

Inputs (tensors the kernel only loads) bind to forward()'s tensor arguments in order, then to the Model's
parameters and buffers by name ('.' -> '_'); outputs (tensors it stores) bind to forward()'s results in
order. A rank-1 declaration ("N") views any contiguous tensor flat; a rank-2 declaration ("B, D") views it
as rows of its last dimension; higher ranks bind dimension by dimension. Scalar parameters take forward()'s
number argument, the Model's or a submodule's attribute of that name, or the case's attribute; else their
DSL default, which the binding records so the caller can say so.

Tensors are bound as `npu_harness.arrays.HostArray` (numpy; torch tensors are converted) or, for shapes
only, `npu_harness.task_result.TensorShape`, so binding never imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ascend_dsl import ir, views
from ascend_dsl.diagnostics import DslError

from .arrays import as_host, type_name
from .task_binding import FLOATS, ScalarLookup, as_number, match_inputs
from .task_result import is_tensor


@dataclass
class Binding:
    tensors: dict  # name -> HostArray (inputs: values; outputs: reference results) or TensorShape
    symbols: dict[str, int]
    scalars: dict[str, float]
    origins: dict[str, str] = field(default_factory=dict)  # scalar name -> where its value came from
    defaults: list[str] = field(default_factory=list)  # scalars nothing in the task bound: the kernel's default

    def scalar_line(self) -> str | None:
        """One line naming every scalar's value and source, or None for a kernel without scalars."""
        if not self.scalars:
            return None
        parts = [f"{k}={self.scalars[k]:g} ({'kernel default: the task has no value of that name' if k in self.defaults else self.origins[k]})"
                 for k in self.scalars]
        return "scalars: " + ", ".join(parts)


def view_dims(rank: int, shape: tuple[int, ...]) -> list[int]:
    """How a declared rank views a tensor: rank 1 flat (all elements); rank 2 as rows of the last
    dimension (leading dimensions merged, e.g. [A, R, C] as A*R rows of C); else dimension by dimension."""
    numel = 1
    for d in shape:
        numel *= d
    if rank == 1:
        return [numel]
    if rank == 2 and len(shape) > 2:
        return [numel // shape[-1] if shape[-1] else 0, shape[-1]]
    return list(shape)


def for_case(e: DslError, label: str) -> DslError:
    """The error with its messages prefixed by the case ("case 3: ...")."""
    return DslError(*(replace(d, message=f"{label}: {d.message}") for d in e.diagnostics))


def _describe(t) -> str:
    return f"{t.dtype} {list(t.shape)}"


def _tensor_error(kernel: ir.Kernel, match, arg_names: list[str], args: list, params: dict) -> DslError:
    ins = kernel.inputs
    if match.untaken_args:
        return DslError.at("BINDING", f"kernel '{kernel.name}' has {len(ins)} input tensor(s) "
                           f"({', '.join(p.name for p in ins) or 'none'}) but forward() takes {len(args)} "
                           f"({', '.join(arg_names)})", kernel.span,
                           "inputs are the tensors the kernel only loads: forward()'s tensors in order, then the "
                           "Model's parameters and buffers by name")
    lines = []
    if match.missing:
        lines.append(f"kernel input(s) {', '.join(match.missing)} are neither forward() tensors (it takes {len(args)}: "
                     f"{', '.join(arg_names) or 'none'}) nor parameters or buffers of the Model")
    if match.extra:
        lines.append(f"the Model's parameter(s)/buffer(s) {', '.join(match.extra)} are not kernel inputs: a kernel "
                     "takes every one (else it would pass against default weights and fail on trained ones)")
    have = ", ".join(f"{k} ({_describe(t)})" for k, t in params.items()) or "none"
    span = next((p.span for p in ins if p.name in match.missing), kernel.span)
    return DslError.at("BINDING", "; ".join(lines) + f". The Model has: {have}", span,
                       "after forward()'s tensors, declare one input per parameter/buffer, named by its state_dict "
                       "name with '.' -> '_' (fc.weight -> fc_weight)")


def _broadcast_hint(args: list) -> str | None:
    shapes = [tuple(t.shape) for t in args]
    if len(set(shapes)) < 2:
        return None
    return (f"forward()'s tensors have shapes {', '.join(str(list(s)) for s in shapes)}: the task broadcasts them, "
            "and this kernel takes every tensor at one shape; a [D] row vector broadcasts with load(w[:]), a "
            "[B] column with load(c[r])")


def bind(kernel: ir.Kernel, run) -> Binding:
    """Bind `kernel` to one case (npu_harness.task.TaskRun; its tensors HostArray, TensorShape or torch)."""
    inputs = [as_host(t) for t in run.inputs]
    outputs = [as_host(t) for t in run.outputs]
    params = {k: as_host(t) for k, t in (run.params or {}).items()}
    args = [t for t in inputs if is_tensor(t)]
    names = list(run.arg_names or []) + [f"arg{i}" for i in range(len(run.arg_names or []), len(inputs))]
    arg_names = [names[i] for i, t in enumerate(inputs) if is_tensor(t)]
    match = match_inputs([p.name for p in kernel.inputs], len(args),
                         {k: t.dtype in FLOATS for k, t in params.items()})
    if not match.ok:
        raise _tensor_error(kernel, match, arg_names, args, params)
    if len(outputs) != len(kernel.outputs):
        raise DslError.at("BINDING", f"kernel '{kernel.name}' stores {len(kernel.outputs)} output tensor(s) but "
                          f"forward() returns {len(outputs)}", kernel.span)
    tensors = {}
    for p, (kind, src) in zip(kernel.inputs, match.sources, strict=True):
        tensors[p.name] = args[src] if kind == "arg" else params[src]
    for p, t in zip(kernel.outputs, outputs, strict=True):
        if not is_tensor(t):
            raise DslError.at("BINDING", f"'{p.name}' must bind to a tensor, got {type_name(t)}", p.span)
        tensors[p.name] = t
    symbols = bind_symbols(kernel, tensors, _broadcast_hint(args))
    number_args = dict(getattr(run, "args", None) or {})
    if not number_args:
        number_args = {names[i]: x for i, x in enumerate(inputs) if as_number(x) is not None}
    lookup = ScalarLookup(number_args, dict(run.attrs or {}), dict(getattr(run, "sub_attrs", None) or {}),
                          dict(getattr(run, "case_attrs", None) or {}))
    scalars, origins, defaults = _bind_scalars(kernel, lookup)
    if kernel.views:  # shape symbols a view defines (G=num_groups, L=N / num_groups): SHAPE if inexact
        symbols |= views.bind_symbols(kernel, symbols, scalars)
    return Binding(tensors, symbols, scalars, origins, defaults)


def bind_symbols(kernel: ir.Kernel, tensors: dict, hint: str | None = None, what: str = "the task's tensor"
                 ) -> dict[str, int]:
    """The shape symbols of the kernel's tensors bound to `tensors` (name -> anything with a shape; torch's
    symbolic sizes work too); `what` names the tensors in errors."""
    symbols: dict[str, int] = {}
    for p in kernel.inputs + kernel.outputs:
        shape = tuple(tensors[p.name].shape)
        dims = view_dims(len(p.shape), shape)
        if len(dims) != len(p.shape):
            raise DslError.at("BINDING", f"'{p.name}' is declared with rank {len(p.shape)} but {what} has shape "
                              f"{shape}", p.span)
        for d, actual in zip(p.shape, dims, strict=True):
            if isinstance(d, int) and d != actual:
                raise DslError.at("BINDING", f"'{p.name}' expects size {d} but got {actual}", p.span)
            if isinstance(d, str) and symbols.setdefault(d, actual) != actual:
                raise DslError.at("BINDING", f"shape symbol {d} is {symbols[d]} for one tensor and {actual} for "
                                  f"'{p.name}'", p.span, hint)
    return symbols


def _bind_scalars(kernel: ir.Kernel, lookup: ScalarLookup) -> tuple[dict, dict, list]:
    scalars: dict[str, float] = {}
    origins: dict[str, str] = {}
    defaults: list[str] = []
    for p in kernel.scalars:
        found = lookup.find(p.name)
        if isinstance(found, list):
            raise DslError.at("BINDING", f"scalar '{p.name}' matches several submodule attributes with different "
                              f"values: {', '.join(f'{s.origin}={s.value}' for s in found)}", p.span,
                              f"name the one you mean: {', '.join(s.origin.replace('.', '_') for s in found)}")
        if found is None:
            if p.default is None:
                raise DslError.at("BINDING", f"no value for scalar '{p.name}': no forward() argument, Model or "
                                  "submodule attribute has that name and the kernel gives no default", p.span,
                                  "name the scalar after the attribute (avg_pool.stride -> avg_pool_stride or stride)")
            scalars[p.name] = p.default
            defaults.append(p.name)
            continue
        value = as_number(found.value)
        if value is None:
            raise DslError.at("BINDING", f"scalar '{p.name}' binds to {found.origin} = {found.value!r}, which is not "
                              "one number", p.span)
        scalars[p.name] = value
        origins[p.name] = found.origin
    return scalars, origins, defaults

