"""Element types of the DSL and their C++ / torch spellings."""

from __future__ import annotations

from enum import Enum


class DType(Enum):
    F16 = "f16"
    BF16 = "bf16"
    F32 = "f32"
    I32 = "i32"
    I64 = "i64"  # loads only: class indices (torch's default integer dtype)
    I16 = "i16"
    I8 = "i8"
    U8 = "u8"
    BOOL = "bool"  # comparison results (a bit mask in UB)

    @property
    def size(self) -> int:
        return _SIZE[self]

    @property
    def ctype(self) -> str:
        return _CTYPE[self]

    @property
    def is_float(self) -> bool:
        return self in (DType.F16, DType.BF16, DType.F32)

    @property
    def torch(self):
        import torch

        return {
            DType.F16: torch.float16,
            DType.BF16: torch.bfloat16,
            DType.F32: torch.float32,
            DType.I32: torch.int32,
            DType.I64: torch.int64,
            DType.I16: torch.int16,
            DType.I8: torch.int8,
            DType.U8: torch.uint8,
            DType.BOOL: torch.bool,
        }[self]

    def __str__(self) -> str:
        return self.value


_SIZE = {DType.F16: 2, DType.BF16: 2, DType.F32: 4, DType.I32: 4, DType.I64: 8, DType.I16: 2, DType.I8: 1, DType.U8: 1, DType.BOOL: 1}
_CTYPE = {
    DType.F16: "half",
    DType.BF16: "bfloat16_t",
    DType.F32: "float",
    DType.I32: "int32_t",
    DType.I64: "int64_t",
    DType.I16: "int16_t",
    DType.I8: "int8_t",
    DType.U8: "uint8_t",
    DType.BOOL: "uint8_t",
}

#: Names usable in annotations and cast(); `bool` is internal (masks).
BY_NAME: dict[str, DType] = {d.value: d for d in DType if d is not DType.BOOL}


def from_torch(dt) -> DType | None:
    for d in DType:
        if d is not DType.BOOL and d.torch == dt:
            return d
    return None
