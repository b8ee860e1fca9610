"""torch.gather along a middle dim on the vector unit: x's column slabs in UB, one `Gather` per tile of index rows.

`store(y[r, :], gather(x, load(idx[r, :])))` under `split(A.. * K)` (op gather_middle, instruction GatherMiddle:
y[a, k, c] = x[a, idx[a, k, c], c]) is lowered by lowering/emit/col_select.py `middle_lines` as a scalar walk: two
scalar reads per element, one of them from GM (0 % of the ideal at the gallery shape). When that gather is the
loop's only work (copy in the index rows, gather, copy out y), this pass makes the kernel GATHER_MIDDLE
(lowering/emit/gather_middle.py): its work items are (group a, column block c0..c0+Cb) instead of output rows, so
each core copies the slab x[a, :, c0:c0+Cb] (R rows, one strided DMA) into UB once and gathers every one of the
group's K output rows of that block from it: x, the index and y each cross GM once. The index becomes byte offsets
on the vector unit (Cast i64 -> i32, clamped to [-1, R], checked by ReduceMax / ReduceMin: a number outside [0, R)
stops the kernel with Trap(), as the scalar walk does), then `(n * P + c) * sizeof(T)` (P the block's UB pitch).

The host picks Cb (the column blocks' balance over the cores against their burst length) and the index rows per
tile from the UB budget; when not even one 32-byte column block of R rows fits UB beside one index row, it runs the
same kernel's scalar walk (the col_select form: x read per element from GM) instead — a run-time choice, since R is
usually a shape symbol. The decision and its reason are the op's attributes (`--dump-after plan_gather_middle`).

Kept as the scalar GatherMiddle (with `vector=no: why`): other work in the loop or kernel, a target without
DataCopyPad (strided slabs), an i64 index on 310P (no Cast from int64), more than one split or tile loop.
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.dtypes import DType
from ascend_dsl.parser_scatter import tensor_name

from ..context import PassContext
from ..rewrite import sole_tile_loop

SCALAR, API = "GatherMiddle", "GatherMiddleVec"
DTYPES = (DType.F16, DType.F32, DType.I32)  # Gather's (ascendc_next.md §3.1) among gather_middle's


def _why_not(kernel: ir.Kernel, ctx: PassContext) -> str:
    """'' when the kernel is one gather along a middle dim the vector form takes; else why not."""
    split, tl, why = sole_tile_loop(kernel)
    if tl is None:
        return why
    ops = [s for s in tl.body if isinstance(s, ir.VecOp)]
    if tl.kind is not ir.LoopKind.ROWS or len(tl.body) != 3 or len(ops) != 1 or ops[0].api != SCALAR:
        return "the loop does more than copy in the index, gather and store"
    copy_in, op, copy_out = tl.body
    if not (isinstance(copy_in, ir.CopyIn) and isinstance(copy_out, ir.CopyOut)
            and op.srcs[0] == copy_in.buffer and copy_out.buffer == op.dst):
        return "the gather's result is not stored as it is"
    x = {p.name: p for p in kernel.tensors}[tensor_name(op.srcs[1])]
    index = {p.name: p for p in kernel.tensors}[copy_in.tensor]
    if x.dtype not in DTYPES:
        return f"Gather has no {x.dtype.value}"
    if not ctx.target.has_datacopypad:
        return "no DataCopyPad on this target (the slabs are strided copies)"
    if index.dtype is DType.I64 and ctx.target.name.startswith("ascend310"):
        return "no Cast from int64 on this target"
    return ""


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    if kernel.kind is not ir.KernelKind.VECTOR:
        return kernel
    gathers = [s for s in ir.walk(kernel.body) if isinstance(s, ir.VecOp) and s.api == SCALAR]
    if not gathers:
        return kernel
    why = _why_not(kernel, ctx)
    split = kernel.body[0]

    def mark(s: ir.Stmt) -> ir.Stmt:
        if not (isinstance(s, ir.VecOp) and s.api == SCALAR):
            return s
        if why:
            return replace(s, attrs=(*s.attrs, ("vector", f"no: {why} (the scalar walk, x read per element)")))
        return replace(s, api=API, attrs=(*s.attrs, ("work", "(group, column block): x[a, :, c0:c0+Cb] in UB once"),
                                          ("fallback", "the scalar walk when one 32-byte column block of R rows "
                                                       "does not fit UB (the host decides)")))

    if why:
        return _map_loop(kernel, mark)
    kernel = _map_loop(kernel, mark)
    assert isinstance(split, ir.SplitLoop)
    return replace(kernel, kind=ir.KernelKind.GATHER_MIDDLE)


def _map_loop(kernel: ir.Kernel, f) -> ir.Kernel:
    def stmt(s: ir.Stmt) -> ir.Stmt:
        if isinstance(s, ir.SplitLoop):
            return replace(s, body=tuple(stmt(b) for b in s.body))
        if isinstance(s, ir.TileLoop):
            return replace(s, body=tuple(f(b) for b in s.body))
        return s
    return replace(kernel, body=tuple(stmt(s) for s in kernel.body))
