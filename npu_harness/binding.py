"""Bind a kernel's parameters to a task's tensors.

Inputs (tensors the kernel only loads) bind to forward() arguments in order; outputs (tensors it
stores) bind to forward()'s results in order. A rank-1 declaration ("N") views any contiguous
tensor flat; a rank-2 declaration ("B, D") views it as rows of its last dimension; higher ranks bind
dimension by dimension. Scalar parameters take the Model attribute
of the same name, else their DSL default.

Tensors are bound as `npu_harness.arrays.HostArray` (numpy; torch tensors are converted), so
binding never imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError

from .arrays import HostArray, as_host, type_name


@dataclass
class Binding:
    tensors: dict[str, HostArray]  # name -> inputs: values; outputs: reference results
    symbols: dict[str, int]
    scalars: dict[str, float]


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


def bind(kernel: ir.Kernel, inputs: list, outputs: list, attrs: dict) -> Binding:
    inputs = [as_host(t) for t in inputs]
    outputs = [as_host(t) for t in outputs]
    tensor_inputs = [t for t in inputs if isinstance(t, HostArray)]
    if len(tensor_inputs) != len(kernel.inputs):
        raise DslError.at("BINDING", f"kernel '{kernel.name}' has {len(kernel.inputs)} input tensor(s) "
                          f"({', '.join(p.name for p in kernel.inputs) or 'none'}) but forward() takes "
                          f"{len(tensor_inputs)}", kernel.span,
                          "inputs are the tensors the kernel only loads, in forward() order")
    if len(outputs) != len(kernel.outputs):
        raise DslError.at("BINDING", f"kernel '{kernel.name}' stores {len(kernel.outputs)} output tensor(s) but "
                          f"forward() returns {len(outputs)}", kernel.span)
    for p, t in list(zip(kernel.inputs, tensor_inputs, strict=True)) + list(zip(kernel.outputs, outputs, strict=True)):
        if not isinstance(t, HostArray):
            raise DslError.at("BINDING", f"'{p.name}' must bind to a tensor, got {type_name(t)}", p.span)
    symbols, scalars = bind_shapes(kernel, [tuple(t.shape) for t in tensor_inputs], [tuple(t.shape) for t in outputs],
                                   attrs)
    tensors = {p.name: t for p, t in zip(kernel.inputs + kernel.outputs, tensor_inputs + outputs, strict=True)}
    return Binding(tensors, symbols, scalars)


def bind_shapes(kernel: ir.Kernel, input_shapes: list[tuple[int, ...]], output_shapes: list[tuple[int, ...]],
                attrs: dict) -> tuple[dict[str, int], dict[str, float]]:
    """The shape symbols and scalar parameters of a kernel bound to tensors of these shapes (the
    inputs, then the outputs, in order) and to the Model's attributes. Needs no tensor data."""
    if len(input_shapes) != len(kernel.inputs):
        raise DslError.at("BINDING", f"kernel '{kernel.name}' has {len(kernel.inputs)} input tensor(s) "
                          f"({', '.join(p.name for p in kernel.inputs) or 'none'}) but forward() takes "
                          f"{len(input_shapes)}", kernel.span,
                          "inputs are the tensors the kernel only loads, in forward() order")
    if len(output_shapes) != len(kernel.outputs):
        raise DslError.at("BINDING", f"kernel '{kernel.name}' stores {len(kernel.outputs)} output tensor(s) but "
                          f"forward() returns {len(output_shapes)}", kernel.span)
    symbols: dict[str, int] = {}
    for p, shape in zip(kernel.inputs + kernel.outputs, list(input_shapes) + list(output_shapes), strict=True):
        dims = view_dims(len(p.shape), shape)
        if len(dims) != len(p.shape):
            raise DslError.at("BINDING", f"'{p.name}' is declared with rank {len(p.shape)} but the task's tensor has "
                              f"shape {shape}", p.span)
        for d, actual in zip(p.shape, dims, strict=True):
            if isinstance(d, int) and d != actual:
                raise DslError.at("BINDING", f"'{p.name}' expects size {d} but got {actual}", p.span)
            if isinstance(d, str) and symbols.setdefault(d, actual) != actual:
                raise DslError.at("BINDING", f"shape symbol {d} is {symbols[d]} for one tensor and {actual} for "
                                  f"'{p.name}'", p.span)
    scalars: dict[str, float] = {}
    for p in kernel.scalars:
        if p.name in attrs:
            scalars[p.name] = attrs[p.name]
        elif p.default is not None:
            scalars[p.name] = p.default
        else:
            raise DslError.at("BINDING", f"no value for scalar '{p.name}': the Model has no attribute of that name "
                              "and the kernel gives no default", p.span)
    return symbols, scalars
