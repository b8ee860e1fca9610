"""Plan the chunked variant of every row loop: rows longer than the Unified Buffer (docs/design.md).

A row tile loop holds whole rows in UB. When one row with its temporaries does not fit, the host
tiling switches the same kernel to its chunked variant, planned here from the three-address body:

* every value gets a reduction *depth*: loads are 0, a reduction is its operand's depth + 1, any
  other op the largest depth of its operands;
* per-row values (reductions, `[B]` and per-channel loads, and ops on them) become scalars of the
  scalar unit (`<name>Row_` members), computed once per row as soon as their depth is reached;
* pass k streams column chunks of the row from GM (a tile loop of kind CHUNKS over the chunk),
  computes the row values it needs (recomputing those of lower depth: GM is re-read), folds its
  depth-k reductions into an f32 UB block per reduction (sum/mean: Add, max/min: Max/Min) and stores
  the row values of depth k chunk by chunk.

The result is an ir.ChunkPlan on the loop's RowTiles (or ir.NoChunk with the reason). Its pass loops
are ordinary tile loops: the passes after this one (allocate_buffers, plan_tiling, select_instructions,
schedule_stages) lower them with the rest of the kernel, so `--dump-after` shows every step, and
plan_tiling sizes their chunks (or turns the plan into NoChunk when a pass does not fit UB).
Non-goals: the emitted row loop around the passes (lowering/emit/chunk.py).
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from ascend_dsl.diagnostics import ErrorCode as E
from ascend_dsl.dtypes import DType
from ascend_dsl.ops import OPS, Rule

from ..context import PassContext
from . import chunk_moments, scan_offsets

#: Reductions a pass folds across chunks: reduce op -> (reduction of one chunk, combine across chunks).
CHUNK_REDUCTIONS = {name: o.chunk for name, o in OPS.items() if o.chunk}
#: Ops a per-row value may use in chunked mode (scalar unit; the math ones run on one vector element).
SCALAR_OPS = frozenset(name for name, o in OPS.items() if o.scalar_c is not None or o.vector_math is not None)
#: The chunk loop's variable in the pass loops.
CHUNK_VAR = "chunk"
#: UB bytes the row-level code keeps beside a pass's buffers: one 32-byte block for scalar math.
MATH_BLOCK_BYTES = 32


class _NoChunk(Exception):
    pass


def _tile_refs(e: ir.Expr) -> list[ir.Ref]:
    return [x for x in ir.walk_expr(e) if isinstance(x, ir.Ref) and x.type.kind is ir.Kind.TILE]


def plan(kernel: ir.Kernel, tl: ir.TileLoop, ctx: PassContext) -> ir.ChunkPlan | ir.NoChunk:
    """The chunked variant of row loop `tl` (three-address form), or why there is none."""
    try:
        return _plan(kernel, _without_identity_casts(tl), ctx)
    except _NoChunk as e:
        return ir.NoChunk(str(e))


def _without_identity_casts(tl: ir.TileLoop) -> ir.TileLoop:
    """`cast(v, f32)` of an f32 value (kernels written for several dtypes) is a copy: every pass would
    run it over every chunk. Uses of such a value read `v` instead."""
    alias: dict[str, str] = {}

    def rename(e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Ref) and e.name in alias:
            return replace(e, name=alias[e.name])
        if isinstance(e, ir.Op):
            return replace(e, args=tuple(rename(a) for a in e.args))
        return e

    body = []
    for s in tl.body:
        s = replace(s, value=rename(s.value))
        v = s.value
        if (isinstance(s, ir.Assign) and isinstance(v, ir.Op) and v.op == "cast" and isinstance(v.args[0], ir.Ref)
                and v.args[0].type == v.type):
            alias[s.name] = v.args[0].name
            continue
        body.append(s)
    return replace(tl, body=tuple(body))


def _plan(kernel: ir.Kernel, tl: ir.TileLoop, ctx: PassContext) -> ir.ChunkPlan:
    if not ctx.target.has_datacopypad:
        raise _NoChunk(f"{ctx.target.name} has no DataCopyPad for row chunks at unaligned GM offsets")
    for s in tl.body:  # a gather along a middle dim (TileIndex.group): its copy-in has no chunked form
        value = getattr(s, "value", None)
        for e in ir.walk_expr(value) if isinstance(value, ir.Expr) else ():
            if isinstance(e, ir.Load) and e.index.group:
                raise _NoChunk(f"the gather '{e.tensor}[{e.index.by}[r], :]' along a middle dim")
    depth: dict[str, int] = {}
    layout: dict[str, ir.Layout] = {}
    defs: dict[str, ir.Assign] = {}
    steps_at: dict[int, list] = {}  # depth -> row-level statements computed before the pass of that depth
    # pass -> (name, reduce op, operand, index of the statement in the body) folded in it
    reductions: dict[int, list[tuple[str, str, ir.Ref, int]]] = {}
    accumulators: dict[str, str] = {}
    slot_accumulators: dict[str, None] = {}
    row_stores: dict[int, list[ir.Store]] = {}
    col_stores: list[ir.RowStore] = []
    row_values: list[str] = []

    def scalar_expr(e: ir.Expr) -> ir.Expr:
        """A per-row expression over `<name>Row` scalars."""
        if isinstance(e, ir.Ref) and e.type.kind is ir.Kind.TILE:
            return ir.row_ref(e.name, e.span)
        if isinstance(e, ir.Op):
            if e.op not in SCALAR_OPS:
                raise _NoChunk(f"the per-row op '{e.op}' has no scalar form")
            args = tuple(scalar_expr(a) for a in e.args)
            # per-row values are f32; a cast keeps its dtype (the scalar code truncates to an integer, rounds to f16)
            dtype = e.type.dtype if e.op == "cast" or e.type.dtype is DType.BOOL else DType.F32
            return ir.Op(e.op, args, ir.scalar_of(dtype), e.span)
        return e

    for i, s in enumerate(tl.body):
        if isinstance(s, (ir.Accumulate, ir.SlotAccumulate)):
            v = s.value
            if not isinstance(v, ir.Ref) or v.type.kind is not ir.Kind.TILE:
                raise _NoChunk(f"the accumulated value of '{s.name}' is not a tile")
        if isinstance(s, ir.SlotAccumulate):  # s[r] += v: the row's value, once it is known, into the row's slot
            if layout[v.name] is not ir.Layout.COL:
                raise _NoChunk(f"'{s.name}[r] += ...' adds a value that is not one per row")
            slot_accumulators[s.name] = None
            steps_at.setdefault(depth[v.name], []).append(ir.RowSlotAccumulate(s.name, ir.row_ref(v.name, v.span), s.span))
            continue
        if isinstance(s, ir.Accumulate):
            accumulators[s.name] = s.combine
            if layout[v.name] is ir.Layout.ROWS:  # the row's reduction, folded in the pass of the value
                part = f"_{s.name}{len(row_values)}"
                reductions.setdefault(depth[v.name], []).append((part, s.reduce, v, i))
                row_values.append(part)
                when, value = depth[v.name] + 1, ir.row_ref(part, s.span)
            elif layout[v.name] is ir.Layout.COL:  # one value per row: the reduction of a row is the value
                when, value = depth[v.name], ir.row_ref(v.name, v.span)
            else:
                raise _NoChunk(f"'{s.name}' accumulates a row vector")
            steps_at.setdefault(when, []).append(ir.RowAccumulate(s.name, s.combine, value, s.span))
            continue
        if isinstance(s, ir.Store):
            v = s.value
            if layout[v.name] is ir.Layout.COL:
                col_stores.append(ir.RowStore(s.tensor, ir.row_ref(v.name, v.span), s.span))
            else:
                row_stores.setdefault(depth[v.name], []).append(s)
            continue
        v = s.value
        lay = v.type.layout
        defs[s.name] = s
        layout[s.name] = lay
        if isinstance(v, ir.Load):
            depth[s.name] = 0
            if lay is ir.Layout.COL:
                steps_at.setdefault(0, []).append(ir.RowLoad(s.name, v.tensor, v.index.period, v.index.acc, s.span,
                                                                 v.index.stride))
                row_values.append(s.name)
            elif lay not in (ir.Layout.ROWS, ir.Layout.ROW):
                raise _NoChunk(f"the load of '{v.tensor}' is neither rows, a row vector nor per-row values")
            continue
        if isinstance(v, ir.Op) and v.op in CHUNK_REDUCTIONS:
            (a,) = v.args
            if layout[a.name] is not ir.Layout.ROWS:
                raise _NoChunk(f"'{v.op}' reduces a row vector")
            if not v.type.dtype.is_float:
                raise _NoChunk(f"integer '{v.op}' would be folded in f32")
            d = depth[a.name]
            depth[s.name] = d + 1
            reductions.setdefault(d, []).append((s.name, v.op, a, i))
            row_values.append(s.name)
            if v.op == "reduce_mean":  # the pass folds the sum; the mean scales it by 1 / D
                d_ref = ir.RowLength(ir.scalar_of(DType.F32), s.span)
                mean = ir.Op("mul", (ir.row_ref(s.name, s.span), ir.Op("reciprocal", (d_ref,), d_ref.type, s.span)),
                             ir.scalar_of(DType.F32), s.span)
                steps_at.setdefault(d + 1, []).append(ir.RowScalar(s.name, mean, s.span))
            continue
        if isinstance(v, ir.Op) and OPS[v.op].rule in (Rule.REDUCE, Rule.GATHER, Rule.POOL, Rule.ARG_REDUCE, Rule.SCATTER,
                                                          Rule.ROW_SCATTER):
            raise _NoChunk(f"'{v.op}' needs the whole row in UB")
        refs = _tile_refs(v)
        depth[s.name] = max((depth[r.name] for r in refs), default=0)
        if lay is ir.Layout.COL:
            steps_at.setdefault(depth[s.name], []).append(ir.RowScalar(s.name, scalar_expr(v), s.span))
            row_values.append(s.name)
        elif lay not in (ir.Layout.ROWS, ir.Layout.ROW):
            raise _NoChunk(f"the value '{s.name}' is neither rows, a row vector nor per-row values")

    last = max([*reductions, *row_stores], default=-1)
    if last < 0:
        raise _NoChunk("it has no whole-row work")
    pairs = chunk_moments.find(tl, reductions, defs, layout, depth)
    ops = {name: op for entries in reductions.values() for name, op, _, _ in entries}
    for m, centre in pairs:
        chunk_moments.row_steps(m, centre, ops[m.mean], steps_at)
        row_values += chunk_moments.row_values(m)
    moments = {m.mean: m for m, _ in pairs}
    online = _online_softmax_sums(reductions, defs, layout)
    passes = []
    offsets: set[int] = set()  # the depths whose pass has scans: an offset pass runs before it on core groups
    for k in range(last + 1):  # a pass left with nothing to do (its sum moved online or into moments) is dropped
        if reductions.get(k) or row_stores.get(k):
            p = _pass_loop(tl, defs, layout, reductions.get(k, []), row_stores.get(k, []), online, moments)
            _check_scan_order(p)
            before = scan_offsets.offset_pass(tl, defs, p, lambda entries: _pass_loop(tl, defs, layout, entries, [],
                                                                                      {}, {}))
            if before is not None:  # scan_offsets.py
                offsets.add(k)
                passes.append(before)
                row_values += [f.name for f in before.reductions]
                p = scan_offsets.with_offsets(p)
            passes.append(p)
    steps: list[ir.RowStep] = []
    number = 0
    for k in range(last + 2):
        steps += steps_at.get(k, [])
        if k <= last and (reductions.get(k) or row_stores.get(k)):
            for _ in range(2 if k in offsets else 1):
                steps.append(ir.RunPass(number))
                number += 1
    for st in steps_at:
        if st > last + 1:
            raise DslError.at(E.INTERNAL, "a per-row value deeper than every pass", tl.span)
    steps += col_stores
    store_dtypes = tuple(sorted({kernel.param(s.tensor).dtype for s in col_stores}, key=str))
    return ir.ChunkPlan(tuple(steps), tuple(passes), tuple(row_values), store_dtypes,
                        tuple(ir.Fold(n, c) for n, c in accumulators.items()), tuple(slot_accumulators))


def _check_scan_order(p: ir.ChunkPass) -> None:
    """Scans carry a running value from chunk to chunk (lowering/vector_scan.py): a pass walks the row's chunks
    backwards for reverse scans, so one pass cannot hold scans of both directions."""
    directions = {OPS[s.value.op].reverse for s in p.loop.body if isinstance(s, ir.Assign)
                  and isinstance(s.value, ir.Op) and OPS[s.value.op].rule is Rule.SCAN}
    if len(directions) > 1:
        raise _NoChunk("a forward and a reverse scan in the same pass over the row")


def row_level_bytes(plan: ir.ChunkPlan) -> int:
    """UB bytes the row-level code keeps beside a pass's buffers: scalar math and one block per store dtype."""
    return MATH_BLOCK_BYTES + 32 * len(plan.store_dtypes)


