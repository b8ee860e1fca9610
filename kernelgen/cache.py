"""Per-(task, sample) result cache: one JSON file each, keyed by the task's content hash, the
sample index and everything that changes the answer (provider, model, prompt version, settings).
An interrupted evaluation resumes by skipping the units whose file exists."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path


def unit_key(task_hash: str, sample: int, settings: dict) -> str:
    blob = json.dumps({"task": task_hash, "sample": sample, **settings}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


class ResultCache:
    def __init__(self, root: Path | None):
        self.root = root

    def path(self, task_name: str, key: str) -> Path | None:
        return self.root / f"{task_name}-{key}.json" if self.root else None

    def get(self, task_name: str, key: str) -> dict | None:
        p = self.path(task_name, key)
        if p is None or not p.is_file():
            return None
        try:
            return json.loads(p.read_text())
        except (OSError, json.JSONDecodeError):
            return None

    def put(self, task_name: str, key: str, record: dict) -> None:
        p = self.path(task_name, key)
        if p is None:
            return
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(record, indent=1))
        tmp.replace(p)  # atomic: a killed run never leaves a half-written record
