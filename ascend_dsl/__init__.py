"""ascend-dsl: a small DSL for Ascend NPU kernels (language layer)."""

from .api import (
    AIC,
    AIV,
    KernelCallError,
    KernelFunction,
    Tensor,
    auto,
    cast,
    kernel,
    load,
    register_runner,
    select,
    split,
    store,
    tile,
)
from .diagnostics import Diagnostic, DslError, Span
from .dtypes import DType
from .extern_ops import extern_op
from .parser import KernelSource, load_file, parse_text

bf16, f16, f32, i32, i64, i16, i8, u8 = (DType.BF16, DType.F16, DType.F32, DType.I32, DType.I64, DType.I16, DType.I8,
                                         DType.U8)

__all__ = [
    "AIC", "AIV", "Diagnostic", "DslError", "DType", "KernelCallError", "KernelFunction", "KernelSource", "Span", "Tensor",
    "auto", "bf16", "cast", "extern_op", "f16", "f32", "i16", "i32", "i64", "i8", "kernel", "load", "load_file",
    "parse_text", "register_runner", "select", "split",
    "store", "tile", "u8",
]
