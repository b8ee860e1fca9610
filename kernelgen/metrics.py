"""Metrics: unbiased pass@k (HumanEval / KernelBench) and fast_p (KernelBench)."""

from __future__ import annotations

import math


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """1 - C(n-c, k) / C(n, k), computed stably as 1 - prod(1 - k/i, i = n-c+1..n).
    None when k > n (not estimable from n samples)."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if k > n:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def mean_pass_at_k(counts: list[tuple[int, int]], k: int) -> float | None:
    """Mean of pass@k over tasks given (n, c) per task; None if some task has fewer than k samples."""
    vals = [pass_at_k(n, c, k) for n, c in counts]
    if not vals or any(v is None for v in vals):
        return None
    return sum(vals) / len(vals)  # type: ignore[arg-type]


def fast_p(speedups: list[float | None], p: float) -> float:
    """Fraction of tasks that are correct (speedup is not None) with speedup > p.
    A task with no correct sample contributes None."""
    if not speedups:
        return 0.0
    return sum(1 for s in speedups if s is not None and s > p) / len(speedups)
