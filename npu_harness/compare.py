"""Compare kernel outputs with the PyTorch reference.

Tolerances (atol = rtol, `torch.allclose` semantics): f32 1e-4 (KernelBench / MultiKernelBench
since commit 0555903), f16 1e-2 and bf16 2e-2 (KernelBench uses 1e-2 for half precision; bf16 has
3 fewer mantissa bits). NaN must match NaN. numpy's `isclose` is the same test
(|got - ref| <= atol + rtol * |ref|, equal infinities close).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .arrays import HostArray, as_host

TOLERANCE = {"f32": 1e-4, "f16": 1e-2, "bf16": 2e-2, "i32": 0.0, "i64": 0.0, "i16": 0.0, "i8": 0.0, "u8": 0.0}


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
    #: set when the comparison is against another reference than PyTorch's result (wide_reference.py): why
    against: str | None = None

    def describe(self) -> str:
        status = "ok" if self.ok else "MISMATCH"
        weak = f"; weak: {self.weak}" if self.weak else ""
        against = f"; {self.against}" if self.against else ""
        return (f"{self.name}: {status} (max |err| {self.max_abs_err:.3g}, {self.mismatches}/{self.numel} outside "
                f"atol=rtol={self.tol:g}{weak}{against})")


def weakness(ref, tol: float = 0.0) -> str | None:
    """Why a reference makes a comparison vacuous: no finite value, all zeros, one value everywhere, or all within
    tolerance of 0 (a kernel writing zeros would pass, e.g. a running product that underflowed). Reads the
    reference CHUNK elements at a time."""
    r = as_host(ref) if not isinstance(ref, np.ndarray) else HostArray(ref, "float64")
    n = r.numel()
    if n == 0:
        return "reference is empty"
    # Quick answer: two different finite values, one of them beyond the tolerance, rule out every case.
    head = _exact(r, 0, min(n, 4096))
    head = head[np.isfinite(head)]
    if head.size and np.any(np.abs(head) > np.float64(tol)) and np.any(head != head[0]):
        return None
    finite = zero = near_zero = same = 0
    first = None
    for lo in range(0, n, CHUNK):
        c = _exact(r, lo, min(n, lo + CHUNK))
        fin = np.isfinite(c)
        finite += int(np.count_nonzero(fin))
        if finite < lo + c.size and finite:  # some values finite, some not: not degenerate
            return None
        zero += int(c.size - np.count_nonzero(c))
        near_zero += int(np.count_nonzero(np.abs(c) <= np.float64(tol)))  # compared in float64
        first = c[0] if first is None else first
        same += int(np.count_nonzero(c == first))
    if finite == 0:
        return "reference is all NaN/inf"
    if finite < n:
        return None
    if zero == n:
        return "reference is all zeros"
    if n > 1 and same == n:
        return f"reference is one value ({first:g})"
    if near_zero == n:
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

    if kernel.kind is ir.KernelKind.LAUNCHES:  # a kernel of several launches: as its cube launches
        return next((t for la in kernel.body if (t := cube_tolerance(la.kernel, dtype)) is not None), None)
    cube = ir.cube_loop(kernel) is not None or kernel.kind in (ir.KernelKind.CHAIN, ir.KernelKind.FLASH)
    return CUBE_F32_TOLERANCE if dtype == "f32" and cube else None


#: elements compared at a time: large outputs are widened to float64 chunk by chunk, never whole (an
#: 8 GB float64 copy of a 1 G-element output does not fit)
CHUNK = 1 << 22


def _widen(a: HostArray, lo: int, hi: int) -> np.ndarray:
    """Elements [lo, hi) of the flattened array, widened exactly to float64."""
    return HostArray(a.data.reshape(-1)[lo:hi], a.dtype).to_float64()


def _exact(a: HostArray, lo: int, hi: int) -> np.ndarray:
    """Elements [lo, hi) of the flattened array in a numpy type that holds them exactly: the stored array
    itself (no copy), bfloat16 widened."""
    return _widen(a, lo, hi) if a.dtype == "bfloat16" else a.data.reshape(-1)[lo:hi]


def _compare_chunk(g: np.ndarray, r: np.ndarray, tol: float) -> tuple[int, float]:
    """(mismatches, max |error|) of one chunk: the test of torch.isclose (NaN == NaN, equal infinities close)."""
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
            return 0, float(diff.max()) if diff.size else 0.0
        # infinities of the same sign and NaN against NaN are close (their difference is NaN)
        close |= g == r
        close |= np.isnan(g) & np.isnan(r)
    diff = np.where(np.isnan(diff), np.where(close, 0.0, np.inf), diff)
    return int(close.size - np.count_nonzero(close)), float(diff.max()) if diff.size else 0.0


def compare(name: str, got, ref, dtype: str, tol: float | None = None) -> Comparison:
    """`got` vs `ref` (HostArray or torch tensors), widened exactly to float64 (numpy) CHUNK elements at a time."""
    tol = TOLERANCE[dtype] if tol is None else tol
    g, r = as_host(got), as_host(ref)
    n = r.numel()
    if g.numel() != n:
        return Comparison(name, False, float("inf"), n, n, tol)
    bad, max_err = 0, 0.0
    same_type = g.dtype == r.dtype and g.data.dtype == r.data.dtype
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)
        if same_type and np.array_equal(g.data.reshape(-1)[lo:hi], r.data.reshape(-1)[lo:hi]):
            continue  # every element equal (NaN never is): no error, without widening
        b, m = _compare_chunk(_widen(g, lo, hi), _widen(r, lo, hi), tol)
        bad += b
        max_err = max(max_err, m)
    return Comparison(name, bad == 0, max_err, bad, n, tol, weakness(r, tol) if bad == 0 else None)
