"""Plane statistics over split loops: recognising the two-loop mean / squared-deviation pattern (docs/design.md).

The plane norms (group_norm, group_norm_module, batch_norm_train) write their statistics as two split loops over
the same rows, each feeding a slot accumulator (ir.SlotAccDecl):

    s = zeros(S)                                     # loop A: the slot totals
    for blk in split(R, cores=AIV):
        for r in tile(blk, ...):
            s[r] += sum(v, axis=1)
    ss = zeros(S)                                    # loop B: squared deviations from a per-slot centre
    for blk in split(R, cores=AIV):
        for r in tile(blk, ...):
            d = v - s[r] * k                         # (or c - v), c built from s[r], constants and scalars
            ss[r] += sum(d * d, axis=1)              # (or d ** 2)

so x is read in A, again in B, and again by the loop that normalises. Folding B into A (each core keeping
(count, mean, M2) per slot from the shifted chunk sums the row form uses, lowering/passes/chunk_moments.py, and
the cross-core slot combine merging them by Chan, Golub and LeVeque's pairwise formula in core order) needs the
pattern exactly: `find` returns the typed match, `miss` says why a pair of loops is not one. This module only
recognises; the fold itself is not lowered yet (session 35: docs/design.md, "Single-pass mean and variance"),
so every kernel keeps its two-pass arithmetic. The arithmetic the fold must compute, in the order the kernel
would compute it, is modelled in lowering/plane_merge.py.

Conditions (anything else is not a match, and the two passes stay as written):
* A's only row loop is exactly the value chain of `v` (f32 rows: loads, casts, element-wise ops of row tiles,
  scalars and constants), `t = sum(v)` and `s[r] += t`;
* B is the next split loop (only `ss = zeros(...)` between them), over the same extent and cores, with the same
  row shape; its row loop is exactly the same value chain (equal up to names), the centre chain, `d = v - c` or
  `c - v`, `d * d` (or `d ** 2`), `sum` and `ss[r] += ...`;
* the centre `c` reads `s[r]` and otherwise only constants and scalar parameters, so it is one value per slot
  (a per-row tensor such as `w[r]` could differ between a slot's rows: not matched);
* `s` and `ss` have the same slots (and rows per slot, groups).
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir
from ascend_dsl.dtypes import DType


@dataclass(frozen=True)
class PlaneMoments:
    """A matched pair: slot accumulator `total` (`s[r] += sum(v)`, split loop `first`) and `squares`
    (`ss[r] += sum((v - c)^2)`, split loop `first + 1`); `centre` is c as an expression tree over `s[r]`."""

    total: str
    squares: str
    first: int
    centre: tuple
    span: ir.Span


def _tree(e: ir.Expr, defs: dict[str, ir.Assign]) -> tuple:
    """`e` with local names replaced by their definitions and spans dropped: equal trees compute equal values."""
    if isinstance(e, ir.Ref):
        d = defs.get(e.name)
        return _tree(d.value, defs) if d is not None else ("ref", e.name, e.type.kind, e.type.dtype)
    if isinstance(e, ir.Const):
        return ("const", e.value, e.type.dtype)
    if isinstance(e, ir.Load):
        i = e.index
        return ("load", e.tensor, i.rows, i.period, i.acc, i.by, i.stride, i.group, e.type.dtype, e.type.layout)
    if isinstance(e, ir.Op):
        return ("op", e.op, e.type.dtype, e.type.layout, tuple(_tree(a, defs) for a in e.args))
    return ("other", type(e).__name__, repr(e))


def _leaves(t: tuple):
    if t[0] == "op":
        for a in t[4]:
            yield from _leaves(a)
    else:
        yield t


def _row_value(t: tuple) -> bool:
    """A tree of loads of row tiles, scalars, constants and element-wise ops (no reductions, no slot reads)."""
    if t[0] == "op" and t[1].startswith("reduce"):
        return False
    if t[0] == "op":
        return all(_row_value(a) for a in t[4])
    if t[0] == "load":
        return t[2] and not t[4] and t[5] is None and t[7] is None  # whole rows of a tensor, not gathered
    return t[0] in ("const", "ref") and (t[0] == "const" or t[2] is ir.Kind.SCALAR)


def _centre(t: tuple, total: str) -> bool:
    """c reads `total[r]` and otherwise only scalars and constants: one value per slot."""
    leaves = list(_leaves(t))
    reads = [x for x in leaves if x[0] == "load"]
    return (bool(reads) and all(x[1] == total and x[4] for x in reads)
            and all(x[0] == "const" or (x[0] == "ref" and x[2] is ir.Kind.SCALAR) for x in leaves if x[0] != "load"))


def _row_loop(split: ir.SplitLoop) -> ir.TileLoop | None:
    loops = [s for s in split.body if isinstance(s, ir.TileLoop)]
    if len(split.body) != 1 or len(loops) != 1 or loops[0].kind is not ir.LoopKind.ROWS:
        return None
    return loops[0]


def _sum_into(loop: ir.TileLoop) -> tuple[str, tuple, dict] | None:
    """(slot accumulator, tree of the summed value, defs) when the loop's last statements are `t = sum(e)`,
    `acc[r] += t` and every other statement is an assignment used by them."""
    body = loop.body
    if len(body) < 2 or not isinstance(body[-1], ir.SlotAccumulate) or not all(
            isinstance(s, ir.Assign) for s in body[:-1]):
        return None
    defs = {s.name: s for s in body[:-1]}
    if len(defs) != len(body) - 1:
        return None
    acc = body[-1]
    red = defs.get(acc.value.name) if isinstance(acc.value, ir.Ref) else None
    if red is None or not (isinstance(red.value, ir.Op) and red.value.op == "reduce_sum" and len(red.value.args) == 1):
        return None
    used = _used(acc.value, defs)
    if used != set(defs):  # a statement the reduction does not need: something else happens in this loop
        return None
    return acc.name, _tree(red.value.args[0], defs), defs


def _used(e: ir.Expr, defs: dict[str, ir.Assign]) -> set[str]:
    out: set[str] = set()
    todo = [e]
    while todo:
        x = todo.pop()
        if isinstance(x, ir.Ref) and x.name in defs and x.name not in out:
            out.add(x.name)
            todo.append(defs[x.name].value)
        elif isinstance(x, ir.Op):
            todo.extend(x.args)
    return out


def _square_deviation(t: tuple, value: tuple, total: str) -> tuple | None:
    """The centre tree when `t` is (v - c)^2 written `d * d`, `d ** 2` (d = v - c or c - v), else None."""
    if t[0] != "op":
        return None
    if t[1] == "mul" and len(t[4]) == 2 and t[4][0] == t[4][1]:
        d = t[4][0]
    elif t[1] == "pow" and len(t[4]) == 2 and t[4][1][0] == "const" and t[4][1][1] == 2:
        d = t[4][0]
    else:
        return None
    if not (d[0] == "op" and d[1] == "sub" and d[2] is DType.F32):
        return None
    a, b = d[4]
    c = b if a == value else a if b == value else None
    return c if c is not None and _centre(c, total) else None


def miss(kernel: ir.Kernel, first: int) -> str | None:
    """Why split loops `first` and the next of `kernel.body` are not the pattern (None: they are)."""
    body = list(kernel.body)
    splits = [i for i, s in enumerate(body) if isinstance(s, ir.SplitLoop)]
    if first + 1 >= len(splits):
        return "no split loop after it"
    ia, ib = splits[first], splits[first + 1]
    a, b = body[ia], body[ib]
    between = body[ia + 1:ib]
    if len(between) != 1 or not isinstance(between[0], ir.SlotAccDecl):
        return "the loops are not separated by exactly one `zeros(...)`"
    if (a.extent, a.core_kind, a.cores) != (b.extent, b.core_kind, b.cores):
        return "the loops split different extents or cores"
    la, lb = _row_loop(a), _row_loop(b)
    if la is None or lb is None or la.shape.rows != lb.shape.rows or la.shape.row != lb.shape.row:
        return "not one row loop each over the same rows"
    sa, sb = _sum_into(la), _sum_into(lb)
    if sa is None or sb is None:
        return "a loop does more than sum one value into a slot accumulator"
    (total, value, _), (squares, sq, _) = sa, sb
    decls = {d.name: d for d in kernel.slot_accumulators}
    if between[0].name != squares or total not in decls or total == squares:
        return "the second loop's accumulator is not the one declared between the loops"
    da, db = decls[total], decls[squares]
    if (da.slots, da.rows_per_slot, da.groups) != (db.slots, db.rows_per_slot, db.groups):
        return "the two accumulators have different slots"
    if not (value[0] == "op" or value[0] == "load") or value[2 if value[0] == "op" else 8] is not DType.F32:
        return "the summed value is not f32"
    if not _row_value(value):
        return "the summed value is not an element-wise function of row tiles"
    if _square_deviation(sq, value, total) is None:
        return "the second sum is not of squared deviations of the same value from a per-slot centre"
    return None


def find(kernel: ir.Kernel) -> list[PlaneMoments]:
    """Every matched pair of consecutive split loops, in body order (a loop is in at most one pair)."""
    out: list[PlaneMoments] = []
    splits = [s for s in kernel.body if isinstance(s, ir.SplitLoop)]
    k = 0
    while k + 1 < len(splits):
        if miss(kernel, k) is None:
            (total, value, _), (squares, sq, _) = _sum_into(_row_loop(splits[k])), _sum_into(_row_loop(splits[k + 1]))
            out.append(PlaneMoments(total, squares, k, _square_deviation(sq, value, total), splits[k + 1].span))
            k += 2
        else:
            k += 1
    return out
