"""Kind GATHER_MIDDLE: torch.gather along a middle dim with x's column slabs in UB (gather_middle_*.jinja).

Planned by lowering/passes/plan_gather_middle.py. x [A.., R, C] (C: the product of the row dims), idx and y
[A.., K, C]. A work item is (group a, column block c0..c0+cw), cw <= Cb, the host's block width (a multiple of
32 bytes of T); the items are split over the cores in contiguous shares. Per item: the slab x[a, :, c0:c0+cw]
(R rows, one DataCopyPad of R bursts, <= 4095 per call) at a pitch P = cw rounded up to 32 bytes, its padding
zeroed (isPad); then per tile of <= kt index rows: the index rows at the same pitch P (the blocks a partial block's
i64 / i32 rows do not reach are zeroed first by a Duplicate), the offsets `(clamp(n, -1, R) * P + c) * sizeof(T)`
(Cast, Maxs, Mins, Muls, Add of a column table built by Arange and doubling), the range check (the clamped numbers
as f32, ReduceMax / ReduceMin, read by the scalar unit: Trap() outside [0, R), as the scalar walk), one Gather of
the tile from the slab, and the y rows out (DataCopyPad). The host's `vec` = 0 (one 32-byte block of R rows and one
index row do not fit UB, or R = 0 or R >= 2^24, where f32 would not hold the clamped numbers exactly) runs the
scalar walk per element over the same items and tiles (col_select.py's form: x read from GM).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ascend_dsl import ir
from ascend_dsl.dtypes import DType
from ascend_dsl.parser_scatter import tensor_name

from ..context import PassContext
from ..passes.plan_gather_middle import API
from .shared import KernelView, buffer_views, kernel_fields, loc, manifest


@dataclass(frozen=True, kw_only=True)
class GatherMiddleView(KernelView):
    x_name: str
    index_name: str
    y_name: str
    x_gm: str
    index_gm: str
    y_gm: str
    ctype: str  # x / y elements
    tsize: int
    ictype: str  # index elements
    isize: int
    i64: bool
    groups: str  # A.. product, over tiling fields
    rows: str  # R
    k: str  # K
    cols: str  # C (the product of the row dims)
    host_groups: str
    host_rows: str
    host_k: str
    host_cols: str
    sizes: tuple[tuple[str, str], ...]  # every tensor's elements over tiling fields, by name
    split_loc: str
    gather_loc: str
    ub_budget: int


def _dim(d, fmt: str) -> str:
    return str(d) if isinstance(d, int) or str(d).isdigit() else fmt.format(d)


def _product(dims, fmt: str) -> str:
    parts = [_dim(d, fmt) for d in dims]
    if all(p.isdigit() for p in parts):
        return str(prod(int(p) for p in parts))
    return " * ".join(f"static_cast<uint64_t>({p})" for p in parts) if parts else "1"


def build_view(kernel: ir.Kernel, ctx: PassContext) -> GatherMiddleView:
    split = kernel.body[0]
    tl = split.body[0]
    stmts = [s for st in tl.body for s in (st.body if isinstance(st, ir.Stage) else (st,))]
    copy_in = next(s for s in stmts if isinstance(s, ir.CopyIn))
    copy_out = next(s for s in stmts if isinstance(s, ir.CopyOut))
    op = next(s for s in stmts if isinstance(s, ir.VecOp) and s.api == API)
    params = {p.name: p for p in kernel.tensors}
    x, index, y = params[tensor_name(op.srcs[1])], params[copy_in.tensor], params[copy_out.tensor]
    fields = kernel_fields(kernel, ctx)
    gm = {t.name: t.gm for t in fields["tensors"]}
    lead = len(split.extent) - 1
    shape = x.shape
    dims = {"groups": shape[:lead], "rows": (shape[lead],), "k": (split.extent[-1],), "cols": shape[lead + 1:]}
    return GatherMiddleView(
        **fields, buffers=buffer_views(tl), split_loc=loc(ctx, split.span),
        sizes=tuple((p.name, _product(p.shape, "tiling.{}")) for p in kernel.tensors), x_name=x.name, index_name=index.name, y_name=y.name,
        x_gm=gm[x.name], index_gm=gm[index.name], y_gm=gm[y.name], ctype=x.dtype.ctype, tsize=x.dtype.size, ictype=index.dtype.ctype, isize=index.dtype.size,
        i64=index.dtype is DType.I64,
        **{k: _product(v, "tiling.{}") for k, v in dims.items()},
        **{f"host_{k}": _product(v, "{}") for k, v in dims.items()},
        gather_loc=loc(ctx, op.span), ub_budget=ctx.target.ub_budget,
        tiling_error="the host tiling found no column block and index tile that fit the Unified Buffer")


def project_manifest(kernel: ir.Kernel, ctx: PassContext, view: GatherMiddleView) -> dict:
    tl = kernel.body[0].body[0]
    return manifest(kernel, ctx, view, "AIV_ONLY", None, "items", tl.buffers_decl, 0)
