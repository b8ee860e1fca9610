"""Extern ops: element-wise operations outside the op registry, given by a PyTorch reference function.

A task file (or the `.py` file holding the kernel) declares one with the `@extern_op` decorator:

    from ascend_dsl import extern_op

    @extern_op
    def mish(x):
        return x * torch.tanh(torch.nn.functional.softplus(x))

and the kernel calls it like any op: `store(y[t], mish(xt))` (tile operands of one float dtype, the result
of that dtype). The compiler has no rule for it: assisted lowering has a model write its compute stage in
a fixed template slot (lowering/assist/construct.py), checked before use. The declaration is read from
the file with `ast` (the parent never executes the task); `register` puts the ops into the registry
(`OPS`, with `extern=True`) so the front end resolves them.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .diagnostics import DslError
from .diagnostics import ErrorCode as E
from .ops import FLOATS, OPS, OpInfo, Rule


def extern_op(fn):
    """Marks a PyTorch function as the reference of an extern op (read by the compiler from the source)."""
    fn.__ascend_extern_op__ = True
    return fn


@dataclass(frozen=True)
class ExternOp:
    name: str
    arity: int
    #: the file declaring it and the reference function's source (its hash keys the library of accepted code)
    file: str
    source: str

    @property
    def signature_hash(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()

    @property
    def slot_api(self) -> str:
        """The C++ function of its compute stage: `mish` -> `MishSlot`."""
        return "".join(p.capitalize() for p in self.name.split("_")) + "Slot"


def _is_marker(d: ast.expr) -> bool:
    return (isinstance(d, ast.Name) and d.id == "extern_op") or (
        isinstance(d, ast.Attribute) and d.attr == "extern_op")


def declared_in(path: Path) -> list[ExternOp]:
    """The extern ops a Python file declares (none when it is missing or not Python)."""
    try:
        text = Path(path).read_text()
        tree = ast.parse(text)
    except (OSError, SyntaxError, UnicodeDecodeError):
        return []
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(_is_marker(d) for d in node.decorator_list):
            args = node.args
            if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or not args.args:
                raise DslError.at(E.ARGS, f"extern op '{node.name}' must take one or more tensors, positionally "
                                  "(no defaults, *args or keywords)", None)
            out.append(ExternOp(node.name, len(args.args), str(path), ast.get_source_segment(text, node) or ""))
    return out


_ACTIVE: dict[str, ExternOp] = {}


def active(name: str) -> ExternOp | None:
    """The registered extern op of that name, if any."""
    return _ACTIVE.get(name)


def register(ops: list[ExternOp]) -> None:
    """Make the extern ops known to the front end and the lowering (until `unregister`)."""
    for op in ops:
        known = OPS.get(op.name)
        if known is not None and not known.extern:
            raise DslError.at(E.DUPLICATE_NAME, f"extern op '{op.name}' has the name of a built-in op", None,
                              "rename the reference function")
        OPS[op.name] = OpInfo(op.name, op.arity, Rule.SAME, FLOATS, None,
                              f"extern op (reference in {Path(op.file).name}; compute stage written by a model)",
                              api=op.slot_api, extern=True)
        _ACTIVE[op.name] = op


def unregister(ops: list[ExternOp]) -> None:
    for op in ops:
        if op.name in _ACTIVE:
            del _ACTIVE[op.name]
            OPS.pop(op.name, None)


@contextmanager
def registered(ops: list[ExternOp]) -> Iterator[None]:
    register(ops)
    try:
        yield
    finally:
        unregister(ops)


__all__ = ["ExternOp", "active", "declared_in", "extern_op", "register", "registered", "unregister"]
