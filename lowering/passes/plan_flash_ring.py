"""Flash attention: the AIC-driven ring or the Matmul-API form (a FLASH kernel's `ir.FlashRing`).

Goals: decide, from what the compiler knows (dtypes, the mask's form, the operands' shapes, the target's buffers),
whether the FLASH kernel is emitted as CATLASS FAI's ring (emit/flash_ring.py, ascendc_next.md §2.2 / §2.4): the AIC
drives the low-level cube API, computes S = Q K^T of both AIVs' query blocks into GM slots, hands them over with
cross-core flags, reads P back and adds P V into the AIVs' O slots (atomic Fixpipe); K and V loaded once per key block
for both AIVs; tasks are one head's pairs of query blocks (P-1-i, i), balanced for the causal mask. The ring is
written for 128-row query blocks and 128-key blocks of f16 operands with head dims that are multiples of 16 up to 128:
the shape part of that is known only at run time, so a ring kernel carries the Matmul-API form too and its host
tiling takes that form at the shapes the ring does not (emit/flash_ring.py); the rest is decided here.
Non-goals: bf16 (the ring's vector code is written for f16), a mask tensor, a band other than the causal one (or one
whose fill does not make the masked keys weigh exactly 0), grouped/shared key-value heads (a K/V batch that is not
the queries'): those keep the Matmul-API form, and the plan says why.
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from ..context import PassContext

#: Query rows per AIV task and keys per block of the ring (emit/flash_ring.py's templates are written for these).
RING_BQ = 128
RING_BK = 128
MAX_HEAD_DIM = 128
#: A fill at or below this makes the masked keys weigh exactly 0 (emit/flash.py's SKIP_FILL: the same bound).
SKIP_FILL = -1.0e30
#: Bytes the ring's buffers take at the largest head dim (its templates): AIC L1 (Q pair, two pairs of K and of V
#: blocks, two pairs of P blocks), L0A / L0B (two halves of 128 x 128 f16), L0C (two 128 x 128 f32), AIV UB (two S
#: blocks, P, the row vectors and the mask's scratch).
L1_BYTES = 2 * RING_BQ * MAX_HEAD_DIM * 2 + 2 * (4 * RING_BK * MAX_HEAD_DIM * 2) + 4 * RING_BQ * RING_BK * 2
L0AB_BYTES = 2 * RING_BQ * RING_BK * 2
L0C_BYTES = 2 * RING_BQ * RING_BK * 4
UB_BYTES = 2 * RING_BQ * RING_BK * 4 + RING_BQ * RING_BK * 2 + 4 * RING_BQ * 4 + RING_BQ * 32 + 32 + (RING_BK + RING_BQ) * 2 \
    + RING_BQ * RING_BK // 8


def plan(fa: ir.FlashAttention, kernel: ir.Kernel, ctx: PassContext) -> ir.FlashAttention:
    """`fa` with its ring decision."""
    why = _miss(fa, kernel, ctx)
    if why:
        return replace(fa, ring=ir.FlashRing(False, why))
    dims = f"{fa.dk} is a multiple" if fa.dk == fa.dv else f"{fa.dk} and {fa.dv} are multiples"
    return replace(fa, ring=ir.FlashRing(True, (
        f"the AIC drives the cube, {RING_BQ}-row query blocks in pairs per AI Core, {RING_BK}-key blocks; at run time "
        f"when {dims} of 16 up to {MAX_HEAD_DIM}, else the Matmul-API form")))


def _miss(fa: ir.FlashAttention, kernel: ir.Kernel, ctx: PassContext) -> str:
    """Why the ring does not take `fa` ("" when it does)."""
    if not ctx.allow_flash_ring:
        return "turned off (PassContext.allow_flash_ring)"
    t = {p.name: p for p in kernel.tensors}
    if t[fa.q].dtype is not DType.F16:
        return f"the operands are {t[fa.q].dtype.name.lower()}: the ring is written for f16"
    if fa.mask is not None:
        m = fa.mask
        if m.tensor is not None:
            return "a mask tensor: the ring masks only the causal band"
        if m.lo or m.hi != (ir.FlashBound(0),):
            return "a band other than the causal one (key <= query)"
        if m.fill > SKIP_FILL:
            return f"the band's fill {m.fill} does not make the masked keys weigh 0 (the ring skips them)"
    for name, rows, cols in ((fa.q, fa.m, fa.dk), (fa.k, fa.n, fa.dk), (fa.v, fa.n, fa.dv)):
        if tuple(t[name].shape) != (*fa.batch, rows, cols):
            return f"{name} is not [{', '.join((*fa.batch, rows, cols))}] (grouped or shared heads: not in the ring)"
    tg = ctx.target
    if (tg.l1_bytes < L1_BYTES or tg.l0a_bytes < L0AB_BYTES or tg.l0b_bytes < L0AB_BYTES or tg.l0c_bytes < L0C_BYTES
            or tg.ub_budget < UB_BYTES):
        return f"{tg.name}'s L1 / L0 / UB are smaller than the ring's buffers"
    return ""
