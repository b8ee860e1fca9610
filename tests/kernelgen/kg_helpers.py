"""Shared helpers for kernelgen tests (a plain module: `conftest` names clash across test folders)."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GALLERY = REPO / "examples" / "activation"


def gallery_answer(name: str) -> str:
    return (GALLERY / f"{name}.adsl").read_text()


def write_replay(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path
