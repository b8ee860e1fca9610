"""Front end for slot (vector) accumulators: `s = zeros(C)` before a split loop over rows,
`s[r] += sum(v, axis=1)` in its row tile loop, `s[r]` (the totals across cores) in later loops.

The slots a row adds into follow from the accumulator's shape and the split extent:
`zeros(C)` under `split(N * C)` (the trailing split symbols) maps row n*C + c to slot c, like a
per-channel `[C]` tensor; `zeros(N * G)` (leading split symbols, then int scalar parameters) gives
each slot a block of consecutive rows, C / G of them: row n*C + c -> n*G + c // (C / G) (group norm).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from lark import Tree

from . import ir
from .diagnostics import DslError
from .diagnostics import ErrorCode as E
from .dtypes import DType

_MAPPINGS = ("zeros(C) under split(N * C): row n*C + c adds into slot c; zeros(N * G) with an int parameter G: "
             "row n*C + c adds into slot n*G + c // (C / G)")


@dataclass
class SlotAcc:
    decl: ir.SlotAccDecl
    extent: tuple[str, ...] | None = None  # the split extent of the loop that accumulates it


def slot_decl(b, name: str, st: Tree, call: Tree) -> ir.SlotAccDecl:
    """`s = zeros(C)` / `s = zeros(N * G)`: shape symbols, then int scalar parameters."""
    pos, kw = b.call_args(call)
    if len(pos) != 1 or kw:
        raise b.err(E.ARGS, "zeros takes the slot count: a shape symbol or a product of them", call, "s = zeros(C)")
    factors = _factors(b, pos[0])
    params = [f for f in factors if f in b.scope.params]
    if factors[len(factors) - len(params):] != params:
        raise b.err(E.ARGS, "in zeros(...), int parameters come after the shape symbols", pos[0], "s = zeros(N * G)")
    decl = ir.SlotAccDecl(name, tuple(factors), span=b.o.span(st))
    b.scope.slot_accs[name] = SlotAcc(decl)
    return decl


def _factors(b, e) -> list[str]:
    if isinstance(e, Tree) and e.data == "mul":
        return _factors(b, e.children[0]) + _factors(b, e.children[1])
    if isinstance(e, Tree) and e.data == "name":
        name = str(e.children[0])
        p = b.scope.params.get(name)
        if name in b.scope.symbols or (isinstance(p, ir.ScalarParam) and p.dtype in (DType.I32, DType.I64)):
            return [name]
        if isinstance(p, ir.ScalarParam):
            raise b.err(E.TYPE, f"'{name}' is a {p.dtype} parameter; a slot count takes int parameters (i32)", e)
        raise b.undefined(e.children[0], sorted(b.scope.symbols), "a shape symbol or an int parameter")
    raise b.err(E.ARGS, "zeros takes the slot count: shape symbols and int parameters multiplied", e,
                "s = zeros(C) or s = zeros(N * G)")


def _mapping(b, acc: SlotAcc, node) -> ir.SlotAccDecl:
    """The decl with its row -> slot mapping for the current split extent."""
    extent, slots = b.scope.split_extent, acc.decl.slots
    syms = tuple(s for s in slots if s not in b.scope.params)
    groups = slots[len(syms):]
    if not groups and len(syms) <= len(extent) and extent[len(extent) - len(syms):] == syms:
        return replace(acc.decl, rows_per_slot=(), groups=())
    if extent[:len(syms)] == syms and len(syms) < len(extent):
        return replace(acc.decl, rows_per_slot=extent[len(syms):], groups=groups)
    raise b.err(E.INDEX, f"rows of split({' * '.join(extent)}) do not map onto zeros({' * '.join(slots)})", node,
                _MAPPINGS)


def slot_accumulate(b, st: Tree, tile: str) -> ir.SlotAccumulate:
    """`s[r] += value`: one value per row (e.g. sum(v, axis=1)) added into each row's slot."""
    target, rhs = st.children
    name_tok = target.children[0]
    name = str(name_tok)
    acc = b.scope.slot_accs.get(name)
    if acc is None:
        if name in b.scope.acc_names or name in b.scope.constants:
            raise b.err(E.INDEX, f"'{name}' is a scalar accumulator: {name} += sum(v)", target,
                        f"declare {name} = zeros(C) for one value per channel")
        raise b.err(E.UNDEFINED_NAME, f"'{name}' is not a slot accumulator", name_tok,
                    f"declare it before the split loop: {name} = zeros(C)")
    _check_index(b, target, tile, f"{name}[{tile}] += sum(v, axis=1)")
    if name in b.scope.combined:
        raise b.err(E.KERNEL_STRUCTURE, f"accumulator '{name}' was already combined by an earlier split loop",
                    name_tok, "declare a new accumulator for this loop")
    if b.scope.tile.shape.kind is not ir.LoopKind.ROWS:
        raise b.err(E.UNSUPPORTED, "slot accumulators add one value per row: they need a row loop", target,
                    "split the rows: for blk in split(N * C, cores=AIV) over [N, C, H, W] tensors")
    decl = _mapping(b, acc, target)
    if acc.extent is not None and acc.extent != b.scope.split_extent:
        raise b.err(E.INDEX, f"'{name}' is accumulated over split({' * '.join(acc.extent)}) elsewhere", target)
    acc.decl, acc.extent = decl, b.scope.split_extent
    value = b.expr(rhs, tile)
    if value.type.kind is not ir.Kind.TILE or value.type.layout is not ir.Layout.COL:
        raise b.err(E.TYPE, f"{name}[{tile}] += ... adds one value per row", rhs,
                    "reduce the rows first: sum(v, axis=1)")
    if value.type.dtype not in (DType.F32, DType.F16):
        raise b.err(E.DTYPE_UNSUPPORTED, f"accumulating {value.type.dtype} values is not supported", rhs,
                    "cast(v, f32) first")
    b.scope.phase_accs.add(name)
    return ir.SlotAccumulate(name, value, b.o.span(st))


