"""Plan the cube side of a MIX kernel: base block sizes and the capacity checks they must pass.

Goals: the largest base block (baseM x baseN x baseK) whose operand tiles fit L0A / L0B, whose fp32
accumulator fits L0C, whose L1 working set fits L1 (ascendc.md §5.1, §8 rule 2) and whose epilogue
buffers fit UB; base sizes are multiples of the 16 x 16 f16/bf16 fractal; explicit sizes are
checked and reported at the matmul line. Whole-row epilogues (row reductions) get baseN = N at run
time; a plain `store(c[blk], acc)` into f32 is marked direct (IterateAll writes GM, no UB). MIX
kernels need separated cube and vector cores (910B); coupled targets (310P) are rejected.
Non-goals: single-core block sizes and core counts (the host tiling code, from runtime shapes).
Vector kernels pass through unchanged.
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.diagnostics import DiagnosticSink
from ascend_dsl.diagnostics import ErrorCode as E
from ascend_dsl.dtypes import DType
from ascend_dsl.ops import OPS, Rule

from ..context import PassContext
from .epilogue_bands import band_rows

FRACTAL = 16  # f16/bf16 fractal: 16 x 16 (ascendc.md §5.1)
DEFAULT_BASE = (128, 128, 64)  # baseM, baseN, baseK before shrinking for UB / small shapes
#: baseM when L0A and L0C hold it (f16/bf16: 256 x 64 x 2 B x 2 = 64 KB of L0A, 256 x 128 x 4 B = 128 KB of L0C on
#: 910B, ascendc.md §5.1): a 256 x 128 block loads (256 + 128) x K operand bytes for 256 x 128 x K MACs, 2/3 of
#: what two 128 x 128 blocks load, so the cube needs 96 instead of 128 B/cycle of GM -> L1 at full rate.
WIDE_BASE_M = 256
STEP_K = 2  # stepKa = stepKb: baseK slices of A / B per L1 load
DEPTH_L1 = 2 * STEP_K  # depthA1 = depthB1: two L1 loads in flight (double buffering)
DB_L0AB = 2  # L0A / L0B double-buffered
DB_L0C = 1
COUPLED_FAMILIES = ("ascend310p",)  # one AI core drives cube and vector (ascendc.md §3 terminology)


def l0a_bytes(bm: int, bk: int, esize: int) -> int:
    return bm * bk * esize * DB_L0AB


def l0b_bytes(bk: int, bn: int, esize: int) -> int:
    return bk * bn * esize * DB_L0AB


def l0c_bytes(bm: int, bn: int) -> int:
    return bm * bn * 4 * DB_L0C


def l1_bytes(bm: int, bn: int, bk: int, esize: int, bias: bool) -> int:
    return DEPTH_L1 * bm * bk * esize + DEPTH_L1 * bk * bn * esize + (bn * 4 if bias else 0)


def _elems(b: ir.Buffer, rows: int, pitch: int) -> int:
    return {ir.Layout.ROWS: rows * pitch, ir.Layout.COL: -(-rows // 128) * 128, ir.Layout.ROW: pitch,
            ir.Layout.FLAT: rows * pitch}.get(b.layout, 0)


def ub_bytes(buffers: tuple[ir.Buffer, ...], rows: int, pitch: int) -> int:
    """UB bytes of the epilogue's buffers for blocks of `rows` x `pitch` accumulator elements."""
    total = 0
    for b in buffers:
        raw = 32 if b.layout is ir.Layout.BLOCK else -(-_elems(b, rows, pitch) * b.bits // 8)
        total += b.num * (-(-raw // 32) * 32)
    return total


def is_direct(loop: ir.CubeLoop, kernel: ir.Kernel) -> bool:
    """The epilogue only stores the accumulator into an f32 tensor (allocate_buffers made it a UB -> UB copy)."""
    body = loop.epilogue.body
    stores = [s for s in body if isinstance(s, ir.Store)]
    if len(stores) != 1 or kernel.param(stores[0].tensor).dtype is not DType.F32:
        return False
    for s in body:
        if isinstance(s, ir.Assign) and not isinstance(s.value, ir.Load):
            v = s.value
            if not (isinstance(v, ir.Op) and v.op == "copy"):
                return False
    return True


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    loop = ir.cube_loop(kernel)
    if loop is None:
        return kernel
    t = ctx.target
    sink = DiagnosticSink()
    mm = loop.matmul
    span = mm.span
    if t.soc_family in COUPLED_FAMILIES:
        sink.error(E.MIX_UNSUPPORTED, f"{t.name} has no separate cube and vector cores (coupled mode); this compiler "
                   "emits MIX kernels (Matmul API driven from vector cores) for separated-mode chips only", loop.span,
                   "lower matmul kernels for --target ascend910b1 (or another 910B variant)")
        sink.raise_if_any()
    esize = kernel.param(mm.a).dtype.size
    epi = loop.epilogue
    for st in ir.walk(epi.body):
        for e in ir.walk_expr(getattr(st, "value", None)) if isinstance(st, (ir.Assign, ir.Store)) else ():
            if isinstance(e, ir.Op) and e.op in ("col_index", "row_index", "col_minus_row"):
                sink.error(E.UNSUPPORTED, "col_index() or row_index() in a matmul epilogue is taken only by the fused attention form "
                           "(a band of key - query offsets: select(col_index() <= row_index(), s * scale, fill), a sliding "
                           "window, abs(col_index() - row_index()) <= w, in the first of the two SDPA stages, "
                           "docs/language.md)", e.span,
                           "write the attention as the two chained SDPA stages, or use a mask tensor")
    sink.raise_if_any()
    whole_rows = any(isinstance(e, ir.Op) and OPS[e.op].rule is Rule.REDUCE for s in epi.body
                     if isinstance(s, (ir.Assign, ir.Store)) for e in ir.walk_expr(s.value))
    # a store of one value per row ([M] / [Bt, M]) is written once per row: by the base block spanning all N columns
    whole_rows = whole_rows or any(isinstance(s, (ir.Store, ir.CopyOut)) and tuple(kernel.param(s.tensor).shape)
                                   == (*loop.batch, loop.m) for s in ir.walk(epi.body))
    direct = not whole_rows and is_direct(loop, kernel)
    names = ("base_m", "base_n", "base_k")
    for name, v in zip(names, mm.base, strict=True):
        if v is not None and v % FRACTAL:
            sink.error(E.CUBE_FRACTAL, f"{name}={v} is not a multiple of {FRACTAL}", span,
                       f"the cube works on {FRACTAL} x {FRACTAL} fractals of f16/bf16: use {name}="
                       f"{max(FRACTAL, v // FRACTAL * FRACTAL)}")
    if whole_rows and mm.base[1] is not None:
        sink.error(E.UNSUPPORTED, "the epilogue reduces along rows, so a base block spans all N columns; base_n cannot "
                   "be set", span, "drop base_n (it is N, chosen at run time)")
    sink.raise_if_any()
    bm, bn, bk = (v if v is not None else d for v, d in zip(mm.base, DEFAULT_BASE, strict=True))
    if mm.base[0] is None and l0a_bytes(WIDE_BASE_M, bk, esize) <= t.l0a_bytes and l0c_bytes(WIDE_BASE_M, bn) <= t.l0c_bytes:
        bm = WIDE_BASE_M
    budget = t.ub_budget
    bufs = epi.buffers_decl
    auto_m, auto_n = mm.base[0] is None, mm.base[1] is None
    bands = 0
    if not direct and not whole_rows and auto_m and auto_n and ctx.allow_split_k:
        # the cube keeps its block; the epilogue runs on bands of it from a GM slot (epilogue_bands.py)
        bands = band_rows(bufs, bm, bn, budget, ub_bytes)
    if not bands and not direct and not whole_rows and (auto_m or auto_n):
        # UB holds a whole base block per buffer (GetTensorC fetches a block at once). When double-buffered
        # epilogue queues leave the cube less than a 128 x 128 block, single buffers that give it a larger one win:
        # the cube's GM -> L1 bytes per MAC fall with the block's size, the epilogue's time stays, and the cost
        # model serialises the pipes of single-buffered queues (it never assumes the overlap they lose).
        single = tuple(replace(b, num=1) if b.position is not ir.Position.VECCALC else b for b in bufs)
        double_m, double_n = _fit(bufs, bm, bn, auto_m, auto_n, budget)
        single_m, single_n = _fit(single, bm, bn, auto_m, auto_n, budget)
        if double_m * double_n < DEFAULT_BASE[0] * DEFAULT_BASE[1] and single_m * single_n > double_m * double_n:
            bufs, epi = single, replace(epi, buffers_decl=single, buffers=1)
    if not bands and not direct and not whole_rows:
        bm, bn = _fit(bufs, bm, bn, auto_m, auto_n, budget)
        if ub_bytes(bufs, bm, bn) > budget:
            sink.error(E.UB_CAPACITY, f"the epilogue needs {ub_bytes(bufs, bm, bn)} B of Unified Buffer for a "
                       f"{bm} x {bn} base block; {t.name} allows {budget} B", span,
                       "use smaller base_m / base_n (or leave them to the compiler) or fewer temporaries",
                       notes=[", ".join(f"{b.name} {b.num} x {ub_bytes((replace(b, num=1),), bm, bn)} B"
                                        for b in bufs)])
    checks = [
        (E.L0A_CAPACITY, l0a_bytes(bm, bk, esize), t.l0a_bytes, "L0A",
         f"base_m x base_k x {esize} B x {DB_L0AB} (double-buffered)", f"base_m x base_k <= {t.l0a_bytes // (esize * DB_L0AB)}"),
        (E.L0B_CAPACITY, l0b_bytes(bk, bn, esize), t.l0b_bytes, "L0B",
         f"base_k x base_n x {esize} B x {DB_L0AB} (double-buffered)", f"base_k x base_n <= {t.l0b_bytes // (esize * DB_L0AB)}"),
        (E.L0C_CAPACITY, l0c_bytes(bm, bn), t.l0c_bytes, "L0C", "base_m x base_n x 4 B (f32 accumulator)",
         f"base_m x base_n <= {t.l0c_bytes // 4 // DB_L0C}"),
        (E.L1_CAPACITY, l1_bytes(bm, bn, bk, esize, mm.bias is not None), t.l1_bytes, "L1",
         f"{DEPTH_L1} x (base_m x base_k + base_k x base_n) x {esize} B (+ bias row)", "smaller base sizes"),
    ]
    for code, need, have, mem, formula, hint in checks:
        if need > have:
            sink.error(code, f"a {bm} x {bn} x {bk} base block needs {need} B of {mem}; {t.name} has {have} B", span,
                       f"{hint} (or leave base sizes to the compiler)", notes=[f"{mem} use = {formula}"])
    sink.raise_if_any()
    plan = ir.CubePlan(bm, bn, bk, whole_rows, direct, band_rows=bands)
    return replace(kernel, body=tuple(replace(s, plan=plan, body=tuple(epi if b is loop.epilogue else b for b in s.body)) if s is loop else s for s in kernel.body))


def _fit(bufs: tuple[ir.Buffer, ...], bm: int, bn: int, auto_m: bool, auto_n: bool, budget: int) -> tuple[int, int]:
    """The base block UB shrinking reaches for these buffers (halving N first while N >= M); it may still not fit
    when neither side can shrink further."""
    while ub_bytes(bufs, bm, bn) > budget:
        if auto_n and bn > FRACTAL and (bn >= bm or not auto_m or bm <= FRACTAL):
            bn //= 2
        elif auto_m and bm > FRACTAL:
            bm //= 2
        else:
            break
    return bm, bn
