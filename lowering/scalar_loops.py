"""Ops with no AscendC vector instruction, lowered to loops on the scalar unit over UB.

Pooling windows (products run on the vector unit since issue 21: a pairwise Mul tree, snippets row_prod and
chunk_fold; ReduceProd stays a pseudo-instruction): the API subset has no windowed or product-reduce instruction
(ascendc.md 4.2, 4.3), and vector instructions start on 32-byte aligned UB addresses (4.5), so a
shifted-by-one-element vector op is not expressible. (Scans run on the vector unit:
lowering/vector_scan.py.) Each row is walked once with `LocalTensor::GetValue` / `SetValue`; every
access is counted by the emulator (`ub_get` / `ub_set`) and charged by the cost model to the scalar
pipe S (npu_harness/cost/targets/*.toml, `[scalar] ub_access_cycles`). Half rows accumulate in f32.

Pseudo-instructions (VecOp.api) produced by select_instructions and expanded by the emitter
(lowering/emit/shared.py, lowering/emit/window.py):
  ReduceProd                                     -- rows x D -> one value per row (vector unit: row_prod)
  MaxPool / AvgPool (srcs: plane, kernel, stride, padding) -- see lowering/emit/window.py
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.ops import POOLS

POOL_APIS = {"max_pool": "MaxPool", "avg_pool": "AvgPool"}
SCALAR_LOOP_APIS = frozenset({"ReduceProd", *POOL_APIS.values()})
SCALAR_LOOP_OPS = frozenset({"reduce_prod", *POOLS})


def scalar_loop_op(dst: str, e: ir.Op, args: list) -> ir.VecOp:
    """The pseudo-instruction for a scalar-loop op (args: buffer names or scalar operands)."""
    if e.op == "reduce_prod":
        return ir.VecOp("ReduceProd", dst, (args[0],), (), e.span)
    return ir.VecOp(POOL_APIS[e.op], dst, tuple(args), (), e.span)


