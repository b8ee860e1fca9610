"""The packages' import graph: no circles, no private name imported across modules, and the layering of
the architecture (ascend_dsl <- lowering <- npu_harness <- kernelgen: each imports only those to its left).
Function-local imports count: a circle hidden inside a function is still a circle."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("ascend_dsl", "lowering", "npu_harness", "kernelgen")
PACKAGES = (*LAYERS, "codegen_templates")


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for p in (ROOT / pkg).rglob("*.py"):
            parts = list(p.relative_to(ROOT).with_suffix("").parts)
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def _imports(mods: dict[str, Path]) -> list[tuple[str, str, str | None]]:
    """(importing module, imported module of the packages, imported name or None) for every import."""
    out = []
    for m, p in mods.items():
        package = m if p.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Import):
                targets = [(a.name, None) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
                mod = ".".join(base + ([node.module] if node.module else []))
                targets = [(f"{mod}.{a.name}", None) if f"{mod}.{a.name}" in mods else (mod, a.name) for a in node.names]
            else:
                continue
            for target, name in targets:
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != m:
                    out.append((m, target, name))
    return out


def test_no_import_circles():
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, target, _ in _imports(mods):
        if not m.startswith(f"{target}."):  # a module importing its own package's __init__ is not a circle
            graph[m].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert not circles, circles


def test_no_private_names_across_modules():
    private = [(m, t, n) for m, t, n in _imports(_modules()) if n and n.startswith("_") and not n.startswith("__")]
    assert not private, private


def test_layers_import_only_those_below():
    bad = [(m, t) for m, t, _ in _imports(_modules()) if t.split(".")[0] in LAYERS and m.split(".")[0] in LAYERS
           and LAYERS.index(t.split(".")[0]) > LAYERS.index(m.split(".")[0])]
    assert not bad, bad
