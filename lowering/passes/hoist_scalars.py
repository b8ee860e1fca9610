"""Scalar math: hoist it out of tile loops and decide where each kernel-scope scalar is computed.

Goals:
- A scalar sub-expression of a tile loop that is more than immediate arithmetic (`exp(beta)`,
  `sqrt(1.0 - beta2 ** step)`) becomes a kernel-scope `ScalarAssign` placed just before its split
  (or cube) loop: computed once, not per tile; the tile op reads it like a scalar parameter.
- Every kernel-scope `ScalarAssign` whose value depends only on scalar parameters, shape symbols,
  constants and other such scalars is marked `launch`: the host tiling code computes it (C++
  <cmath>, `lowering/emit/launch_scalars.py`) and hands it to the kernel in the tiling data, so it is
  right for every kernel kind and wherever it is written.
- The others read accumulators or `load(x[0])` values: the kernel computes them on the device
  (lowering/emit/shared.py, `ScalarWriter`). Ops it has no instruction for are rewritten into ones it has
  (tanh, sigmoid, erf, relu, neg: the tile rewrites of legalize.py).
Runs after three_address, which inlined the tile loops' scalar locals into their uses.
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.diagnostics import DiagnosticSink
from ascend_dsl.diagnostics import ErrorCode as E
from ascend_dsl.dtypes import DType
from ascend_dsl.ops import OPS

from ..context import PassContext
from ..rewrite import rewrite_expr
from .legalize import legalize_scalar

#: Scalar ops a tile instruction takes inline as an immediate (lowering/emit/shared.py, c_scalar): those with a
#: scalar-unit form, but relu, whose form does not propagate NaN (torch.relu does: the host computes it).
IMMEDIATE_OPS = frozenset(name for name, o in OPS.items() if o.scalar_c is not None) - {"relu"}
#: Ops the device computes on scalars (the rest of ScalarWriter: one vector-unit element each).
DEVICE_OPS = IMMEDIATE_OPS | {name for name, o in OPS.items() if o.vector_math is not None}


def _needs_hoist(e: ir.Expr) -> bool:
    return any(isinstance(x, ir.Op) and x.op not in IMMEDIATE_OPS for x in ir.walk_expr(e))


class _Hoister:
    def __init__(self, taken: set[str]):
        self.taken = taken
        self.made: dict[ir.Expr, str] = {}  # hoisted expression -> its kernel-scope name (one per expression)
        self.pending: list[ir.ScalarAssign] = []

    def name_for(self, e: ir.Expr) -> ir.Ref:
        if e not in self.made:
            n = 0
            while f"scalar{n}" in self.taken:
                n += 1
            name = f"scalar{n}"
            self.taken.add(name)
            self.made[e] = name
            self.pending.append(ir.ScalarAssign(name, e, e.span))
        return ir.Ref(self.made[e], ir.scalar_of(e.type.dtype), e.span)

    def expr(self, e: ir.Expr) -> ir.Expr:
        if e.type.kind is ir.Kind.SCALAR and isinstance(e, ir.Op) and e.op == "cast":
            return replace(e, args=(self.expr(e.args[0]),))  # the cast to the tile's dtype stays an immediate
        if e.type.kind is ir.Kind.SCALAR:
            return self.name_for(e) if _needs_hoist(e) else e
        if isinstance(e, ir.Op):
            args = tuple(self.expr(a) for a in e.args)
            return e if args == e.args and all(a is b for a, b in zip(args, e.args, strict=True)) \
                else replace(e, args=args)
        return e

    def tile_loop(self, tl: ir.TileLoop) -> ir.TileLoop:
        body = tuple(replace(s, value=self.expr(s.value)) if isinstance(s, (ir.Assign, ir.Store, ir.Accumulate, ir.SlotAccumulate))
                     and not isinstance(s.value, str) else s for s in tl.body)
        return replace(tl, body=body)

    def loop(self, s: ir.Stmt) -> ir.Stmt:
        if isinstance(s, ir.TileLoop):
            return self.tile_loop(s)
        if isinstance(s, (ir.SplitLoop, ir.CubeLoop)):
            return replace(s, body=tuple(self.loop(c) for c in s.body))
        return s


def check_launch(s: ir.ScalarAssign, sink: DiagnosticSink) -> None:
    """The host computes every op of a launch scalar, or the first it cannot is a located error."""
    for x in ir.walk_expr(s.value):
        if isinstance(x, ir.Op) and x.op == "cast" and x.type.dtype in (DType.F16, DType.BF16):
            sink.error(E.UNSUPPORTED, f"a scalar cast to {x.type.dtype} at kernel scope cannot be lowered", x.span,
                       "cast the tile instead")
            return
        if isinstance(x, ir.Op) and OPS[x.op].host_c is None:
            sink.error(E.UNSUPPORTED, f"scalar expression '{x.op}' cannot be computed at launch", x.span)
            return


def _known(e: ir.Expr, names: set[str]) -> bool:
    return all(x.name in names for x in ir.walk_expr(e) if isinstance(x, ir.Ref))


def _device(s: ir.ScalarAssign | ir.ScalarStore, h: _Hoister, launch: set[str], sink: DiagnosticSink) -> ir.Stmt:
    """A statement the device computes: its sub-expressions known at launch go to the host, the rest is
    rewritten into ops the device has."""
    def split(e: ir.Expr) -> ir.Expr:
        if _known(e, launch) and _needs_hoist(e):
            ref = h.name_for(e)
            launch.add(ref.name)
            return ref
        return replace(e, args=tuple(split(a) for a in e.args)) if isinstance(e, ir.Op) else e

    value = rewrite_expr(split(s.value), legalize_scalar)
    for x in ir.walk_expr(value):
        if isinstance(x, ir.Op) and x.op not in DEVICE_OPS:
            sink.error(E.UNSUPPORTED, f"'{x.op}' of a value known only on the device (an accumulator's total or "
                       "a load(x[0])) cannot be lowered", x.span)
    return replace(s, value=value)


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    taken = {p.name for p in kernel.params} | set(kernel.symbols) | {
        getattr(s, "name", "") for s in ir.walk(kernel.body)} | {getattr(s, "var", "") for s in ir.walk(kernel.body)}
    h = _Hoister(taken)
    hoisted: list[ir.Stmt] = []
    for s in kernel.body:
        s = h.loop(s)
        hoisted += h.pending  # before the loop that reads them (after the loops whose totals they read)
        h.pending = []
        hoisted.append(s)
    # Launch scalars: computed from scalar parameters, shape symbols, constants and each other alone.
    launch = {p.name for p in kernel.scalars} | set(kernel.symbols)
    sink = DiagnosticSink()
    body: list[ir.Stmt] = []
    for s in hoisted:
        if isinstance(s, ir.ScalarAssign) and _known(s.value, launch):
            check_launch(s, sink)
            launch.add(s.name)
            body.append(replace(s, launch=True))
            continue
        if isinstance(s, (ir.ScalarAssign, ir.ScalarStore)):
            s = _device(s, h, launch, sink)
            for p in h.pending:
                check_launch(p, sink)
            body += [replace(p, launch=True) for p in h.pending]
            h.pending = []
        body.append(s)
    sink.raise_if_any()
    return replace(kernel, body=tuple(body))
