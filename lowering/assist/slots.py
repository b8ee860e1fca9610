"""The template slot of an extern op's compute stage: the C++ function the compiler calls for one tile
(`MishSlot(dst, src0, count);`, emitted by select_instructions like any instruction), whose signature,
buffer names, sizes and dtypes the compiler fixes and whose body a model writes. `definition` wraps an
admitted body; `inject` adds the definitions to the emitted kernel file."""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl.dtypes import DType
from ascend_dsl.extern_ops import ExternOp

#: Bumped when the slot's contract changes (the library keys accepted code by it).
SLOT_FORMAT = "ascend-dsl-slot-v1"
ANCHOR = "using namespace AscendC;\n"


def params(op: ExternOp) -> list[str]:
    return ["dst", *(f"src{i}" for i in range(op.arity)), "count"]


def signature(op: ExternOp, dtype: DType) -> str:
    c = dtype.ctype
    args = [f"const LocalTensor<{c}>& dst", *(f"const LocalTensor<{c}>& src{i}" for i in range(op.arity)),
            "uint32_t count"]
    return f"__aicore__ inline void {op.slot_api}({', '.join(args)})"


def contract(op: ExternOp, dtype: DType) -> str:
    srcs = ", ".join(f"src{i}" for i in range(op.arity))
    return (f"dst: `count` elements of {dtype} ({dtype.ctype}) in UB, 32-byte aligned; write every one of them. "
            f"{srcs}: `count` elements each, read only (never write them). dst never aliases a source. count: the "
            "tile's length, any value from 1 up (tail tiles are not a multiple of anything). There is no other "
            "buffer: use dst as scratch. Vector instructions take `count` (or fewer) elements.")


def definition(op: ExternOp, dtype: DType, body: str) -> str:
    lines = [f"// {op.name} ({dtype}): compute stage written by a model and checked before use (lowering/assist/)",
             signature(op, dtype), "{", f"    using T = {dtype.ctype};"]
    lines += [f"    {ln}" if ln.strip() else "" for ln in body.strip("\n").splitlines()]
    return "\n".join([*lines, "}"]) + "\n"


def inject(project, definitions: list[str]):
    """The project with the slot definitions placed before the kernel class."""
    if not definitions:
        return project
    name = f"{project.name}_kernel.cpp"
    text = project.files[name]
    cut = text.index(ANCHOR) + len(ANCHOR)
    text = text[:cut] + "\n" + "\n".join(definitions) + text[cut:]
    return replace(project, files={**project.files, name: text})