def _online_softmax_sums(reductions: dict, defs: dict, layout: dict) -> dict[str, str]:
    """Online max/sum (as in flash attention): `m = max(v)` folded in pass k and `s = sum(exp(v - m))` in
    pass k + 1 fold together in pass k. Per chunk, the running max M becomes max(M, max(chunk)), the
    running sum is rescaled by exp(M_old - M_new), and exp(v - M) of the chunk is added: the row is read
    once less. Moves such sums into the pass of their max (in `reductions`); returns max name -> sum name."""
    online: dict[str, str] = {}
    for k in sorted(reductions):
        if k == 0:
            continue
        maxes = {name: (a, i) for name, op, a, i in reductions.get(k - 1, []) if op == "reduce_max"}
        for entry in list(reductions[k]):
            name, op, e, _ = entry
            ed = defs.get(e.name)
            if op != "reduce_sum" or ed is None or not (isinstance(ed.value, ir.Op) and ed.value.op == "exp"):
                continue
            td = defs.get(ed.value.args[0].name) if isinstance(ed.value.args[0], ir.Ref) else None
            if td is None or not (isinstance(td.value, ir.Op) and td.value.op == "sub"):
                continue
            v, m = td.value.args
            if not (isinstance(v, ir.Ref) and isinstance(m, ir.Ref) and m.name in maxes and m.name not in online
                    and maxes[m.name][0].name == v.name and layout[v.name] is ir.Layout.ROWS):
                continue
            online[m.name] = name
            reductions[k].remove(entry)
            reductions[k - 1].append(entry)
        if k in reductions and not reductions[k]:
            del reductions[k]
    return online


