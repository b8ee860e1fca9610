"""C++ spellings shared by the MultiKernelBench exports: ATen scalar types, torch dtype names and the
shape-symbol lines that bind a kernel's declared dimensions to runtime tensor sizes."""

from __future__ import annotations

from collections.abc import Callable

from ascend_dsl import ir

AT_TYPE = {"f32": "at::kFloat", "f16": "at::kHalf", "bf16": "at::kBFloat16", "i32": "at::kInt", "i64": "at::kLong",
           "i16": "at::kShort", "i8": "at::kChar", "u8": "at::kByte", "bool": "at::kBool"}
TORCH_DTYPE = {"f32": "torch.float32", "f16": "torch.float16", "bf16": "torch.bfloat16", "i32": "torch.int32",
               "i64": "torch.int64", "i16": "torch.int16", "i8": "torch.int8", "u8": "torch.uint8", "bool": "torch.bool"}
GE_TYPE = {"f32": "ge::DT_FLOAT", "f16": "ge::DT_FLOAT16", "bf16": "ge::DT_BF16", "i32": "ge::DT_INT32",
           "i64": "ge::DT_INT64", "i16": "ge::DT_INT16", "i8": "ge::DT_INT8", "u8": "ge::DT_UINT8", "bool": "ge::DT_BOOL"}
JSON_TYPE = {"f32": "float", "f16": "float16", "bf16": "bfloat16", "i32": "int32", "i64": "int64", "i16": "int16",
             "i8": "int8", "u8": "uint8", "bool": "bool"}


def symbol_lines(kernel: ir.Kernel, dim: Callable[[int, ir.TensorParam, int], str], check: Callable[[str, str], str],
                 sizes: tuple = ()) -> list[str]:
    """C++ lines defining each shape symbol from the first input that declares it (`const int64_t N = ...;`)
    and checking every other declared dimension against it: `dim(index, param, axis)` is the runtime size
    expression, `check(condition, message)` a failing-check statement. `sizes` (ExportFacts.sizes: the task's
    symbols, when some output dims are determined by no input) pins every input symbol to the task's value and
    defines the others as constants: the export is then valid at the task's sizes only, and says so."""
    lines: list[str] = []
    seen: set[str] = set()
    for i, p in enumerate(kernel.inputs):
        for axis, d in enumerate(p.shape):
            expr = dim(i, p, axis)
            if isinstance(d, int):
                lines.append(check(f"{expr} == {d}", f"'{p.name}' dimension {axis} must be {d}"))
            elif d in seen:
                lines.append(check(f"{expr} == {d}", f"shape symbol {d} differs between tensors ('{p.name}')"))
            else:
                seen.add(d)
                lines.append(f"const int64_t {d} = {expr};")
    for d, value in sizes:
        if d in seen:
            lines.append(check(f"{d} == {value}", f"exported for the task's sizes: {d} must be {value}"))
        else:
            lines.append(f"const int64_t {d} = {value};  // the task's size: no input tensor determines it")
    return lines


def output_dims(kernel: ir.Kernel, p: ir.TensorParam) -> tuple[str | None, list[str]]:
    """(the input whose shape the output takes, or None; else the output's dims as C++ expressions)."""
    for q in kernel.inputs:
        if q.shape == p.shape:
            return q.name, []
    return None, [str(d) for d in p.shape]
