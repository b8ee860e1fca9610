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


def compare(name: str, got, ref, dtype: str) -> Comparison:
    import torch

    tol = TOLERANCE[dtype]
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
