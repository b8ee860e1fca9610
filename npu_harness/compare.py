"""Compare kernel outputs with the PyTorch reference.

Tolerances (atol = rtol, `torch.allclose` semantics): f32 1e-4 (KernelBench / MultiKernelBench
since commit 0555903), f16 1e-2 and bf16 2e-2 (KernelBench uses 1e-2 for half precision; bf16 has
3 fewer mantissa bits). NaN must match NaN. numpy's `isclose` is the same test
(|got - ref| <= atol + rtol * |ref|, equal infinities close).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .arrays import as_host

TOLERANCE = {"f32": 1e-4, "f16": 1e-2, "bf16": 2e-2, "i32": 0.0, "i16": 0.0, "i8": 0.0, "u8": 0.0}


@dataclass(frozen=True)
class Comparison:
    name: str
    ok: bool
    max_abs_err: float
    mismatches: int
    numel: int
    tol: float

    #: why a passing comparison proves little (a degenerate reference), or None
    weak: str | None = None

    def describe(self) -> str:
        status = "ok" if self.ok else "MISMATCH"
        weak = f"; weak: {self.weak}" if self.weak else ""
        return (f"{self.name}: {status} (max |err| {self.max_abs_err:.3g}, {self.mismatches}/{self.numel} outside "
                f"atol=rtol={self.tol:g}{weak})")


def weakness(ref, tol: float = 0.0) -> str | None:
    """Why a reference makes a comparison vacuous: no finite value, all zeros, one value everywhere, or all within
    tolerance of 0 (a kernel writing zeros would pass, e.g. a running product that underflowed)."""
    r = (ref if isinstance(ref, np.ndarray) else as_host(ref).to_float64()).reshape(-1)
    if r.size == 0:
        return "reference is empty"
    finite = np.isfinite(r)
    if not finite.any():
        return "reference is all NaN/inf"
    if not finite.all():
        return None
    if not r.any():
        return "reference is all zeros"
    if r.size > 1 and (r == r[0]).all():
        return f"reference is one value ({r[0]:g})"
    near_zero = np.count_nonzero(np.abs(r) <= tol)
    if near_zero == r.size:
        return "reference is all within tolerance of 0 (an all-zero output passes)"
    return None


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
    """`got` vs `ref` (HostArray or torch tensors), both widened exactly to float64 (numpy)."""
    tol = TOLERANCE[dtype] if tol is None else tol
    g = as_host(got).to_float64().reshape(-1)
    r = as_host(ref).to_float64().reshape(-1)
    if g.size != r.size:
        return Comparison(name, False, float("inf"), r.size, r.size, tol)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.subtract(g, r)
        np.abs(diff, out=diff)
        bound = np.abs(r)
        bound *= tol
        bound += tol  # numpy.isclose: |g - r| <= atol + rtol * |r|
        close = diff <= bound
        close &= diff != np.inf  # torch.isclose: an infinite error is never within tolerance
        bad = int(close.size - np.count_nonzero(close))
        if bad == 0:
            return Comparison(name, True, float(diff.max()) if diff.size else 0.0, 0, int(r.size), tol,
                              weakness(r, tol))
        # infinities of the same sign and NaN against NaN are close (their difference is NaN)
        close |= g == r
        close |= np.isnan(g) & np.isnan(r)
    diff = np.where(np.isnan(diff), np.where(close, 0.0, np.inf), diff)
    max_err = float(diff.max()) if diff.size else 0.0
    bad = int(close.size - np.count_nonzero(close))
    return Comparison(name, bad == 0, max_err, bad, int(r.size), tol, weakness(r, tol) if bad == 0 else None)
