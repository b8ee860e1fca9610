"""The single-pass plane statistics' arithmetic (lowering/plane_merge.py): chunks into rows, rows into a core's slot
partial, cores in core order, each by Chan et al.'s pairwise merge, against float64 two-pass statistics; the error
bound at a large mean (where f32 sum / sum-of-squares loses every digit); planted merge bugs fail."""

from __future__ import annotations

import numpy as np
import pytest

from lowering import plane_merge as pm

PLANE, CHUNK, CORES, ROWS_PER_CORE = 4099, 1000, 4, 3  # 12 planes of a slot on 4 cores, 5 chunks per plane
#: docs/design.md's bound for the row form, restated for planes: relative error of M2 of order (ulp(mean)/sigma)^2
#: (2.4e-5 at mean 1e4, sigma 0.1); asked: 1e-4.
TOL = 1e-4


def _slot(kind: str, seed: int = 35) -> list[list[np.ndarray]]:
    g = np.random.default_rng(seed)
    rows = []
    for i in range(CORES * ROWS_PER_CORE):
        if kind == "large mean":
            rows.append(1e4 + 0.1 * g.standard_normal(PLANE))
        elif kind == "trend":  # plane means 4,000 apart: the between-rows and between-cores terms dominate M2
            rows.append(4000.0 * i + g.standard_normal(PLANE))
        else:
            rows.append(g.standard_normal(PLANE))
    rows = [r.astype(np.float32) for r in rows]
    return [rows[c * ROWS_PER_CORE:(c + 1) * ROWS_PER_CORE] for c in range(CORES)]


def _exact(cores) -> tuple[float, float]:
    x = np.concatenate([r.astype(np.float64) for rows in cores for r in rows])
    return x.mean(), float(((x - x.mean()) ** 2).sum())


def _rel(a, b) -> float:
    return abs(float(a) - b) / abs(b)


@pytest.mark.parametrize("kind", ["large mean", "trend", "normal"])
def test_slot_moments_within_the_bound(kind):
    cores = _slot(kind)
    m = pm.slot(cores, CHUNK)
    mean, m2 = _exact(cores)
    assert m.n == CORES * ROWS_PER_CORE * PLANE
    assert abs(float(m.mean) - mean) <= np.spacing(np.float32(abs(mean) + 1.0))
    assert _rel(m.m2, m2) < TOL
    s, q = pm.written(m)
    assert q == m.m2 and _rel(s, mean * m.n) < 1e-6


def test_sum_of_squares_would_lose_the_large_mean_plane():
    """The data is adversarial: f32 sum / sum-of-squares (the form not used) is far outside the bound."""
    cores = _slot("large mean")
    x = np.concatenate([r for rows in cores for r in rows])
    s1, s2 = np.float32(0), np.float32(0)
    for c in range(0, x.size, CHUNK):
        s1 += x[c:c + CHUNK].sum(dtype=np.float32)
        s2 += (x[c:c + CHUNK] * x[c:c + CHUNK]).sum(dtype=np.float32)
    naive = float(s2 - s1 * s1 / np.float32(x.size))
    assert _rel(naive, _exact(cores)[1]) > 0.5


def test_squares_about_another_centre():
    """q = M2 + n (mean - c)^2 is the written sum((v - c)^2) when c is not the mean."""
    cores = _slot("normal")
    x = np.concatenate([r.astype(np.float64) for rows in cores for r in rows])
    c = np.float32(0.25)
    _, q = pm.written(pm.slot(cores, CHUNK), c)
    assert _rel(q, float(((x - float(c)) ** 2).sum())) < TOL


@pytest.mark.parametrize("bug", [
    {"between_cores": False},  # the cores' partials added without the between-cores term
    {"count": lambda n: n - PLANE},  # a core's count one plane short
    {"count": lambda n: n / PLANE},  # a count of planes, not elements
])
def test_planted_merge_bugs_fail(bug):
    cores = _slot("trend")
    m = pm.slot(cores, CHUNK, **bug)
    mean, m2 = _exact(cores)
    assert _rel(m.m2, m2) > TOL or abs(float(m.mean) - mean) > 1.0


def test_one_core_one_chunk_is_the_two_pass_form():
    """A plane in one chunk is its own shift: M2 is exactly the f32 two-pass sum of squared deviations."""
    v = _slot("large mean")[0][0]
    m = pm.row(v, v.size)
    k = np.float32(v.sum(dtype=np.float32) / np.float32(v.size))
    d = (v - k).astype(np.float32)
    s1 = d.sum(dtype=np.float32)
    assert m.m2 == np.float32((d * d).sum(dtype=np.float32) - np.float32(s1 * s1) / np.float32(v.size))
