"""Host arrays: task inputs and reference outputs as numpy, so the parent process never imports torch.

The task worker (a subprocess that imports torch) writes every tensor as raw storage in one `.npz` file
(npu_harness.task_result); the parent binds, feeds the emulator and compares with numpy only. numpy has no
bfloat16, so a bf16 tensor travels as its uint16 bit patterns (exact) with the dtype name kept beside it;
`to_float64()` widens every dtype exactly (bf16 bits << 16 are the float32 bits of the same value).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

#: torch dtype name -> numpy storage dtype (bfloat16: raw uint16 bits)
STORAGE = {"float32": np.float32, "float16": np.float16, "bfloat16": np.uint16, "float64": np.float64,
           "int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8,
           "bool": np.bool_}

#: DSL dtype (ascend_dsl.dtypes.DType.value) -> torch dtype name
TORCH_NAME = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "i32": "int32", "i64": "int64", "i16": "int16",
              "i8": "int8",
              "u8": "uint8", "bool": "bool"}


@dataclass(frozen=True)
class HostArray:
    """A tensor's values: `data` holds the storage (uint16 bits for bfloat16), `dtype` the torch name."""

    data: np.ndarray
    dtype: str

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.data.shape)

    def numel(self) -> int:
        return int(self.data.size)

    def tobytes(self) -> bytes:
        return np.ascontiguousarray(self.data).tobytes()

    def to_float64(self) -> np.ndarray:
        """Every element widened exactly to float64."""
        if self.dtype == "bfloat16":
            return (self.data.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        return self.data.astype(np.float64)

    @classmethod
    def from_bytes(cls, data: bytes, dtype: str, shape: tuple[int, ...]) -> HostArray:
        arr = np.frombuffer(data, dtype=STORAGE[dtype])
        return cls(arr.reshape(shape), dtype)

    def to_torch(self):
        """A torch tensor with the same dtype and values (imports torch)."""
        import torch

        t = torch.from_numpy(np.array(self.data, copy=True))
        return t.view(torch.bfloat16) if self.dtype == "bfloat16" else t


def is_torch_tensor(x) -> bool:
    torch = sys.modules.get("torch")  # never import torch just to ask
    return torch is not None and isinstance(x, torch.Tensor)


def torch_dtype_name(t) -> str:
    return repr(t.dtype).removeprefix("torch.")


def from_torch(t) -> HostArray:
    """A host view of a (CPU) torch tensor (shares its memory when it is contiguous; not copied, so
    a task's 6 GB input is not held twice)."""
    import torch

    t = t.detach().contiguous().cpu()
    name = torch_dtype_name(t)
    if name not in STORAGE:
        raise TypeError(f"unsupported tensor dtype {t.dtype}")
    if t.dtype == torch.bfloat16:
        return HostArray(t.view(torch.int16).numpy().view(np.uint16), name)
    return HostArray(t.numpy(), name)


def as_host(x):
    """HostArray for a HostArray or a torch tensor; anything else unchanged."""
    if isinstance(x, HostArray):
        return x
    if is_torch_tensor(x):
        return from_torch(x)
    return x


@dataclass(frozen=True)
class Opaque:
    """A task value that is neither a tensor nor a JSON value (only its type name travels)."""

    type_name: str


def type_name(x) -> str:
    return x.type_name if isinstance(x, Opaque) else type(x).__name__
