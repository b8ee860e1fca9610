"""Scans over a row split between a group of cores (docs/design.md, "Rows longer than UB"): the carried offsets.

A scan carries its running value from chunk to chunk (lowering/vector_scan.py), so one core used to walk each
row: 16 rows of 393,216 kept 16 of 48 cores busy. With a core group per row (lowering/emit/row_groups.py) core j
scans only its columns, and its carry must start from the combined operand of the columns before them (after
them, for a reverse scan). This step gives every pass holding scans an *offset pass* just before it: the same
operands, each folded over the core's columns (a sum for cumsum, a product for cumprod: `reduce_sum` /
`reduce_prod`, as the chunked reductions are), with `Fold.prefix` "before" / "after". The group combine
(emit/row_groups.py) folds, in core order, only the partials of the cores before (after) this one, and the
scan pass starts each scan's carry there (`ChunkPass.scan_offsets`). The offset pass is `group_only`: it runs
only when the host tiling splits rows over groups (rowGroup > 1), so rows that a core walks alone read x once,
as before; on a group it skips the core whose partial no core reads (the last one; the first for reverse scans),
so a row of g cores is read 2 - 1/g times (offsets, then the scan), against once on a third of the cores.

Exclusive scans start from the same offset (their first element of the core's share is the total before it).
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.dtypes import DType
from ascend_dsl.ops import OPS, Rule

#: The fold of a scan's operand over a core's columns, by the scan's call.
OFFSET_REDUCTIONS = {"cumsum": "reduce_sum", "cumprod": "reduce_prod"}


def offset_name(scan: str) -> str:
    """The per-row value holding scan `scan`'s carry into this core's columns."""
    return f"{scan}Off"


def scans_of(p: ir.ChunkPass) -> list[ir.Assign]:
    """The scans of a pass's loop, in order (the order of their ScanSum / ScanProd instructions)."""
    return [s for s in p.loop.body if isinstance(s, ir.Assign) and isinstance(s.value, ir.Op)
            and OPS[s.value.op].rule is Rule.SCAN]


def offset_pass(tl: ir.TileLoop, defs: dict[str, ir.Assign], p: ir.ChunkPass, pass_loop) -> ir.ChunkPass | None:
    """The offset pass of pass `p` (None: `p` has no scans); `pass_loop(reductions)` builds a pass loop folding
    `(name, reduce op, operand, statement index)` entries (plan_chunks._pass_loop)."""
    scans = scans_of(p)
    if not scans:
        return None
    index = {s.name: i for i, s in enumerate(tl.body) if isinstance(s, ir.Assign)}
    entries = []
    for s in scans:
        (a,) = defs[s.name].value.args
        entries.append((offset_name(s.name), OFFSET_REDUCTIONS[OPS[s.value.op].call], a, index[s.name]))
    built = pass_loop(entries)
    reverse = {offset_name(s.name): OPS[s.value.op].reverse for s in scans}
    folds = tuple(replace(f, prefix="after" if reverse[f.name] else "before") for f in built.reductions)
    return replace(built, loop=replace(built.loop, body=_f32_sums(built.loop.body)), reductions=folds, group_only=True)


def _f32_sums(body: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
    """Each summed operand gets an f32 copy of its own (a cast for 16-bit operands, which the scan accumulates in
    f32 too): the emitter sums it by a halving tree in place (emit/chunk.py), as accurate as pairwise summation,
    where ReduceSum adds its 64-element repeat totals one after the other (over a core's 131,072 columns the
    f32 roundings of that running sum exceed the f32 tolerance; products are folded in f32 already)."""
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.Accumulate) and s.reduce == "reduce_sum":
            t = ir.tile_of(DType.F32)
            own = f"{s.name}F32"
            op = "copy" if s.value.type.dtype is DType.F32 else "cast"
            out += [ir.Assign(own, ir.Op(op, (s.value,), t, s.span), s.span), replace(s, value=ir.Ref(own, t, s.span))]
        else:
            out.append(s)
    return tuple(out)


def with_offsets(p: ir.ChunkPass) -> ir.ChunkPass:
    """Pass `p` with its scans' carries named (their offset pass runs just before it)."""
    return replace(p, scan_offsets=tuple(offset_name(s.name) for s in scans_of(p)))
