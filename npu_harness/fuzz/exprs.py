"""Random well-typed expressions over tiles and scalars (the element-wise part of every generated kernel).

`Exprs` builds an expression of a requested dtype and layout from the values in scope, over the whole
element-wise op set: + - * /, max min, neg abs exp log sqrt rsqrt reciprocal relu tanh sigmoid erf,
`**` with the constant exponents and with tile exponents, comparisons feeding select, casts through narrower dtypes, and scalar
sub-expressions (parameters, literals, shape symbols, kernel-scope scalars; with exp/log/pow/select/cast on them,
which the compiler hoists out of the loop). Layouts follow the language's broadcasting: whole rows take
per-row values and row vectors; per-row values and row vectors combine only with their own kind.
Domains are guarded most of the time (log(abs(x) + 0.5)) and left raw sometimes, so NaN and inf are
exercised too.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .program import Node

UNARY_FLOAT = ("exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "erf")
UNARY_ANY = ("abs", "relu")
BINARY = ("+", "-", "*", "/")
COMPARE = ("<", "<=", ">", ">=", "==", "!=")
POW = ("2", "3", "4", "0.5", "-0.5", "-1")
NEEDS_POSITIVE = ("log", "sqrt", "rsqrt")
LITERALS = ("0.0", "0.5", "1.0", "2.0", "-1.0", "3.0", "0.25", "-0.75", "10.0", "1e-3")


def leaf(text: str, dtype: str, layout: str) -> Node:
    return Node(text, (), dtype, layout)


@dataclass
class Scope:
    """What an expression may read: tile values by layout, and scalar names (float or integer)."""

    tiles: list[Node] = field(default_factory=list)
    scalars: list[Node] = field(default_factory=list)  # scalar parameters, kernel-scope names, symbols

    def of(self, dtype: str, layout: str) -> list[Node]:
        return [t for t in self.tiles if t.dtype == dtype and t.layout == layout]


class Exprs:
    def __init__(self, rng: random.Random, scope: Scope, *, rows: bool = False, integer_ops: bool = False):
        self.r = rng
        self.scope = scope
        self.rows = rows  # a row loop: whole rows combine with per-row values and row vectors
        self.integer_ops = integer_ops

    # --- scalars
    def scalar(self, depth: int = 2, dtype: str = "f32") -> Node:
        """A scalar: a literal, a name in scope, or math on them (computed once, at launch or on the device)."""
        r = self.r
        names = [s for s in self.scope.scalars if (s.dtype == "f32") == (dtype == "f32")]
        if depth <= 0 or r.random() < 0.45:
            if names and r.random() < 0.6:
                return r.choice(names)
            lit = r.choice(LITERALS) if dtype == "f32" else str(r.randint(-3, 5))
            return leaf(lit, dtype, "scalar")
        if dtype != "f32":
            return Node(f"({{0}} {r.choice(('+', '-', '*'))} {{1}})", (self.scalar(depth - 1, dtype),
                                                                      self.scalar(depth - 1, dtype)), dtype, "scalar")
        k = r.random()
        a = self.scalar(depth - 1)
        if k < 0.35:
            op = r.choice(BINARY)
            b = self.scalar(depth - 1)
            if op == "/":  # a constant zero divisor is a (located) front-end error
                b = Node("(abs({0}) + 0.5)", (b,), "f32", "scalar")
            return Node(f"({{0}} {op} {{1}})", (a, b), "f32", "scalar")
        if k < 0.55:
            op = r.choice(("exp", "log", "sqrt", "rsqrt", "abs", "tanh", "sigmoid", "erf", "relu"))
            if op in NEEDS_POSITIVE:  # always in the domain: log of a negative literal is a front-end error (TYPE)
                a = Node("(abs({0}) + 0.5)", (a,), "f32", "scalar")
            return Node(f"{op}({{0}})", (a,), "f32", "scalar")
        if k < 0.65:
            return Node(f"{r.choice(('max', 'min'))}({{0}}, {{1}})", (a, self.scalar(depth - 1)), "f32", "scalar")
        if k < 0.75:  # `**` with a scalar (any) exponent: torch.pow semantics, computed at launch
            base = Node("(abs({0}) + 0.5)", (a,), "f32", "scalar")
            return Node("{0} ** {1}", (base, self.scalar(0)), "f32", "scalar")
        if k < 0.85:
            m = Node(f"({{0}} {r.choice(COMPARE)} {{1}})", (a, self.scalar(0)), "bool", "scalar")
            return Node("select({0}, {1}, {2})", (m, self.scalar(depth - 1), self.scalar(depth - 1)), "f32", "scalar")
        if k < 0.9:  # integer scalar math (shape symbols, i32 parameters) as a float
            return Node("cast({0}, f32)", (self.scalar(depth - 1, "i32"),), "f32", "scalar")
        return Node("(-{0})", (a,), "f32", "scalar")

    # --- tiles
    def _positive(self, e: Node, layout: str) -> Node:
        """Usually keep log/sqrt in their domain; sometimes not (NaN must match NaN)."""
        if self.r.random() < 0.85:
            return Node("(abs({0}) + 0.5)", (e,), e.dtype, layout)
        return e

    def _operand(self, dtype: str, layout: str, depth: int) -> Node:
        """An operand for a binary op whose result has `layout`: a scalar, the same layout, or (whole rows)
        a broadcast per-row value / row vector."""
        r = self.r
        if r.random() < 0.3:
            return self.scalar(1, "f32" if dtype in ("f32", "f16") else "i32")
        if layout == "rows" and r.random() < 0.4:
            kinds = [k for k in ("col", "row") if self.scope.of(dtype, k)]
            if kinds:
                return self.tile(dtype, r.choice(kinds), depth)
        return self.tile(dtype, layout, depth)

    def tile(self, dtype: str, layout: str, depth: int) -> Node:
        """A tile expression of `dtype` and `layout` (at least one tile value of that layout must be in scope,
        or for per-row values a reduction of whole rows)."""
        r = self.r
        have = self.scope.of(dtype, layout)
        if depth <= 0 or (have and r.random() < 0.25):
            if have:
                return r.choice(have)
            if layout == "col" and self.scope.of(dtype, "rows"):
                return self.reduction(dtype, 0)
            raise ValueError(f"no {dtype} {layout} value in scope")
        integer = dtype == "i32"
        k = r.random()
        if layout == "col" and self.rows and k < 0.2 and self.scope.of(dtype, "rows") and not integer:
            return self.reduction(dtype, depth - 1)
        if k < 0.4:
            a = self.tile(dtype, layout, depth - 1)
            b = self._operand(dtype, layout, depth - 1)
            op = r.choice(BINARY[:3] if integer else BINARY)
            pair = (a, b) if r.random() < 0.7 else (b, a)
            if pair[0].layout == "scalar" and pair[1].layout == "scalar":
                pair = (a, b)
            if op == "/" and r.random() < 0.5:  # mostly a denominator away from zero
                pair = (pair[0], Node("(abs({0}) + 0.5)", (pair[1],), dtype, pair[1].layout))
            return Node(f"({{0}} {op} {{1}})", pair, dtype, layout)
        if k < 0.5:
            a = self.tile(dtype, layout, depth - 1)
            return Node(f"{r.choice(('max', 'min'))}({{0}}, {{1}})", (a, self._operand(dtype, layout, depth - 1)),
                        dtype, layout)
        if k < 0.7:
            a = self.tile(dtype, layout, depth - 1)
            op = r.choice(UNARY_ANY + (() if integer else UNARY_FLOAT))
            if op in NEEDS_POSITIVE:
                a = self._positive(a, layout)
            if op == "exp" and r.random() < 0.7:  # keep most exps finite in f16
                a = Node("min({0}, 8.0)", (a,), dtype, layout)
            return Node(f"{op}({{0}})", (a,), dtype, layout)
        if k < 0.75:
            return Node("(-{0})", (self.tile(dtype, layout, depth - 1),), dtype, layout)
        if k < 0.8 and not integer and layout in ("flat", "rows") and r.random() < 0.3:  # a tile exponent (torch.pow)
            a = self.tile(dtype, layout, depth - 1)
            b = Node("min(max({0}, -6.0), 6.0)", (self.tile(dtype, layout, depth - 1),), dtype, layout)
            if r.random() < 0.5:  # a positive base: continuous in both operands
                return Node("(abs({0}) + 0.5) ** {1}", (a, b), dtype, layout)
            # any base, an integer exponent (negative bases: the sign of odd powers)
            return Node(f"({{0}}) ** cast(cast({{1}}, i32), {dtype})", (a, b), dtype, layout)
        if k < 0.8 and not integer:
            exp = r.choice(POW)
            a = self.tile(dtype, layout, depth - 1)
            if exp in ("0.5", "-0.5"):
                a = self._positive(a, layout)
            return Node(f"{{0}} ** {exp}", (Node("({0})", (a,), dtype, layout),), dtype, layout)
        if k < 0.92 and layout not in ("col", "row") and not integer:  # UNSUPPORTED: select of per-row values,
            # row vectors or integers
            return self.select(dtype, layout, depth - 1)
        if not integer and dtype == "f32" and k < 0.97:  # a round trip through a narrower dtype
            via = r.choice(("f16", "bf16", "i32"))
            return Node(f"cast(cast({{0}}, {via}), f32)", (self.tile(dtype, layout, depth - 1),), dtype, layout)
        return Node("({0} * {1})", (self.tile(dtype, layout, depth - 1), self.scalar(2, "i32" if integer else "f32")),
                    dtype, layout)

    def select(self, dtype: str, layout: str, depth: int) -> Node:
        r = self.r
        a = self.tile(dtype, layout, depth)
        b = self.tile(dtype, layout, depth) if r.random() < 0.4 else self.scalar(0, "f32" if dtype != "i32" else "i32")
        mask = Node(f"({{0}} {r.choice(COMPARE)} {{1}})", (a, b), "bool", layout)
        x = self.tile(dtype, layout, depth)
        y = self.tile(dtype, layout, depth) if r.random() < 0.6 else self.scalar(0, "f32" if dtype != "i32" else "i32")
        return Node("select({0}, {1}, {2})", (mask, x, y) if r.random() < 0.7 else (mask, y, x), dtype, layout)

    def reduction(self, dtype: str, depth: int) -> Node:
        op = self.r.choice(("sum", "mean", "max", "min", "max", "sum") + (("prod",) if dtype == "f32" else ()))
        inner = self.tile(dtype, "rows", depth)
        if op == "prod":  # keep products of many values finite and non-zero
            inner = Node("(0.5 + 0.5 * sigmoid({0}))", (inner,), dtype, "rows")
        return Node(f"{op}({{0}}, axis=1)", (inner,), dtype, "col")
