"""Kind FLASH: fused attention (flash attention) as one MIX kernel (flash_*.jinja).

A task is (batch entry, block of Bq query rows), taken round-robin by the vector cores (AIV). Each AIV
keeps the block's running row max m and row sum l in UB and its output O (Bq x Dv, fp32) in its own GM
slot, and walks the keys in blocks of Bk (ascendc_next.md §2.1):

    Q_blk (times the scale when that is exact: +-2^-k) -> the AIV's Q slot, once per task
    S = Q_blk K_j^T                      cube (Matmul object 0, Iterate + GetTensorC into UB)
    X = S [* scale]  [masked: select]    vector
    P = exp(X - m) while every row sum stays <= ~e^8; otherwise m' = max(m, rowmax(X)), P = exp(X - m'),
      c = exp(m - m'), l = l * c, O = O * c (in the slot); l += rowsum(P)
    P (cast to the operands' type) -> the AIV's own GM slot
    O += P V_j                           cube (Matmul object 1, GetTensorC into the O slot with enAtomic)
    finally O / l -> o

Both Matmul objects are driven from the AIV (the slots are private to the core, so no cross-core flags;
the AIC-centric ring of CATLASS is the faster follow-up). The host tiling (flash_tiling.h) picks Bq and
Bk (at most plan_flash's maxima) so that the two base blocks fit L0A/L0B/L0C/L1 and the block's
buffers fit UB, fills one TCubeTiling per Matmul object and places the P, O and Q slots after the Matmul
API's system workspace.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from ..context import PassContext
from ..passes.plan_cube import DB_L0AB, DB_L0C, DEPTH_L1, FRACTAL, STEP_K
from .chain import SYS_WORKSPACE, WORKSPACE_ALIGN
from .mix import MIX_RATIO, group_checks, operand_offset
from .shared import KernelView, kernel_fields, loc, manifest, tensor_views

#: A band's fill at or below this makes the keys outside the band weigh exactly 0 (e^(fill - max) underflows for any
#: kept score above -1e30 + 104), so their blocks are skipped; a larger fill (-10000.0, 0.0) computes every key block.
SKIP_FILL = -1.0e30
_COMPARE = {"gt": "GT", "ge": "GE", "lt": "LT", "le": "LE", "eq": "EQ", "ne": "NE"}


@dataclass(frozen=True, kw_only=True)
class FlashView(KernelView):
    loc: str
    q: str
    k: str
    v: str
    o: str
    in_ctype: str
    out_ctype: str
    cast_out: bool
    M: str
    N: str
    Dk: str
    Dv: str
    batch_expr: str
    batch_host: str
    q_batch: str
    k_batch: str
    v_batch: str
    o_batch: str
    scale: str
    mask: str | None
    band: bool  # a band from positions, lo <= key j - query i <= hi: key blocks outside it skipped
    band_lo: str  # C++ int64 expressions of the band's bounds ("" unbounded)
    band_hi: str
    skip_band: bool  # the fill is -inf-like (<= SKIP_FILL): the keys outside the band weigh exactly 0, so not computed
    mask_ctype: str
    mask_batch: str
    mask_cmp: str
    mask_threshold: str
    mask_fill: str
    q_scale: bool  # the scale goes into the task's Q block on its way to the Q slot (when it is +-2^-k: exact), not into every score
    max_bq: int
    max_bk: int
    esize: int
    mask_esize: int
    cmp_align: int  # mask elements per 256-byte repeat (Compares works on whole repeats)
    fractal: int
    step_k: int
    depth_l1: int
    db_l0ab: int
    db_l0c: int
    l0a: int
    l0b: int
    l0c: int
    l1: int
    ub_budget: int
    mix_ratio: int
    sys_workspace: str
    align: int
    workspace_bytes: str = "tiling.workspaceBytes"  # the host programs allocate what the tiling placed
    #: Rendered inside the ring's project (emit/flash_ring.py): the entry and the tiling function become the ring's
    #: fallback at the shapes it does not take (`<entry>_api`, `<tiling_fn>_api`), the tiling struct gains its fields.
    ring_api: bool = False


def _float(x: float) -> str:
    return f"{x!r}f" if "e" in repr(x) or "." in repr(x) else f"{x!r}.0f"


def _bound(bounds: tuple[ir.FlashBound, ...], pick: str) -> str:
    """max / min (`pick`) of the bounds as one int64 C++ expression; "" for none."""
    terms = [" ".join([f"static_cast<int64_t>({b.const})"]
                      + [f"{'+' if s > 0 else '-'} static_cast<int64_t>({n}_)" for s, n in b.params]) for b in bounds]
    out = ""
    for term in terms:
        out = f"{pick}({out}, {term})" if out else f"({term})"
    return out


def build_view(kernel: ir.Kernel, ctx: PassContext) -> FlashView:
    fa = kernel.body[0]
    assert isinstance(fa, ir.FlashAttention)
    fields = kernel_fields(kernel, ctx)
    ws = {p.name for p in kernel.workspaces}
    fields["tensors"] = tuple(t for t in tensor_views(kernel) if t.name not in ws)
    fields["launch_scalars"] = ()
    params = {p.name: p for p in kernel.tensors}
    q, o = params[fa.q], params[fa.o]
    scale = _float(float(fa.scale.value)) if isinstance(fa.scale, ir.Const) else f"{fa.scale.name}_"
    mask = params[fa.mask.tensor] if fa.mask and fa.mask.tensor else None
    fields["launch_checks"] = tuple(c for p in kernel.tensors if p.name not in ws and len(p.shape) >= 2
                                    and (c := group_checks(p, fa.batch)) is not None)
    t = ctx.target
    return FlashView(
        **fields, buffers=(), mix=True, gm_workspace="tiling.workspaceBytes",
        tiling_error="the host tiling found no query/key block that fits L0A/L0B/L0C/L1 and the Unified Buffer "
                     f"(the value head dim {fa.dv} is too large)",
        loc=loc(ctx, fa.span), q=fa.q, k=fa.k, v=fa.v, o=fa.o, in_ctype=q.dtype.ctype, out_ctype=o.dtype.ctype,
        cast_out=o.dtype is not DType.F32,
        M=fa.m, N=fa.n, Dk=fa.dk, Dv=fa.dv, batch_expr="".join(f"{d}_ * " for d in fa.batch),
        batch_host=" * ".join(fa.batch) or "1", q_batch=operand_offset(q.shape, fa.batch),
        k_batch=operand_offset(params[fa.k].shape, fa.batch), v_batch=operand_offset(params[fa.v].shape, fa.batch),
        o_batch=operand_offset(o.shape, fa.batch), scale=scale, mask=mask.name if mask else None, band=bool(fa.mask and not fa.mask.tensor),
        band_lo=_bound(fa.mask.lo, "Max64") if fa.mask else "", band_hi=_bound(fa.mask.hi, "Min64") if fa.mask else "",
        skip_band=bool(fa.mask and fa.mask.fill <= SKIP_FILL),
        mask_ctype=mask.dtype.ctype if mask else "float", mask_batch=operand_offset(mask.shape, fa.batch) if mask else "",
        mask_cmp=_COMPARE[fa.mask.compare] if mask else "", mask_threshold=_float(fa.mask.threshold) if fa.mask else "",
        mask_fill=_float(fa.mask.fill) if fa.mask else "", q_scale=q.dtype in (DType.F16, DType.BF16, DType.F32), max_bq=fa.bq, max_bk=fa.bk, esize=q.dtype.size,
        mask_esize=mask.dtype.size if mask else 0, cmp_align=256 // (mask.dtype.size if mask else 4), fractal=FRACTAL, step_k=STEP_K, depth_l1=DEPTH_L1,
        db_l0ab=DB_L0AB, db_l0c=DB_L0C, l0a=t.l0a_bytes, l0b=t.l0b_bytes, l0c=t.l0c_bytes, l1=t.l1_bytes,
        ub_budget=t.ub_budget, mix_ratio=MIX_RATIO, sys_workspace=SYS_WORKSPACE, align=WORKSPACE_ALIGN)


def project_manifest(kernel: ir.Kernel, ctx: PassContext, view: FlashView) -> dict:
    fa = kernel.body[0]
    return manifest(kernel, ctx, view, "MIX_AIC_1_2", None, "query blocks", (),
                    flash={"max_query_rows": fa.bq, "max_keys": fa.bk,
                           "mask": (fa.mask.tensor or "band (positions)") if fa.mask else None,
                           "fused_workspace_tensors": sorted(p.name for p in kernel.workspaces)})
