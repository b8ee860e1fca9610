"""Task discovery: KernelBench / MultiKernelBench task files, one file or a folder tree.

A task file defines `Model` and either `get_inputs`/`get_init_inputs` (standard format) or
`get_input_groups` (the NPUKernelBench-imported variant, reading a sibling JSONL file). Task files
are only *read* here (text, hash, format detection by AST); they run in a subprocess elsewhere.
The category of a task is the name of the folder that holds it.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path

from ascend_dsl.diagnostics import DslError

SKIP_DIRS = {"__pycache__", ".git", "build", ".venv"}


@dataclass(frozen=True)
class Task:
    path: Path
    category: str
    name: str
    source: str
    format: str  # "standard" | "groups"

    @property
    def hash(self) -> str:
        """Content hash of the task file (plus its sibling JSONL for the groups format): the cache key."""
        h = hashlib.sha256(self.source.encode())
        for side in sidecars(self.path):
            h.update(side.read_bytes())
        return h.hexdigest()[:16]

    @property
    def id(self) -> str:
        return f"{self.category}/{self.name}"


def sidecars(path: Path) -> list[Path]:
    return [p for p in (path.with_suffix(".json"), path.with_suffix(".jsonl")) if p.is_file()]


def detect_format(source: str, path: Path) -> str | None:
    """'standard', 'groups', or None when the file is not a task file."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise DslError.at("TASK-ERROR", f"task file {path} is not valid Python: {e.msg} (line {e.lineno})",
                          None) from None
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    if "Model" not in names:
        return None
    if "get_input_groups" in names:
        return "groups"
    if {"get_inputs", "get_init_inputs"} <= names:
        return "standard"
    return None


def load_task(path: str | Path, category: str | None = None) -> Task:
    path = Path(path)
    try:
        source = path.read_text()
    except OSError as e:
        raise DslError.at("TASK-ERROR", f"cannot read task file {path}: {e.strerror}", None) from None
    fmt = detect_format(source, path)
    if fmt is None:
        raise DslError.at("TASK-ERROR", f"{path} is not a task file", None,
                          "a task file defines class Model and get_inputs()/get_init_inputs() or get_input_groups()")
    return Task(path, category or path.resolve().parent.name, path.stem, source, fmt)


def discover(root: str | Path, categories: set[str] | None = None) -> list[Task]:
    """Every task file under `root` (a file, or a folder tree whose folder names are categories)."""
    root = Path(root)
    if root.is_file():
        return [load_task(root)]
    if not root.is_dir():
        raise DslError.at("TASK-ERROR", f"{root} is neither a task file nor a folder", None)
    out = []
    for py in sorted(root.rglob("*.py")):
        if any(part in SKIP_DIRS or part.startswith(".") for part in py.relative_to(root).parts[:-1]):
            continue
        if py.name.startswith("_"):
            continue
        try:
            source = py.read_text()
            fmt = detect_format(source, py)
        except (OSError, DslError):
            continue
        if fmt is None:
            continue
        category = py.parent.name if py.parent != root else root.name
        if categories and category not in categories:
            continue
        out.append(Task(py, category, py.stem, source, fmt))
    return out
