"""The grammar block at the top of ascend_dsl/ir.py is the IR's definition: it must name every node
with its fields in order, and every enum, so it cannot drift from the dataclasses."""

from __future__ import annotations

import dataclasses
import enum
import re

from ascend_dsl import ir

_NODE = re.compile(r"\b([A-Z]\w*)\(([^()]*)\)")


def _header() -> str:
    return ir.__doc__.split("Nodes are immutable")[0]


def _documented() -> dict[str, list[str]]:
    out = {}
    for name, args in _NODE.findall(_header()):
        fields = [a.split(":")[0].strip().rstrip("?*") for a in args.split(",") if a.strip()]
        assert out.setdefault(name, fields) == fields, f"{name} is written twice with different fields"
    return out


def _classes(kind) -> dict[str, type]:
    return {n: c for n, c in vars(ir).items() if isinstance(c, type) and c.__module__ == ir.__name__ and kind(c)}


def test_every_node_is_in_the_header_with_its_fields_in_order():
    documented = _documented()
    for name, cls in _classes(dataclasses.is_dataclass).items():
        assert name in documented, f"ir.{name} is missing from the grammar block of ir.py"
        fields = [f.name for f in dataclasses.fields(cls) if f.name != "span"]
        assert documented[name] == fields, f"ir.{name}: header says {documented[name]}, dataclass has {fields}"
    assert not set(documented) - set(_classes(dataclasses.is_dataclass)), "the header names a node ir.py lacks"


def test_every_enum_is_listed():
    listed = re.search(r"Enums: (.*)", _header()).group(1).replace(" ", "").split(",")
    assert sorted(listed) == sorted(_classes(lambda c: issubclass(c, enum.Enum)))


def test_nodes_are_frozen():
    for name, cls in _classes(dataclasses.is_dataclass).items():
        assert cls.__dataclass_params__.frozen, f"ir.{name} is not frozen"