def _pass_loop(tl, defs, layout, reductions, stores, online, moments) -> ir.ChunkPass:
    """A pass as a tile loop over one row's chunks (lowered by the passes after this one)."""
    needed: set[str] = set()

    def need(name: str) -> None:
        if name in needed or layout[name] is ir.Layout.COL:
            return
        needed.add(name)
        for r in _tile_refs(defs[name].value):
            need(r.name)

    for _, _, a, _ in reductions:
        need(a.name)
    for s in stores:
        need(s.value.name)

    def flat(e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Ref) and e.type.kind is ir.Kind.TILE:
            if layout[e.name] is ir.Layout.COL:
                return ir.row_ref(e.name, e.span)
            return replace(e, type=ir.tile_of(e.type.dtype))
        if isinstance(e, ir.Op):
            return replace(e, args=tuple(flat(a) for a in e.args), type=ir.tile_of(e.type.dtype)
                           if e.type.kind is ir.Kind.TILE else e.type)
        if isinstance(e, ir.Load):
            rows = e.type.layout is ir.Layout.ROWS
            return replace(e, index=ir.TileIndex(CHUNK_VAR if rows else None, rows, e.index.span, by=e.index.by,
                                                 period=e.index.period if rows else None,
                                                 stride=e.index.stride if rows else None),
                           type=ir.tile_of(e.type.dtype))
        return e

    fold_at = {i: (name, op, a) for name, op, a, i in reductions}
    body: list[ir.Stmt] = []
    folds = []
    for i, s in enumerate(tl.body):
        if isinstance(s, ir.Assign) and s.name in needed:
            body.append(replace(s, value=flat(s.value)))
        elif isinstance(s, ir.Store) and s in stores:
            body.append(replace(s, index=ir.TileIndex(CHUNK_VAR, True, s.index.span), value=flat(s.value)))
        elif i in fold_at:  # the reduction: folded into its UB block chunk by chunk
            name, op, a = fold_at[i]
            if name in moments:  # a mean with its second moment, in one pass (chunk_moments.py)
                m = moments[name]
                body += chunk_moments.pass_statements(m, flat(a))
                folds += [ir.Fold(m.mean, ir.Combine.ADD, moments=m.names), ir.Fold(m.m2, ir.Combine.ADD, moments=m.names)]
                continue
            chunk_reduce, combine = CHUNK_REDUCTIONS[op]
            online_sum = online.get(name)  # a running max updated before the chunk's exp(v - max) (its sum's rescale)
            body.append(ir.Accumulate(name, combine, chunk_reduce, flat(a), online_sum, s.span))
            folds.append(ir.Fold(name, combine, online_sum))
    loop = replace(tl, var=CHUNK_VAR, size=None, body=tuple(body), buffers_decl=(), max_tile=None,
                   shape=ir.CHUNK_TILES, chunk=None)  # the row loop's chunk= is sized by plan_tiling
    return ir.ChunkPass(loop, tuple(folds))


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    body = []
    for s in kernel.body:
        if isinstance(s, ir.SplitLoop):
            loops = [replace(tl, shape=replace(tl.shape, chunked=plan(kernel, tl, ctx)))
                     if isinstance(tl, ir.TileLoop) and tl.kind is ir.LoopKind.ROWS else tl
                     for tl in s.body]
            s = replace(s, body=tuple(loops))
        body.append(s)
    return replace(kernel, body=tuple(body))
