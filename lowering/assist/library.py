"""The local library of accepted compute stages: slot code that passed admission and the emulator, keyed by
the operation's signature and the target it was checked for (name, arity, dtype, target, the hash of its
PyTorch reference's source, the slot format), reused without a model. One JSON file per entry under `$ASCEND_DSL_CACHE/assist/slots` (default
`~/.cache/ascend-dsl/assist/slots`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ascend_dsl.dtypes import DType
from ascend_dsl.extern_ops import ExternOp

from .cache import default_dir, read_record, write_record
from .slots import SLOT_FORMAT


def key(op: ExternOp, dtype: DType, target: str) -> str:
    text = "\n".join([SLOT_FORMAT, op.name, str(op.arity), dtype.value, target, op.signature_hash])
    return hashlib.sha256(text.encode()).hexdigest()


class SlotLibrary:
    def __init__(self, directory: Path | None = None):
        self.dir = Path(directory) if directory is not None else default_dir() / "slots"

    def path(self, op: ExternOp, dtype: DType, target: str) -> Path:
        return self.dir / f"{op.name}.{dtype.value}.{target}.{key(op, dtype, target)[:24]}.json"

    def get(self, op: ExternOp, dtype: DType, target: str) -> dict | None:
        return read_record(self.path(op, dtype, target), key(op, dtype, target))

    def put(self, op: ExternOp, dtype: DType, target: str, record: dict) -> Path:
        return write_record(self.path(op, dtype, target), key(op, dtype, target), record)
