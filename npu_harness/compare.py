"""Compare kernel outputs with the PyTorch reference.

Tolerances (atol = rtol, `torch.allclose` semantics): f32 1e-4 (KernelBench / MultiKernelBench
since commit 0555903), f16 1e-2 and bf16 2e-2 (KernelBench uses 1e-2 for half precision; bf16 has
3 fewer mantissa bits). NaN must match NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

TOLERANCE = {"f32": 1e-4, "f16": 1e-2, "bf16": 2e-2, "i32": 0.0, "i16": 0.0, "i8": 0.0, "u8": 0.0}


@dataclass(frozen=True)
class Comparison:
    name: str
    ok: bool
    max_abs_err: float
    mismatches: int
    numel: int
    tol: float

    def describe(self) -> str:
        status = "ok" if self.ok else "MISMATCH"
        return (f"{self.name}: {status} (max |err| {self.max_abs_err:.3g}, {self.mismatches}/{self.numel} outside "
                f"atol=rtol={self.tol:g})")


#: f32 outputs of MIX kernels (matmul + epilogue). The emulated cube sums K exact f16/bf16 products in
#: fp32, in K order; the PyTorch reference sums the same products in fp32 in its own blocked order.
#: Both are correct to fp32 rounding, but they differ by up to ~sqrt(K) x 2^-24 x the sum of |a_k b_k|,
#: which for K in the low thousands and unit-scale inputs exceeds 1e-4 near results that cancel to 0.
#: 1e-3 (atol = rtol) bounds that for the gallery's K <= 2048; f16/bf16 outputs keep their own tolerance.
CUBE_F32_TOLERANCE = 1e-3


def cube_tolerance(kernel, dtype: str) -> float | None:
    """The tolerance for an output of `kernel` when it differs from the dtype's default (MIX kernels, f32)."""
    from ascend_dsl import ir

    return CUBE_F32_TOLERANCE if dtype == "f32" and ir.cube_loop(kernel) is not None else None


def compare(name: str, got, ref, dtype: str, tol: float | None = None) -> Comparison:
    import torch

    tol = TOLERANCE[dtype] if tol is None else tol
    g = got.reshape(-1).to(torch.float64)
    r = ref.reshape(-1).to(torch.float64)
    if g.numel() != r.numel():
        return Comparison(name, False, float("inf"), r.numel(), r.numel(), tol)
    close = torch.isclose(g, r, atol=tol, rtol=tol, equal_nan=True)
    diff = (g - r).abs()
    diff = torch.where(torch.isnan(diff), torch.where(close, 0.0, float("inf")), diff)
    max_err = float(diff.max()) if diff.numel() else 0.0
    bad = int((~close).sum())
    return Comparison(name, bad == 0, max_err, bad, r.numel(), tol)
