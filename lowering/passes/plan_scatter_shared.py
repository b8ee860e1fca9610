"""index_copy / index_add along the last dim with ONE index row shared by every row: the index's inverse on the vector unit.

`store(y[r, :], scatter(load(x[r, :]), load(index[:]), load(src[r, :])))` under `split(B)` (op scatter, instruction
Scatter with an index row vector) is lowered by lowering/emit/scatter.py `row_lines` as a scalar walk: D scalar
steps per row (1-2 % of the ideal at KernelBench's 128 x 4096). When that scatter is the loop's only work (copy
in x, the index and src, scatter, store y), this pass makes the kernel SCATTER_SHARED (lowering/emit/
scatter_shared.py): each core inverts the index once on the vector unit (Sort32 + MrgSort of distinct f32 keys,
a marker per output column; docs/design.md, session 36 under the element scatter) into a gather table (the last
source of each column) and a mask (the columns some source names), then every row is one `Gather` of its src row
and one `Select` against its x row: the last source wins, as the scalar walk. An index outside [0, D) stops the
kernel (Trap).

The host takes the vector form when D <= 4096 and its buffers fit UB (D * D + D - 1 <= 2^25 keeps the keys exact
in f32 up to D = 5792; the merge's lists stay <= 4095 pairs up to D = 4096); else the same kernel runs the scalar
walk row by row — a run-time choice, since D is usually a shape symbol. The decision and its reason are the op's
attributes (`--dump-after plan_scatter_shared`).

index_add (`scatter_add`, src optionally scaled by a scalar: `load(src[r, :]) * alpha`) takes the same inverse: each
row's sources are gathered in sorted order once, then per repeat level k (up to the most sources of one column) a
Gather of the k-th source of every column, an Add and a Select of the columns with more than k sources: repeats
add in column order, rounded per step, as the scalar walk. Not considered: an index per element. Kept as the scalar Scatter (with
`vector=no: why`): a scalar value, other work in the loop or kernel, more than one split or tile loop, tensors that are not [B, D], dtypes
other than f16 / f32 (Gather and Select), a target without Sort32 / MrgSort (310P) or DataCopyPad.
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from ..context import PassContext
from ..rewrite import sole_tile_loop

SCALAR, API = "Scatter", "ScatterSharedVec"
SCALAR_ADD, API_ADD = "ScatterAdd", "ScatterSharedAddVec"
DTYPES = (DType.F16, DType.F32)  # Gather and Select (ascendc_next.md §3.1, §3.3) among scatter's


def _flat(tl: ir.TileLoop) -> list:
    return [s for st in tl.body for s in (st.body if isinstance(st, ir.Stage) else (st,))]


def scale_operand(muls: ir.VecOp):
    """The scalar of `Muls(src, k)` under its casts to the data's dtype (f16 data: `cast(alpha, f16)`)."""
    k = muls.srcs[1]
    while isinstance(k, ir.Op) and k.op == "cast":
        k = k.args[0]
    return k


