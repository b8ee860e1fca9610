"""Shapes of a kernel called on tensors (the torch op, the MultiKernelBench export): the shape symbols the
input tensors give, and the output shapes. Rule (docs/npu.md): an output declared with the same
dimensions as an input takes that input's actual shape (so `y: Tensor[T, "N"]` of `x: Tensor[T, "N"]`
comes back shaped like x); any other output has the shape of its declared dimensions ("B" -> [B],
"M, N" -> [M, N]). Works on ints and on torch's symbolic sizes alike; never imports torch."""

from __future__ import annotations

from ascend_dsl import KernelCallError, ir, views
from ascend_dsl.diagnostics import DslError

from .binding import bind_symbols, view_dims
from .task_result import TensorShape


def symbols_from(params, shapes) -> dict:
    """Shape symbols from tensors of these shapes (first occurrence wins; bind_call checks the rest)."""
    symbols: dict = {}
    for p, shape in zip(params, shapes, strict=True):
        dims = view_dims(len(p.shape), tuple(shape))
        if len(dims) == len(p.shape):
            for d, actual in zip(p.shape, dims, strict=True):
                if isinstance(d, str):
                    symbols.setdefault(d, actual)
    return symbols


def output_shapes(kernel: ir.Kernel, input_shapes: list, known: dict | None = None) -> list[tuple]:
    """Output shapes from the inputs' shapes; `known` gives symbols no input determines (an export's task sizes)."""
    symbols = {**(known or {}), **symbols_from(kernel.inputs, input_shapes)}
    like: dict = {}
    for p, shape in zip(kernel.inputs, input_shapes, strict=True):
        like.setdefault(p.shape, tuple(shape))
    out = []
    for p in kernel.outputs:
        if p.shape in like:
            out.append(like[p.shape])
            continue
        missing = [d for d in p.shape if isinstance(d, str) and d not in symbols]
        if missing:
            raise KernelCallError.at("CALL-SHAPE", f"output '{p.name}' has dimension(s) {', '.join(missing)} that no "
                                     "input tensor determines", p.span,
                                     "pass every tensor (inputs and outputs) to write into given outputs")
        out.append(tuple(d if isinstance(d, int) else symbols[d] for d in p.shape))
    return out


def bind_call(kernel: ir.Kernel, input_shapes: list, output_shapes: list, scalars: dict) -> tuple[dict, dict]:
    """(shape symbols, scalar values) of a call: tensors of these shapes (inputs, then outputs) and the scalars
    passed by name, the others taking their DSL default. KernelCallError when they do not fit the declaration."""
    shapes = {p.name: TensorShape(tuple(s), "") for p, s in zip(kernel.inputs + kernel.outputs,
                                                                 list(input_shapes) + list(output_shapes), strict=True)}
    try:
        symbols = bind_symbols(kernel, shapes, what="the tensor passed")
    except DslError as e:
        raise KernelCallError(*e.diagnostics) from None
    values = {}
    for p in kernel.scalars:
        if p.name in scalars:
            values[p.name] = scalars[p.name]
        elif p.default is not None:
            values[p.name] = p.default
        else:
            raise KernelCallError.at("CALL", f"{kernel.name}: no value for scalar '{p.name}' (it has no default)",
                                     p.span, f"pass it by name: {kernel.name}(..., {p.name}=...)")
    if kernel.views:  # shape symbols a view defines (One=1, G=num_groups), as binding.bind adds them
        try:
            symbols |= views.bind_symbols(kernel, symbols, values)
        except DslError as e:
            raise KernelCallError(*e.diagnostics) from None
    return symbols, values