def _check_index(b, target: Tree, tile: str, example: str) -> None:
    idx = target.children[1:]
    ok = len(idx) == 1 and isinstance(idx[0], Tree) and idx[0].data == "name" and str(idx[0].children[0]) == tile
    if not ok:
        raise b.err(E.INDEX, f"a slot accumulator is indexed by the row tile variable: {example}", target)


def slot_read(b, e: Tree, tile: str) -> ir.Load:
    """`s[r]` in a row loop after s's split loop: each row's slot total (f32, one value per row)."""
    name_tok = e.children[0]
    name = str(name_tok)
    acc = b.scope.slot_accs[name]
    if not tile:
        raise b.err(E.INDEX, f"'{name}' holds one value per slot; read it per row inside a row loop: {name}[r]", e)
    _check_index(b, e, tile, f"{name}[{tile}]")
    if name not in b.scope.combined:
        raise b.err(E.KERNEL_STRUCTURE, f"accumulator '{name}' is read before its split loop has ended", name_tok,
                    "its totals across cores exist only after the loop that accumulates it")
    if b.scope.tile.shape.kind is not ir.LoopKind.ROWS or b.scope.split_extent != acc.extent:
        raise b.err(E.INDEX, f"'{name}[{tile}]' is read in a row loop over split({' * '.join(acc.extent)})", e)
    return ir.Load(name, ir.TileIndex(tile, False, b.o.span(e.children[1]), acc=True),
                   ir.tile_of(DType.F32, ir.Layout.COL), b.o.span(e))


def finish(b, out: list) -> list:
    """Every slot accumulator is updated by some loop; its decl carries the mapping found there."""
    for name, acc in b.scope.slot_accs.items():
        if acc.extent is None:
            raise DslError.at(E.KERNEL_STRUCTURE, f"slot accumulator '{name}' is never updated", acc.decl.span,
                              f"add {name}[r] += sum(v, axis=1) in the row loop after it")
    return [b.scope.slot_accs[s.name].decl if isinstance(s, ir.SlotAccDecl) else s for s in out]
