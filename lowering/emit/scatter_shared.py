"""Kind SCATTER_SHARED: index_copy / index_add along the last dim by one shared index row (scatter_shared_*.jinja).

Planned by lowering/passes/plan_scatter_shared.py. x, src, y [B, D], index [D]; each core owns a contiguous share of
the B rows. Vector form (the host's vec = 1): per core, once, the inverse of the index (the prototype
tests/sim/kernels/scatter_inverse.cpp, docs/design.md session 36 under the element scatter): keys t = n_j * (Dp + 1)
+ 1 + j for the sources (n_j the index clamped to [-1, D]) and t = c * (Dp + 1) for a marker per column c < Dp (Dp:
D rounded up to 64), as f32 scores 2^24 - t (distinct and exact: no tie order is relied on), payload j or Dp + c;
the range check first (ReduceMax / ReduceMin of the clamped numbers: Trap() outside [0, D)). Sort32, 4-way MrgSort
rounds and one last 2- or 3-way merge over Np = 32 x 4^k x {1, 2, 3} >= 2 Dp entries (the rest padding that sorts
last) give marker c, then c's sources in ascending j, then marker c + 1. The payloads by GatherMask (odd words);
the marker positions q[c] by Compares (payload >= Dp) + Brcb + counter-mode GatherMask; the last source of c is
the payload at q[c + 1] - 1 (a Gather), the column is written when q[c + 1] - q[c] > 1 (a Compares mask). Per row:
`Gather` of src by those offsets and `Select` against x, rows double-buffered in the sort's buffers. index_add
(`add`): src (times the scalar `scale`) gathered in sorted order by the payloads' offsets, then y = x and per level
k < the most sources of a column: the k-th source of each column (a Gather at q[c] + 1 + k), an Add and a Select
of the columns with more than k sources (a Compares of q[c + 1] - q[c] - 1 > k): column order, rounded per step;
its rows single-buffered (the tables take the UB of the second slot). The host
computes the UB layout (the tiling's region offsets), so the kernel and the host cannot disagree on it. Scalar
form (vec = 0: D > 4096 or the layout does not fit UB): per row the scalar walk of lowering/emit/scatter.py
(Trap() on an index outside [0, D)).
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from ..context import PassContext
from ..passes.plan_scatter_shared import API, API_ADD, scale_operand
from .shared import KernelView, buffer_views, kernel_fields, loc, manifest


@dataclass(frozen=True, kw_only=True)
class ScatterSharedView(KernelView):
    x_gm: str
    index_gm: str
    src_gm: str
    y_gm: str
    ctype: str  # x / src / y elements
    tsize: int
    ictype: str  # index elements
    isize: int
    i64: bool
    rows: str  # B, over tiling fields
    cols: str  # D
    host_rows: str
    host_cols: str
    sizes: tuple[tuple[str, str], ...]  # every tensor's elements over tiling fields, by name
    split_loc: str
    scatter_loc: str
    ub_budget: int
    add: bool  # index_add: per repeat level a Gather, Add and Select
    scale: str  # index_add: the C++ scalar src is multiplied by first ("" when none)


def _dim(d, fmt: str) -> str:
    return str(d) if isinstance(d, int) or str(d).isdigit() else fmt.format(d)


def build_view(kernel: ir.Kernel, ctx: PassContext) -> ScatterSharedView:
    split = kernel.body[0]
    tl = split.body[0]
    stmts = [s for st in tl.body for s in (st.body if isinstance(st, ir.Stage) else (st,))]
    ins = {s.buffer: s for s in stmts if isinstance(s, ir.CopyIn)}
    op = next(s for s in stmts if isinstance(s, ir.VecOp) and s.api in (API, API_ADD))
    muls = next((s for s in stmts if isinstance(s, ir.VecOp) and s.api == "Muls"), None)
    out = next(s for s in stmts if isinstance(s, ir.CopyOut))
    params = {p.name: p for p in kernel.tensors}
    x, index = (params[ins[b].tensor] for b in op.srcs[:2])
    src = params[ins[muls.srcs[0] if muls else op.srcs[2]].tensor]
    scale = ""
    if muls is not None:
        k = scale_operand(muls)  # rendered as static_cast<T>(scale): the cast to the data's dtype
        scale = f"{k.name}_" if isinstance(k, ir.Ref) else repr(float(k.value))
    y = params[out.tensor]
    fields = kernel_fields(kernel, ctx)
    gm = {t.name: t.gm for t in fields["tensors"]}
    b, d = x.shape

    def size(p) -> str:
        parts = [_dim(s, "tiling.{}") for s in p.shape]
        return " * ".join(f"static_cast<uint64_t>({s})" for s in parts)

    return ScatterSharedView(
        **fields, buffers=buffer_views(tl), split_loc=loc(ctx, split.span), scatter_loc=loc(ctx, op.span),
        sizes=tuple((p.name, size(p)) for p in kernel.tensors),
        x_gm=gm[x.name], index_gm=gm[index.name], src_gm=gm[src.name], y_gm=gm[y.name],
        ctype=x.dtype.ctype, tsize=x.dtype.size, ictype=index.dtype.ctype, isize=index.dtype.size,
        i64=index.dtype is DType.I64, rows=_dim(b, "tiling.{}"), cols=_dim(d, "tiling.{}"),
        host_rows=_dim(b, "{}"), host_cols=_dim(d, "{}"), ub_budget=ctx.target.ub_budget,
        add=op.api == API_ADD, scale=scale,
        tiling_error="the host tiling found no layout of one row of x, src and the index that fits the Unified Buffer")


def project_manifest(kernel: ir.Kernel, ctx: PassContext, view: ScatterSharedView) -> dict:
    tl = kernel.body[0].body[0]
    return manifest(kernel, ctx, view, "AIV_ONLY", None, "rows", tl.buffers_decl, 0)
