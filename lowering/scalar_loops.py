"""Ops with no AscendC vector instruction, lowered to loops on the scalar unit over UB.

Scans (cumsum / cumprod along a row) and products per row: the API subset has no prefix-sum,
windowed or product-reduce instruction (ascendc.md 4.2, 4.3), and vector instructions start on
32-byte aligned UB addresses (4.5), so a shifted-by-one-element vector add is not expressible.
Each row is walked once with `LocalTensor::GetValue` / `SetValue`; every access is counted by the
emulator (`ub_get` / `ub_set`) and charged by the cost model to the scalar pipe S
(npu_harness/cost/targets/*.toml, `[scalar] ub_access_cycles`). Half rows accumulate in f32.

Pseudo-instructions (VecOp.api) produced by select_instructions and expanded here by the emitter:
  ScanSum / ScanProd (attrs reverse, exclusive)  -- rows x D -> rows x D
  ReduceProd                                     -- rows x D -> one value per row
  MaxPool / AvgPool (srcs: plane, kernel, stride, padding) -- see lowering/emit_window.py
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.ops import POOLS, scan_parts

SCAN_APIS = {"sum": "ScanSum", "prod": "ScanProd"}
POOL_APIS = {"max_pool": "MaxPool", "avg_pool": "AvgPool"}
SCALAR_LOOP_APIS = frozenset({*SCAN_APIS.values(), "ReduceProd", *POOL_APIS.values()})
SCALAR_LOOP_OPS = frozenset({op for op in ("reduce_prod", *POOLS)} | {
    f"scan_{k}{r}{x}" for k in SCAN_APIS for r in ("", "_rev") for x in ("", "_excl")})

#: Bracket a scalar loop: the scalar unit reads what MTE2 / the vector unit wrote to UB, and the
#: vector unit / MTE3 then read what it wrote (ascendc.md 4.4).
SYNC_TO_SCALAR = ["SetFlag<HardEvent::V_S>(EVENT_ID0);  // scalar loop: wait for the vector pipe",
                  "WaitFlag<HardEvent::V_S>(EVENT_ID0);"]
SYNC_FROM_SCALAR = ["SetFlag<HardEvent::S_V>(EVENT_ID0);  // scalar loop done: release the vector pipe",
                    "WaitFlag<HardEvent::S_V>(EVENT_ID0);"]


def scalar_loop_op(dst: str, e: ir.Op, args: list) -> ir.VecOp:
    """The pseudo-instruction for a scalar-loop op (args: buffer names or scalar operands)."""
    if e.op.startswith("scan_"):
        _, reverse, exclusive = scan_parts(e.op)
        kind = e.op.split("_")[1]
        return ir.VecOp(SCAN_APIS[kind], dst, (args[0],),
                        (("reverse", str(reverse).lower()), ("exclusive", str(exclusive).lower())), e.span)
    if e.op == "reduce_prod":
        return ir.VecOp("ReduceProd", dst, (args[0],), (), e.span)
    return ir.VecOp(POOL_APIS[e.op], dst, tuple(args), (), e.span)


def scan_lines(s: ir.VecOp, ctype: str) -> list[str]:
    """Inclusive / exclusive, forward / reverse running sum or product of each of `count` rows."""
    attrs = dict(s.attrs)
    (src,) = s.srcs
    prod = s.api == "ScanProd"
    index = "i * Dp_ + (D_ - 1 - j)" if attrs["reverse"] == "true" else "i * Dp_ + j"
    # Sums are compensated (Kahan): a plain f32 running sum over thousands of elements drifts by more than
    # the f32 tolerance where the prefix sum crosses zero; the extra adds are scalar ALU work, no UB access.
    step = ["acc *= v;"] if prod else ["const float y = v - comp;", "const float t = acc + y;",
                                       "comp = (t - acc) - y;", "acc = t;"]
    write = [f"{s.dst}.SetValue(k, static_cast<{ctype}>(acc));"]
    body = write + step if attrs["exclusive"] == "true" else step + write  # exclusive: the value before x[k]
    init = "float acc = 1.0f;" if prod else "float acc = 0.0f, comp = 0.0f;"
    return [*SYNC_TO_SCALAR,
            "for (uint32_t i = 0; i < count; ++i) {  // sequential along the row: one scalar pass per row",
            f"    {init}  // f32 accumulator (half rows too)",
            "    for (uint32_t j = 0; j < D_; ++j) {",
            f"        const uint32_t k = {index};",
            f"        const float v = static_cast<float>({src}.GetValue(k));",
            *(f"        {line}" for line in body),
            "    }",
            "}",
            *SYNC_FROM_SCALAR]


def reduce_prod_lines(s: ir.VecOp, ctype: str) -> list[str]:
    """Product of each row (no ReduceProd in the API subset), one value per row into a COL buffer."""
    (src,) = s.srcs
    return [*SYNC_TO_SCALAR,
            "for (uint32_t i = 0; i < count; ++i) {  // no ReduceProd instruction: one scalar pass per row",
            "    float acc = 1.0f;  // f32 accumulator (half rows too)",
            "    for (uint32_t j = 0; j < D_; ++j) {",
            f"        acc *= static_cast<float>({src}.GetValue(i * Dp_ + j));",
            "    }",
            f"    {s.dst}.SetValue(i, static_cast<{ctype}>(acc));",
            "}",
            *SYNC_FROM_SCALAR]
