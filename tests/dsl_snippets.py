"""Kernels built from a kernel header and the body of its tile loop, for the front-end tests."""

from __future__ import annotations

import pytest

from ascend_dsl import DslError, ir, parse_text


def tile_kernel(head: str, body: str, file: str) -> ir.Kernel:
    """`head` ends with the `for ... in tile(...)` line; `body` lines are indented into that loop."""
    return parse_text(head + "".join(f"            {line}\n" for line in body.splitlines()), file)[0].instantiate()


def tile_error(head: str, body: str, file: str) -> DslError:
    with pytest.raises(DslError) as e:
        tile_kernel(head, body, file)
    return e.value


def first_tile(k: ir.Kernel) -> ir.TileLoop:
    return k.body[0].body[0]
