"""Accepted decisions, cached per (kernel, target, decision): a rebuild applies them without a model and
emits the same files byte for byte (the manifest carries the same provenance record).

The key is a hash of the kernel as checked (printed as DSL: dtypes, shapes, tile loops and expressions),
the target and the decision; one JSON file per key under the cache directory (default
`$ASCEND_DSL_CACHE/assist`, else `~/.cache/ascend-dsl/assist`)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ascend_dsl import ir, printer

#: Bumped when the meaning of a cached decision changes (knob names, answer format).
FORMAT = "ascend-dsl-assist-v1"


def default_dir() -> Path:
    env = os.environ.get("ASCEND_DSL_CACHE")
    return (Path(env) if env else Path.home() / ".cache" / "ascend-dsl") / "assist"


def key(kernel: ir.Kernel, target: str, decision: str) -> str:
    text = "\n".join([FORMAT, decision, target, printer.kernel(kernel)])
    return hashlib.sha256(text.encode()).hexdigest()


def read_record(p: Path, expected_key: str) -> dict | None:
    """The record stored at `p` under `expected_key` (None: no file, unreadable, or another key)."""
    try:
        data = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("key") != expected_key or not isinstance(data.get("record"), dict):
        return None
    return data["record"]


def write_record(p: Path, stored_key: str, record: dict) -> Path:
    """Store `record` under `stored_key` at `p` (written whole, then renamed: readers never see half a file)."""
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps({"key": stored_key, "record": record}, indent=1) + "\n")
    os.replace(tmp, p)
    return p


class DecisionCache:
    def __init__(self, directory: Path | None = None):
        self.dir = Path(directory) if directory is not None else default_dir()

    def path(self, kernel: ir.Kernel, target: str, decision: str) -> Path:
        return self.dir / f"{kernel.name}.{decision}.{target}.{key(kernel, target, decision)[:24]}.json"

    def get(self, kernel: ir.Kernel, target: str, decision: str) -> dict | None:
        return read_record(self.path(kernel, target, decision), key(kernel, target, decision))

    def put(self, kernel: ir.Kernel, target: str, decision: str, record: dict) -> Path:
        return write_record(self.path(kernel, target, decision), key(kernel, target, decision), record)
