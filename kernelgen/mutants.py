"""Plausible wrong versions of a correct kernel, for error-derived training pairs (failing attempt + the tool's
diagnostic -> the correct kernel) when no model has made the mistakes yet.

Each operator makes one mistake of a kind small models were measured making on this DSL (docs/kernelgen.md,
"Measured"): using a GM tensor without `load` (TYPE), tiling the wrong variable (ARGS), a name used before it
is defined (UNDEFINED-NAME), plus a wrong operation (the interpreter's MISMATCH) and a tile size that breaks
the 32-byte rule (TILE-ALIGN). Operators are plain text rewrites, deterministic, and applied only where their
pattern occurs; whether the mutant really fails, and with which diagnostic, is decided by running it through
the same checks as any model response (a mutant that still passes is simply another correct kernel).
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: operation swaps that keep the kernel well-formed but change what it computes (first match wins)
_OP_SWAPS = (("relu(", "abs("), ("sigmoid(", "tanh("), ("tanh(", "sigmoid("), ("exp(", "abs("), ("max(", "min("),
             ("min(", "max("), ("sum(", "mean("), ("mean(", "sum("), ("sqrt(", "abs("), (" + ", " - "),
             (" - ", " + "), (" * ", " + "), (" / ", " * "))


def _body_start(code: str) -> int:
    """Offset of the first line inside the kernel body (after `def ...:` and its docstring), or 0."""
    m = re.search(r"^def .*?:\s*\n", code, re.M | re.S)
    return m.end() if m else 0


def no_load(code: str) -> str | None:
    """`xt = load(x[t])` -> `xt = x[t]`: a GM tensor used as a tile (TYPE)."""
    m = re.search(r"=\s*load\(([^()\n]*)\)", code[_body_start(code):])
    if not m:
        return None
    start = _body_start(code) + m.start()
    end = _body_start(code) + m.end()
    return code[:start] + "= " + m.group(1) + code[end:]


def tile_wrong_var(code: str) -> str | None:
    """`tile(blk, ...)` -> `tile(N, ...)`: tiles the whole extent instead of the core's share (ARGS)."""
    m = re.search(r"for (\w+) in split\(([A-Za-z_]\w*)", code)
    if not m:
        return None
    share, extent = m.group(1), m.group(2)
    new = code.replace(f"tile({share},", f"tile({extent},", 1)
    return new if new != code else None


def undefined_name(code: str) -> str | None:
    """The first tile-level assignment `xt = ...` renamed to `x_t`, its uses left as they are (UNDEFINED-NAME)."""
    m = re.search(r"^( {8,})([a-z_]\w*) = ", code[_body_start(code):], re.M)
    if not m:
        return None
    name = m.group(2)
    start = _body_start(code) + m.start(2)
    new_name = name[:1] + "_" + name[1:] if len(name) > 1 else name + "_"
    return code[:start] + new_name + code[start + len(name):]


def wrong_op(code: str) -> str | None:
    """One operation swapped for another of the same shape (`relu` -> `abs`, `max` -> `min`, `+` -> `-`, ...):
    the kernel is well-formed and computes something else (the interpreter's MISMATCH)."""
    body = _body_start(code)
    lines = code[body:].splitlines(keepends=True)
    for i, line in enumerate(lines):
        if not re.match(r"\s+(store\(|[a-z_]\w* = )", line) or re.match(r"\s+\w+ = load\([^()]*\)\s*$", line):
            continue
        for old, new in _OP_SWAPS:
            if old in line:
                lines[i] = line.replace(old, new, 1)
                return code[:body] + "".join(lines)
    return None


def bad_tile_size(code: str) -> str | None:
    """`size=auto` -> `size=1001`: not a multiple of 32 bytes of any dtype (TILE-ALIGN)."""
    new = code.replace("size=auto", "size=1001", 1)
    return new if new != code else None


OPERATORS: tuple[tuple[str, Callable[[str], str | None]], ...] = (
    ("no-load", no_load), ("tile-wrong-var", tile_wrong_var), ("undefined-name", undefined_name),
    ("wrong-op", wrong_op), ("bad-tile-size", bad_tile_size))


def mutants(code: str, limit: int | None = None) -> list[tuple[str, str]]:
    """(operator name, mutated kernel) for every operator that applies and changes the text, in OPERATORS
    order, at most `limit`."""
    out: list[tuple[str, str]] = []
    seen = {code}
    for name, op in OPERATORS:
        new = op(code)
        if new is not None and new not in seen:
            seen.add(new)
            out.append((name, new))
    return out if limit is None else out[:limit]