def _why_not(kernel: ir.Kernel, ctx: PassContext) -> str:
    """'' when the kernel is one index_copy along the last dim with a shared index row; else why not."""
    split, tl, why = sole_tile_loop(kernel)
    if tl is None:
        return why
    stmts = _flat(tl)
    ops = [s for s in stmts if isinstance(s, ir.VecOp)]
    ins = {s.buffer: s for s in stmts if isinstance(s, ir.CopyIn)}
    outs = [s for s in stmts if isinstance(s, ir.CopyOut)]
    scaled = len(ops) == 2 and ops[0].api == "Muls" and ops[1].api == SCALAR_ADD and ops[1].srcs[2] == ops[0].dst
    if tl.kind is not ir.LoopKind.ROWS or len(ops) != 1 + scaled or len(outs) != 1 or len(ins) + len(ops) + 1 != len(stmts):
        return "the loop does more than copy in x, the index and src, scatter and store"
    op, out = ops[-1], outs[0]
    if len(op.srcs) == 3 and not isinstance(op.srcs[2], str):
        return "a scalar value, not src rows (a Duplicate and Select would do: not lowered)"
    srcs = (*op.srcs[:2], ops[0].srcs[0]) if scaled else op.srcs
    k = scale_operand(ops[0]) if scaled else None
    if scaled and not (isinstance(k, ir.Const) or (isinstance(k, ir.Ref) and k.name in {p.name for p in kernel.scalars})):
        return "src is scaled by something other than a scalar parameter or a number"
    if out.buffer != op.dst or len(op.srcs) != 3 or not all(isinstance(b, str) and b in ins for b in srcs):
        return "the scatter's operands are not loaded tensors, or its result is not stored as it is"
    op = replace(op, srcs=srcs)
    cin_x, cin_i, cin_s = (ins[b] for b in op.srcs)
    if not (cin_x.index.rows and cin_s.index.rows and not cin_i.index.rows and cin_i.index.var is None):
        return "not one index row shared by every row (an index per element keeps the scalar walk)"
    params = {p.name: p for p in kernel.tensors}
    x, index, src, y = params[cin_x.tensor], params[cin_i.tensor], params[cin_s.tensor], params[out.tensor]
    if any(len(t.shape) != 2 for t in (x, src, y)) or len(index.shape) != 1:
        return "x, src and y are not [B, D] with a [D] index"
    if not (x.shape == src.shape == y.shape and index.shape[0] == x.shape[1] and split.extent == (x.shape[0],)):
        return "x, src, y and the index do not share B and D"
    if x.dtype not in DTYPES or not x.dtype == src.dtype == y.dtype:
        return f"Gather and Select have no {x.dtype.value}"
    if index.dtype not in (DType.I64, DType.I32):
        return f"an index of {index.dtype.value}"
    if ctx.target.name.startswith("ascend310"):
        return "no Sort32 / MrgSort on this target (the 310P sorts region proposals)"
    if not ctx.target.has_datacopypad:
        return "no DataCopyPad on this target"
    return ""


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    if kernel.kind is not ir.KernelKind.VECTOR:
        return kernel
    rowvec = {s.buffer for s in ir.walk(kernel.body) if isinstance(s, ir.CopyIn) and not s.index.rows
              and s.index.var is None}
    shared = [s for s in ir.walk(kernel.body) if isinstance(s, ir.VecOp) and s.api in (SCALAR, SCALAR_ADD)
              and len(s.srcs) == 3 and s.srcs[1] in rowvec]
    if not shared:  # an index per element, a scatter of rows: not this form (nothing recorded)
        return kernel
    why = _why_not(kernel, ctx)
    rows = {SCALAR: "Gather of src by the last source per column, Select against x",
            SCALAR_ADD: "src in sorted order (one Gather), then per repeat level k a Gather, Add and Select "
                        "(columns with more than k sources): repeats added in column order"}

    def mark(s: ir.Stmt) -> ir.Stmt:
        if not (isinstance(s, ir.VecOp) and s in shared):
            return s
        if why:
            return replace(s, attrs=(*s.attrs, ("vector", f"no: {why} (the scalar walk, D steps per row)")))
        return replace(s, api=API if s.api == SCALAR else API_ADD,
                       attrs=(*s.attrs, ("inverse", "once per core: Sort32 + MrgSort of the index's keys and a marker "
                                                    "per column"), ("rows", rows[s.api]),
                              ("fallback", "the scalar walk when D > 4096 or the buffers do not fit UB (the host "
                                           "decides)")))

    kernel = _map_loop(kernel, mark)
    return kernel if why else replace(kernel, kind=ir.KernelKind.SCATTER_SHARED)


def _map_loop(kernel: ir.Kernel, f) -> ir.Kernel:
    def stmt(s: ir.Stmt) -> ir.Stmt:
        if isinstance(s, ir.SplitLoop):
            return replace(s, body=tuple(stmt(b) for b in s.body))
        if isinstance(s, ir.TileLoop):
            return replace(s, body=tuple(stmt(b) for b in s.body))
        if isinstance(s, ir.Stage):
            return replace(s, body=tuple(f(b) for b in s.body))
        return f(s)
    return replace(kernel, body=tuple(stmt(s) for s in kernel.body))
