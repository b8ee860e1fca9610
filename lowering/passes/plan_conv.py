"""CONV kernels: the largest cube tiles of the implicit GEMM, checked against L1 / L0A / L0B / L0C.

Goals: per output image the convolution is the GEMM Y[K, OH*OW] = W[K, C*KH*KW] x Xcol[C*KH*KW, OH*OW]
(the weight is the left operand, so the result leaves L0C in NCHW order); a tile is at most `max_m` output
channels x `max_n` GEMM columns (whole output rows, each padded to 16 pixels) and one step of the
reduction is at most `max_k` (input channels x kernel taps, padded to 16). The host tiling
(conv_tiling.h.jinja) picks the actual sizes from the runtime shapes within these limits. Coupled
targets (310P) have no Fixpipe (L0C -> GM) and are rejected. Non-goals: the structural limits of the
emitter (select_kind.py).
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.diagnostics import DiagnosticSink
from ascend_dsl.diagnostics import ErrorCode as E

from ..context import PassContext
from .plan_cube import COUPLED_FAMILIES, FRACTAL

MAX_M, MAX_N, MAX_K = 128, 256, 128  # out channels, GEMM columns (pixels), GEMM depth per tile


def l1_bytes(m: int, n: int, k: int, esize: int) -> int:
    """The weight tile [m, k] and the gathered image-to-column tile [k, n] in L1 (one of each)."""
    return (m * k + k * n) * esize


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    loop = ir.conv_loop(kernel)
    if loop is None:
        return kernel
    t, sink = ctx.target, DiagnosticSink()
    if t.soc_family in COUPLED_FAMILIES:
        sink.error(E.MIX_UNSUPPORTED, f"{t.name} has no Fixpipe (L0C -> GM): its cube results leave through the "
                   "vector unit (coupled mode), which this compiler does not emit for convolutions", loop.span,
                   "lower convolution kernels for --target ascend910b1 (or another 910B variant)")
        sink.raise_if_any()
    esize = kernel.param(loop.conv.x).dtype.size
    m, n, k = MAX_M, MAX_N, MAX_K
    checks = [(E.L0A_CAPACITY, "L0A", m * k * esize, t.l0a_bytes), (E.L0B_CAPACITY, "L0B", k * n * esize, t.l0b_bytes),
              (E.L0C_CAPACITY, "L0C", m * n * 4, t.l0c_bytes), (E.L1_CAPACITY, "L1", l1_bytes(m, n, k, esize), t.l1_bytes)]
    for code, mem, need, have in checks:
        if need > have:
            sink.error(code, f"a {m} x {n} x {k} convolution tile needs {need} B of {mem}; {t.name} has {have} B",
                       loop.conv.span)
    assert m % FRACTAL == 0 and n % FRACTAL == 0 and k % FRACTAL == 0
    sink.raise_if_any()
    plan = ir.ConvPlan(m, n, k)
    return replace(kernel, body=tuple(replace(s, plan=plan) if s is loop else s for s in kernel.body))
