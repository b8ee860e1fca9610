"""The task file's source as an export embeds it: ModelNew subclasses the task's Model when the kernel takes
its parameters, so they are created by the same code under the harness's seed (MultiKernelBench seeds Model
and ModelNew alike, benchmarks.md §1.7). A task file may hold @kernel functions too (a .py holding kernel and
task): those and the ascend_dsl imports are left out, so the export needs no ascend-dsl."""

from __future__ import annotations

import ast
from pathlib import Path


def _is_kernel_decorator(d: ast.expr) -> bool:
    target = d.func if isinstance(d, ast.Call) else d
    return (isinstance(target, ast.Name) and target.id == "kernel") or (
        isinstance(target, ast.Attribute) and target.attr == "kernel")


def _dropped(node: ast.stmt) -> bool:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return any(_is_kernel_decorator(d) for d in node.decorator_list)
    if isinstance(node, ast.ImportFrom):  # __future__ imports must open a file: the export's header comes first
        return (node.module or "").split(".")[0] in ("ascend_dsl", "__future__")
    if isinstance(node, ast.Import):
        return any(a.name.split(".")[0] == "ascend_dsl" for a in node.names)
    return False


def model_source(task: Path) -> str:
    """The task file's text without its @kernel functions, ascend_dsl and __future__ imports (lines kept
    verbatim)."""
    text = task.read_text()
    lines = text.splitlines()
    drop: set[int] = set()
    for node in ast.parse(text, filename=str(task)).body:
        if _dropped(node):
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            drop.update(range(first - 1, node.end_lineno))
    return "\n".join(ln for i, ln in enumerate(lines) if i not in drop).strip() + "\n"
