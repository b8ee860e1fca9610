"""Kind FLASH, ring form (plan_flash_ring took it): flash attention driven by the AIC (flash_ring_*.jinja).

CATLASS FAI's ring (ascendc_next.md §2.2 / §2.4), the emitted form of session 34's hand kernel
(tests/sim/kernels/flash_ring.cpp). An AI Core's task is one head's pair of 128-row query blocks, AIV 0 owning the
first, AIV 1 the second; a unit is the pair P-1-i and then the pair i of one head (their causal key walks add up to the
same length), units dealt to the cores in rounds rotated by one core per round. Per key block j of 128 keys the AIC
loads K_j into L1 once for both AIVs, computes S_h = Q_h K_j^T (Q in L1 for the whole task) and Fixpipes it into the
AIV's S slot j % 3, sets flag S; two steps behind it waits for flag P, loads V_{j-2} and both P blocks and adds
P_h V_{j-2} into the AIV's O slot (atomic Fixpipe after the first), sets flag O. Each AIV: the scaled Q block into its
Q slot (flag Q), then per step wait S, the causal and tail-key masks, the online softmax (running max m, sum l in UB;
m moves only when a row sum of e^(X - m) exceeds ~e^8: then l and the O slot are rescaled), P (f16, NZ) into its P
slot, set P; finally O / l -> o. A slot j % 3 is written again only after the AIC's flag O of step j - 3.

The ring's shapes are checked at run time (head dims multiples of 16 up to 128): at the others the host tiling takes
the Matmul-API form (emit/flash.py's templates, rendered into the same project with `ring_api`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ascend_dsl import ir

from ..context import PassContext
from ..passes.plan_flash_ring import MAX_HEAD_DIM, RING_BK, RING_BQ
from . import flash
from .shared import loc


@dataclass(frozen=True, kw_only=True)
class FlashRingView(flash.FlashView):
    ring_scale: str  # the scale on the device: a literal or the tiling's scalar field
    batch_dims: tuple[str, ...]  # the batch's shape symbols (their product: the heads)
    causal: bool
    ring_bq: int
    ring_bk: int
    max_head_dim: int
    why: str


def build_view(kernel: ir.Kernel, ctx: PassContext) -> FlashRingView:
    fa = kernel.body[0]
    assert isinstance(fa, ir.FlashAttention) and fa.ring is not None and fa.ring.taken
    base = flash.build_view(kernel, ctx)
    values = {f.name: getattr(base, f.name) for f in fields(base)}
    values["ring_api"] = True
    scale = base.scale if isinstance(fa.scale, ir.Const) else f"tiling.{fa.scale.name}"
    return FlashRingView(**values, ring_scale=scale, batch_dims=fa.batch, causal=fa.mask is not None,
                         ring_bq=RING_BQ, ring_bk=RING_BK, max_head_dim=MAX_HEAD_DIM,
                         why=f"{loc(ctx, fa.span)}: {fa.ring.why}")


def project_manifest(kernel: ir.Kernel, ctx: PassContext, view: flash.FlashView) -> dict:
    out = flash.project_manifest(kernel, ctx, view)
    out["flash"]["ring"] = {"query_rows": RING_BQ, "keys": RING_BK, "max_head_dim": MAX_HEAD_DIM}
    return out
