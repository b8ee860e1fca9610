"""Give every tile value a UB buffer: VECIN queues for loads, VECOUT queues for stored values,
VECCALC TBufs for temporaries, reused once a value is dead (linear scan over the tile body).

After this pass every assignment target is a buffer name listed in `TileLoop.buffers_decl`, so
the IR reads like the AscendC it becomes. Non-goals: sizes (plan_tiling.py).
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.dtypes import DType
from ascend_dsl.ops import OPS, Rule

from ..context import PassContext
from ..rewrite import map_tile_bodies
from ..vector_scan import scratch_buffers
from .select_instructions import writes_dst_early

#: Reductions lowered to ReduceSum/Max/Min, which need UB scratch (reduce_prod: an f32 row, below); argmax /
#: argmin are ReduceMax / ReduceMin with calIndex, whose scratch (a row) exceeds the documented minimum.
VECTOR_REDUCTIONS = ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "argmax", "argmin")


#: Row reductions whose whole-row tiles may be folded a tile at a time (a FOLD_TMP scratch; emit/tile_fold.py).
FOLDED_REDUCTIONS = ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min")


def _refs(e: ir.Expr) -> list[str]:
    return [x.name for x in ir.walk_expr(e) if isinstance(x, ir.Ref) and x.type.kind is ir.Kind.TILE]


def _is_box_reduction(e: ir.Expr) -> bool:
    return isinstance(e, ir.Op) and OPS[e.op].rule is Rule.REDUCE and e.args[0].type.layout is ir.Layout.BOX


def _bits(dtype: DType) -> int:
    return 1 if dtype is DType.BOOL else dtype.size * 8




def _with_output_copies(kernel: ir.Kernel, body: tuple[ir.Stmt, ...]) -> list[ir.Stmt]:
    """A stored value must be produced by an op into its own VECOUT buffer: copy loads and values
    stored twice with a UB -> UB DataCopy (bit-exact; x * 1 or x + 0 would not be for -0.0 + 0 or NaN payloads,
    nor where the vector unit flushes subnormals)."""
    defs = {s.name: s.value for s in body if isinstance(s, ir.Assign)}
    claimed: set[str] = set()
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.Store):
            name = s.value.name
            if isinstance(defs.get(name), ir.Load) or name in claimed:
                copy = f"{name}_to_{s.tensor}"
                value = ir.Op("copy", (s.value,), s.value.type, s.span)
                out.append(ir.Assign(copy, value, s.span))
                s = replace(s, value=ir.Ref(copy, s.value.type, s.value.span))
                name = copy
            claimed.add(name)
        out.append(s)
    return out


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    def body(tl: ir.TileLoop) -> ir.TileLoop:
        stmts = _with_output_copies(kernel, tl.body)
        last_use: dict[str, int] = {}
        for i, s in enumerate(stmts):
            for n in _refs(s.value):
                last_use[n] = i
        out_of = {s.value.name: s.tensor for s in stmts if isinstance(s, ir.Store)}
        params = {p.name: p for p in kernel.tensors}
        decls: dict[str, ir.Buffer] = {}
        where: dict[str, str] = {}
        free: list[str] = []
        counters = {"tmp": 0, "mask": 0}

        def new_buffer(base: str, position: ir.Position, dtype: DType, span, layout: ir.Layout) -> str:
            name = base
            if base in ("tmp", "mask"):
                name = f"{base}{counters[base]}"
                counters[base] += 1
            num = tl.buffers if position is not ir.Position.VECCALC else 1
            decls[name] = ir.Buffer(name, position, dtype, num, _bits(dtype), layout, span=span)
            return name

        box_tmp: set[DType] = set()  # box loops: dtypes of reductions whose box is read again afterwards
        for i, s in enumerate(stmts):
            if not isinstance(s, ir.Assign):
                continue
            dtype = s.value.type.dtype
            layout = s.value.type.layout
            srcs = _refs(s.value)
            dying = [where[n] for n in srcs if last_use.get(n) == i and decls[where[n]].position is ir.Position.VECCALC]
            box_reduction = tl.kind is ir.LoopKind.BOX and _is_box_reduction(s.value)
            if box_reduction and last_use.get(srcs[0], i) > i:
                box_tmp.add(s.value.args[0].type.dtype)
            if box_reduction and s.name not in out_of:
                # A box reduction accumulates over the chunks of the reduced axis while the box values of
                # later chunks come and go: its buffer is never shared (lowering/emit/box.py).
                buf = new_buffer("tmp", ir.Position.VECCALC, dtype, s.span, layout)
                where[s.name] = buf
                for b in dying:
                    if b not in free:
                        free.append(b)
                continue
            if isinstance(s.value, ir.Load):
                buf = new_buffer(f"{s.value.tensor}Local", ir.Position.VECIN, dtype, s.span, layout)
            elif s.name in out_of:
                buf = new_buffer(f"{out_of[s.name]}Local", ir.Position.VECOUT, params[out_of[s.name]].dtype, s.span,
                                 layout)
            else:
                alias_ok = not (isinstance(s.value, ir.Op) and writes_dst_early(s.value))
                fits = {b for b in decls if decls[b].dtype is dtype and decls[b].layout is layout}
                candidates = [b for b in dying if b in fits] if alias_ok else []
                candidates += [b for b in free if b in fits]
                if candidates:
                    buf = candidates[0]
                    if buf in free:
                        free.remove(buf)
                else:
                    buf = new_buffer("mask" if dtype is DType.BOOL else "tmp", ir.Position.VECCALC, dtype, s.span,
                                     layout)
            where[s.name] = buf
            for b in dying:
                if b != buf and b not in free:
                    free.append(b)
            if s.name not in last_use and decls[buf].position is ir.Position.VECCALC:
                free.append(buf)

        def rename(e: ir.Expr) -> ir.Expr:
            if isinstance(e, ir.Ref) and e.type.kind is ir.Kind.TILE:
                return replace(e, name=where[e.name])
            if isinstance(e, ir.Op):
                return replace(e, args=tuple(rename(a) for a in e.args))
            return e

        renamed = []
        for s in stmts:
            if isinstance(s, ir.Assign):
                renamed.append(replace(s, name=where[s.name], value=rename(s.value)))
            else:
                renamed.append(replace(s, value=rename(s.value)))

        def scratch(name: str, dtype: DType, layout: ir.Layout, role: ir.BufferRole, of: str | None = None) -> None:
            decls[name] = ir.Buffer(name, ir.Position.VECCALC, dtype, 1, _bits(dtype), layout, role, of, tl.span)

        for dtype in sorted(box_tmp, key=str):  # the halving tree of a box reduction whose box stays live
            scratch(f"boxTmp_{dtype}", dtype, ir.Layout.BOX, ir.BufferRole.BOX_TMP)
        for dtype in sorted({s.value.args[0].type.dtype for s in stmts if isinstance(s, ir.Assign) and
                             isinstance(s.value, ir.Op) and s.value.op in VECTOR_REDUCTIONS
                             and s.value.args[0].type.layout is not ir.Layout.BOX}, key=str):
            # ReduceSum/Max/Min need a scratch tensor (a row) and write their result to a 32-byte block.
            scratch(f"reduceTmp_{dtype}", dtype, ir.Layout.ROW, ir.BufferRole.REDUCE_TMP)
            scratch(f"reduceOut_{dtype}", dtype, ir.Layout.BLOCK, ir.BufferRole.REDUCE_OUT)
        if tl.kind is ir.LoopKind.ROWS:
            for dtype in sorted({s.value.args[0].type.dtype for s in stmts if isinstance(s, ir.Assign)
                                 and isinstance(s.value, ir.Op) and s.value.op in FOLDED_REDUCTIONS
                                 and s.value.args[0].type.layout is ir.Layout.ROWS}, key=str):
                # whole rows reduced a tile at a time: repeat columns folded across the rows (emit/tile_fold.py)
                scratch(f"foldTmp_{dtype}", dtype, ir.Layout.ROWS, ir.BufferRole.FOLD_TMP)
        if ctx.target.soc_family != "ascend310p" and any(
                isinstance(s, ir.Assign) and isinstance(s.value, ir.Op) and s.value.op in ("argmax", "argmin")
                and s.value.args[0].type.layout is ir.Layout.ROWS for s in stmts):
            # argmax / argmin: the tile's indices packed as i32 by the vector unit, then Cast to i64 (A2 has
            # int32 -> int64, 310P has not: there the scalar unit moves each index; emit/arg_reduce.py)
            scratch("argIdx_i32", DType.I32, ir.Layout.COL, ir.BufferRole.ARG_INDEX)
        if any(isinstance(s, ir.Assign) and isinstance(s.value, ir.Op) and s.value.op == "reduce_prod"
               and s.value.args[0].type.layout is ir.Layout.ROWS for s in stmts):
            # A row product multiplies halves of an f32 copy of the row (emit: row_prod snippet).
            scratch("reduceTmp_f32", DType.F32, ir.Layout.ROW, ir.BufferRole.REDUCE_TMP)
        for dtype in {s.value.type.dtype for s in stmts if isinstance(s, ir.Assign) and isinstance(s.value, ir.Op)
                      and s.value.op == "gather_bytes"}:  # Gather reads one row at a time from a row of its own
            scratch(f"reduceTmp_{dtype}", dtype, ir.Layout.ROW, ir.BufferRole.REDUCE_TMP)
        for dtype in {s.value.type.dtype for s in stmts if isinstance(s, ir.Assign) and isinstance(s.value, ir.Op)
                      and OPS[s.value.op].rule is Rule.ROW_SCATTER and not s.value.op.endswith("_dim0")}:  # a source row copied in from GM (row_scatter.py)
            scratch(f"reduceTmp_{dtype}", dtype, ir.Layout.ROW, ir.BufferRole.REDUCE_TMP)
        for dtype in {s.value.args[1].type.dtype for s in stmts if isinstance(s, ir.Assign) and isinstance(s.value, ir.Op)
                      and OPS[s.value.op].rule is Rule.ROW_SCATTER and s.value.op.endswith("_dim0")}:
            # element scatters along dim 0: each [N, D] index row is copied into a row of its dtype (row_scatter.py)
            scratch(f"reduceTmp_{dtype}", dtype, ir.Layout.ROW, ir.BufferRole.REDUCE_TMP)
        accs = [s for s in stmts if isinstance(s, ir.Accumulate)]
        for dtype, layout in sorted({(s.value.type.dtype, s.value.type.layout) for s in accs}, key=str):
            # An accumulated tile is reduced to one value (ReduceSum/Max/Min over the whole tile, or
            # row by row for whole rows): a scratch tensor like the tile (one row for whole rows).
            # ReduceSum keeps one value per 256-byte repeat in its scratch, ReduceMax/Min a value and an
            # index (ReduceSum.md / ReduceMax.md: the documented minimum sizes).
            scratch(f"accTmp_{dtype}", dtype, {ir.Layout.ROWS: ir.Layout.ROW,
                                               ir.Layout.FLAT: ir.Layout.REPEATS}.get(layout, layout), ir.BufferRole.ACC_TMP)
            scratch(f"reduceOut_{dtype}", dtype, ir.Layout.BLOCK, ir.BufferRole.REDUCE_OUT)
        for layout in sorted({s.value.type.layout for s in accs if s.reduce == "reduce_prod"}, key=str):
            # A chunk's product: its f32 copy, multiplied in halves (emit/chunk.py, the chunk_fold snippet).
            scratch("prodTmp_f32", DType.F32, layout, ir.BufferRole.PROD_TMP)
        for b in scratch_buffers(stmts, tl.span, tl.kind is ir.LoopKind.CHUNKS):  # vector scans (vector_scan.py)
            decls[b.name] = b
        # This core's running value of each accumulator stays in UB (an f32 block): the vector unit
        # folds each tile's reduction into it, and the scalar unit reads it once, after the loop.
        for name in dict.fromkeys(s.name for s in accs):
            scratch(f"accSlot_{name}", DType.F32, ir.Layout.BLOCK, ir.BufferRole.ACC_SLOT, name)
        if any(s.value.type.dtype is not DType.F32 for s in accs):
            scratch("accCast_f32", DType.F32, ir.Layout.BLOCK, ir.BufferRole.ACC_CAST)
        # A slot accumulator's running values: one f32 per slot, added into by the scalar unit per row.
        for name in dict.fromkeys(s.name for s in stmts if isinstance(s, ir.SlotAccumulate)):
            scratch(f"accVec_{name}", DType.F32, ir.Layout.SLOTS, ir.BufferRole.SLOT_VECTOR, name)
        # A slot accumulator read per row (s[r]) after its loop: its totals, copied into UB once per loop.
        for name in dict.fromkeys(e.tensor for s in stmts for e in ir.walk_expr(s.value)
                                  if isinstance(e, ir.Load) and e.index.acc):
            scratch(f"accTot_{name}", DType.F32, ir.Layout.SLOTS, ir.BufferRole.SLOT_TOTALS, name)
        return replace(tl, body=tuple(renamed), buffers_decl=tuple(decls.values()))

    return map_tile_bodies(kernel, body)
