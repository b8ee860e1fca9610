"""The scalar-unit loops of the ops with no AscendC vector instruction (lowering/scalar_loops.py says
why): running sums and products along each row, products per row. Every UB access is counted by the
emulator and charged to the scalar pipe by the cost model; half rows accumulate in f32.
"""

from __future__ import annotations

from ascend_dsl import ir

#: Bracket a scalar loop: the scalar unit reads what MTE2 / the vector unit wrote to UB, and the
#: vector unit / MTE3 then read what it wrote (ascendc.md 4.4).
SYNC_TO_SCALAR = ["SetFlag<HardEvent::V_S>(EVENT_ID0);  // scalar loop: wait for the vector pipe",
                  "WaitFlag<HardEvent::V_S>(EVENT_ID0);"]
SYNC_FROM_SCALAR = ["SetFlag<HardEvent::S_V>(EVENT_ID0);  // scalar loop done: release the vector pipe",
                    "WaitFlag<HardEvent::S_V>(EVENT_ID0);"]


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
