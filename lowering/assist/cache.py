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


class DecisionCache:
    def __init__(self, directory: Path | None = None):
        self.dir = Path(directory) if directory is not None else default_dir()

    def path(self, kernel: ir.Kernel, target: str, decision: str) -> Path:
        return self.dir / f"{kernel.name}.{decision}.{target}.{key(kernel, target, decision)[:24]}.json"

    def get(self, kernel: ir.Kernel, target: str, decision: str) -> dict | None:
        p = self.path(kernel, target, decision)
        try:
            data = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError):
            return None
        if not isinstance(data, dict) or data.get("key") != key(kernel, target, decision):
            return None
        return data.get("record")

    def put(self, kernel: ir.Kernel, target: str, decision: str, record: dict) -> Path:
        p = self.path(kernel, target, decision)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp")
        tmp.write_text(json.dumps({"key": key(kernel, target, decision), "record": record}, indent=1) + "\n")
        os.replace(tmp, p)
        return p
