"""Flatten tile expressions: one load or one op per assignment, every operand a name or a scalar.

Goals: SSA names (a reassigned DSL name gets a fresh name), Sethi-Ullman evaluation order (fewest
live temporaries), common-subexpression elimination
(structural, spans ignored), dead-code elimination. Scalar sub-expressions (literals, scalar
parameters and arithmetic on them) stay inline: they become immediates of tensor-scalar
instructions. Non-goals: buffer assignment (allocate_buffers.py).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from ascend_dsl import ir

from ..context import PassContext
from ..rewrite import map_tile_bodies


class _Flattener:
    def __init__(self) -> None:
        self.out: list[ir.Stmt] = []
        self.memo: dict[ir.Expr, str] = {}
        self.env: dict[str, str] = {}  # DSL name -> current SSA name
        self.scalars: dict[str, ir.Expr] = {}  # scalar locals, inlined at their uses
        self.taken: set[str] = set()
        self.n = 0

    def fresh(self, base: str | None = None) -> str:
        if base is not None and base not in self.taken:
            self.taken.add(base)
            return base
        while True:
            name = f"{base or '_t'}{self.n}" if base else f"_t{self.n}"
            self.n += 1
            if name not in self.taken:
                self.taken.add(name)
                return name

    def operand(self, e: ir.Expr) -> ir.Expr:
        if e.type.kind is ir.Kind.SCALAR:
            return self.scalar(e)
        if isinstance(e, ir.Ref):
            return replace(e, name=self.env[e.name])
        return ir.Ref(self.define(e, None), e.type, e.span)

    def scalar(self, e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Ref) and e.name in self.scalars:
            return self.scalars[e.name]
        if isinstance(e, ir.Op):
            return replace(e, args=tuple(self.scalar(a) for a in e.args))
        return e

    def define(self, e: ir.Expr, name: str | None) -> str:
        if isinstance(e, ir.Op):
            # Sethi-Ullman order: the operand needing the most temporaries first, so fewer values
            # are live at once (operands of pure ops may be evaluated in any order).
            # A select's mask goes first: one bit per element is cheap to keep, and its operands die sooner.
            order = sorted(range(len(e.args)), key=lambda i: (-(e.op == "select" and i == 0), -_need(e.args[i])))
            flat: dict[int, ir.Expr] = {i: self.operand(e.args[i]) for i in order}
            e = replace(e, args=tuple(flat[i] for i in range(len(e.args))))
        if e in self.memo:
            return self.memo[e]
        target = self.fresh(name)
        self.out.append(ir.Assign(target, e, e.span))
        self.memo[e] = target
        return target

    def stmt(self, s: ir.Stmt) -> None:
        if isinstance(s, ir.Assign):
            if s.value.type.kind is ir.Kind.SCALAR:
                self.scalars[s.name] = self.scalar(s.value)
                return
            if isinstance(s.value, ir.Ref) and s.value.type.kind is ir.Kind.TILE:
                self.env[s.name] = self.env[s.value.name]  # plain alias
                return
            self.env[s.name] = self.define(s.value, s.name)
        elif isinstance(s, (ir.Store, ir.Accumulate, ir.SlotAccumulate)):
            self.out.append(replace(s, value=self.operand(s.value)))


@lru_cache(maxsize=4096)
def _need(e: ir.Expr) -> int:
    """Sethi-Ullman number: UB temporaries to evaluate a tile expression (leaves already have buffers)."""
    if not isinstance(e, ir.Op) or e.type.kind is ir.Kind.SCALAR:
        return 0
    needs = sorted((_need(a) for a in e.args if a.type.kind is ir.Kind.TILE), reverse=True)
    return max([1] + [n + i for i, n in enumerate(needs)])


def _dce(body: list[ir.Stmt]) -> list[ir.Stmt]:
    live: set[str] = set()
    kept: list[ir.Stmt] = []
    for s in reversed(body):
        if isinstance(s, ir.Assign) and s.name not in live:
            continue
        kept.append(s)
        value = s.value
        live.update(e.name for e in ir.walk_expr(value) if isinstance(e, ir.Ref))
    return list(reversed(kept))


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    def body(tl: ir.TileLoop) -> ir.TileLoop:
        f = _Flattener()
        f.taken.update(p.name for p in kernel.params)
        for s in tl.body:
            f.stmt(s)
        return replace(tl, body=tuple(_dce(f.out)))

    return map_tile_bodies(kernel, body)
