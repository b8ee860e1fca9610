"""Epilogue bands: let the cube keep its largest base block when the epilogue's buffers cannot hold it in UB.

Goals: GetTensorC into a VECIN queue fetches a whole baseM x baseN block, so UB (192 KB on 910B) capped the
block at what the epilogue's double-buffered buffers hold: 128 x 64 for a gelu, where the cube wants 256 x 128
(half the GM -> L1 bytes per MAC). Instead the cube writes each block to the AIV's own fp32 workspace slot
(GetTensorC to GM with enSequentialWrite: the block at the slot's start, rows baseN apart; CANN documents this
route for exactly this case: "the size of the Unified Buffer limits the granularity of the Matmul", GetTensorC
atlasascendc_api_07_0542) and the epilogue runs on bands of `band_rows` rows of it with double-buffered queues,
the slot read back like any input tensor (emit/mix.py, mix_kernel.cpp.jinja). On A2 the AIC <-> AIV data crosses
GM (L2) either way (ascendc_next.md §2.1). Chosen when the double-buffered buffers cannot hold the whole block.
Non-goals: whole-row epilogues (their block is all N columns, bounded by L0C first), explicit base sizes (the
user's block, checked as before), chain stages (no workspace region of their own: the slots share the split-K
region, so bands need `PassContext.allow_split_k`).
"""

from __future__ import annotations

from ascend_dsl import ir

#: Bands are whole multiples of this many rows (the f16/bf16 fractal: the host's narrowed baseM stays a multiple).
BAND_STEP = 16
#: fp32 rows of a block left free beside a band: split-K (plan_split_k) adds its slices' partial rows there, and the
#: host only splits K when the epilogue leaves at least one row free.
SPLIT_K_RESERVE_ROWS = 16


def band_rows(buffers: tuple[ir.Buffer, ...], bm: int, bn: int, budget: int, ub_bytes) -> int:
    """Rows per band for a bm x bn block: 0 when the buffers hold the whole block (no bands needed) or not even
    BAND_STEP rows (the caller shrinks the block as before); else the most rows (a multiple of BAND_STEP, < bm)
    whose buffers fit `budget` at row pitch bn, less SPLIT_K_RESERVE_ROWS fp32 rows. `ub_bytes(buffers, rows, pitch)`: plan_cube's UB formula."""
    if ub_bytes(buffers, bm, bn) <= budget:
        return 0
    budget -= SPLIT_K_RESERVE_ROWS * bn * 4  # leave split-K room for partial rows (its host check wants one)
    rows = (bm - 1) // BAND_STEP * BAND_STEP
    while rows >= BAND_STEP and ub_bytes(buffers, rows, bn) > budget:
        rows -= BAND_STEP
    return rows if rows >= BAND_STEP else 0
