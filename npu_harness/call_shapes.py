"""Shapes of a kernel called on tensors (the torch op, the MultiKernelBench export): the shape symbols the
input tensors give, and the output shapes. Rule (docs/npu.md): an output declared with the same
dimensions as an input takes that input's actual shape (so `y: Tensor[T, "N"]` of `x: Tensor[T, "N"]`
comes back shaped like x); any other output has the shape of its declared dimensions ("B" -> [B],
"M, N" -> [M, N]). Works on ints and on torch's symbolic sizes alike; never imports torch."""

from __future__ import annotations

from ascend_dsl import KernelCallError, ir

from .binding import view_dims


def symbols_from(params, shapes) -> dict:
    """Shape symbols from tensors of these shapes (first occurrence wins; binding.bind_shapes checks the rest)."""
    symbols: dict = {}
    for p, shape in zip(params, shapes, strict=True):
        dims = view_dims(len(p.shape), tuple(shape))
        if len(dims) == len(p.shape):
            for d, actual in zip(p.shape, dims, strict=True):
                if isinstance(d, str):
                    symbols.setdefault(d, actual)
    return symbols


def output_shapes(kernel: ir.Kernel, input_shapes: list) -> list[tuple]:
    symbols = symbols_from(kernel.inputs, input_shapes)
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
