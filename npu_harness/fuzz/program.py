"""A generated program: a small syntax tree of one DSL kernel, the sizes it runs at and how its inputs are drawn.

The tree exists so the minimiser can take a program apart (drop statements, loops, parameters; replace an
expression by one of its operands; shrink sizes) and render every candidate back to DSL text. It knows
only what the minimiser needs: each expression's dtype and layout, so a replacement keeps the program
well-typed. Validity of the result is decided by the front end, never here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Node:
    """An expression: `fmt` with `{0}`, `{1}`, ... for its operands (a leaf has none), its dtype
    (f32 f16 bf16 i32 u8 bool) and layout (flat rows col row box scalar)."""

    fmt: str
    args: tuple[Node, ...] = ()
    dtype: str = "f32"
    layout: str = "scalar"

    def render(self) -> str:
        return self.fmt.format(*(a.render() for a in self.args)) if self.args else self.fmt

    def size(self) -> int:
        return 1 + sum(a.size() for a in self.args)


@dataclass(frozen=True)
class Stmt:
    """One statement: `fmt` with `{0}` for its expression (None: no expression, e.g. `acc = 0.0`)."""

    fmt: str
    expr: Node | None = None
    defines: str | None = None  # the name it assigns, if any

    def render(self) -> str:
        return self.fmt.format(self.expr.render()) if self.expr is not None else self.fmt


@dataclass(frozen=True)
class Loop:
    """`for <var> in split(<extent>, cores=...)` holding one tile loop (or a cube split: `header` and
    `inner` lines verbatim, with the epilogue statements in `body`)."""

    header: str
    inner: str
    body: tuple[Stmt, ...]
    cube_prefix: tuple[str, ...] = ()  # cube splits: the `with cube:` block lines before `with vector:`


@dataclass(frozen=True)
class Program:
    name: str
    decorator: str  # e.g. "@kernel(T=[f16])" or "@kernel"
    params: tuple[str, ...]  # "x: Tensor[T, \"N\"]", "alpha: f32 = 0.5"
    body: tuple[Stmt | Loop, ...]
    sizes: dict[str, int] = field(default_factory=dict)
    seed: int = 0
    target: str = "ascend910b1"
    cores: int = 48
    kind: str = ""  # which generator made it (flat, rows, box, ...), for reports

    def text(self) -> str:
        lines = [self.decorator, f"def {self.name}({', '.join(self.params)}):"]
        for item in self.body:
            if isinstance(item, Stmt):
                lines.append("    " + item.render())
                continue
            lines.append("    " + item.header)
            if item.cube_prefix:
                lines += ["        " + line for line in item.cube_prefix]
                lines.append("        " + item.inner)
                lines += ["            " + s.render() for s in item.body]
            else:
                lines.append("        " + item.inner)
                lines += ["            " + s.render() for s in item.body]
        return "\n".join(lines) + "\n"

    def setup(self) -> dict:
        return {"sizes": self.sizes, "seed": self.seed, "target": self.target, "cores": self.cores, "kind": self.kind}

    def with_name(self, name: str) -> Program:
        return replace(self, name=name)


def to_case(p: Program, note: str) -> str:
    """A regression case file: the setup as a JSON comment, then the kernel text (a valid .adsl file)."""
    return f"# fuzz-case: {json.dumps(p.setup(), sort_keys=True)}\n# {note}\n" + p.text()


def from_case(text: str) -> tuple[str, dict]:
    """(kernel text, setup) of a regression case file."""
    first = text.splitlines()[0]
    if not first.startswith("# fuzz-case: "):
        raise ValueError("not a fuzz case file: the first line must be '# fuzz-case: {json}'")
    return text, json.loads(first.removeprefix("# fuzz-case: "))
