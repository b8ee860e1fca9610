"""The task worker's result file: every case of a task run (inputs, parameters, reference outputs, the values
scalars bind to, the dtype variant picked) as one uncompressed `.npz`, readable without torch.

Tensors are `HostArray` (numpy storage; bf16 as uint16 bits) or, for a run on the meta device, `TensorShape`
(shape and dtype only).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .arrays import HostArray, Opaque


@dataclass(frozen=True)
class TensorShape:
    """A tensor known by its shape and dtype only (a meta-device run: no data)."""

    shape: tuple[int, ...]
    dtype: str

    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


def is_tensor(x) -> bool:
    return isinstance(x, (HostArray, TensorShape))


def _encode(x, key: str, arrays: dict[str, np.ndarray]) -> dict:
    if isinstance(x, HostArray):
        arrays[key] = x.data
        return {"kind": "tensor", "dtype": x.dtype}
    if isinstance(x, TensorShape):
        return {"kind": "shape", "shape": list(x.shape), "dtype": x.dtype}
    try:
        json.dumps(x)
        return {"kind": "value", "value": x}
    except (TypeError, ValueError):
        return {"kind": "opaque", "type": type(x).__name__}


def _decode(meta: dict, key: str, npz) -> object:
    kind = meta["kind"]
    if kind == "tensor":
        return HostArray(npz[key], meta["dtype"])
    if kind == "shape":
        return TensorShape(tuple(meta["shape"]), meta["dtype"])
    if kind == "value":
        return meta["value"]
    return Opaque(meta["type"])


TENSOR_FIELDS = ("inputs", "outputs")


def save_cases(path: Path, result: dict) -> None:
    """result: {"cases": [{"inputs": [...], "outputs": [...], "params": {name: tensor}, other JSON fields}],
    other JSON fields}; tensors as HostArray or TensorShape."""
    arrays: dict[str, np.ndarray] = {}
    cases = []
    for i, case in enumerate(result["cases"]):
        meta = {k: v for k, v in case.items() if k not in (*TENSOR_FIELDS, "params")}
        for f in TENSOR_FIELDS:
            meta[f] = [_encode(x, f"c{i}_{f}{j}", arrays) for j, x in enumerate(case.get(f, []))]
        meta["params"] = {name: _encode(x, f"c{i}_p{j}", arrays) for j, (name, x) in enumerate(case.get("params", {}).items())}
        cases.append(meta)
    meta = {**{k: v for k, v in result.items() if k != "cases"}, "cases": cases}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    with open(path, "wb") as f:  # straight to the file: a large result is not buffered in memory first
        np.savez(f, **arrays)


def load_cases(path: Path) -> dict:
    """save_cases' dict back, tensors as HostArray / TensorShape."""
    with np.load(path, allow_pickle=False) as npz:
        meta = json.loads(npz["meta"].tobytes().decode())
        for i, case in enumerate(meta["cases"]):
            for f in TENSOR_FIELDS:
                case[f] = [_decode(m, f"c{i}_{f}{j}", npz) for j, m in enumerate(case[f])]
            case["params"] = {name: _decode(m, f"c{i}_p{j}", npz) for j, (name, m) in enumerate(case["params"].items())}
    return meta
