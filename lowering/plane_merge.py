"""The arithmetic of single-pass plane statistics (lowering/passes/plane_moments.py), modelled in f32.

A slot's statistics (a group of planes of group_norm, a channel's planes of batch_norm_train) are computed as the
kernel would compute them once the fold is lowered, in its order:

1. each plane (row) in chunks, as the row form does (lowering/passes/chunk_moments.py): the first chunk's shift K is
   its own mean, later chunks' the running mean; the vector unit reduces s1 = sum(v - K), s2 = sum((v - K)^2) and
   the scalar unit merges the chunk into the row's (count, mean, M2);
2. a core merges its rows of the slot, in row order, into the core's (count, mean, M2) for that slot;
3. the cross-core combine merges the cores' partials in core order 0, 1, ... (every core the same order:
   deterministic, the same totals on every core).

Every merge is Chan, Golub and LeVeque's pairwise update (Stanford STAN-CS-79-773, 1979; The American Statistician
37(3):242-247, 1983): n = na + nb, d = mean_b - mean_a, mean = mean_a + d nb / n, M2 = M2a + M2b + d^2 na nb / n.
After it `s = mean * n` (the slot total the written `s[r]` holds) and the written `sum((v - c)^2)` is
M2 + n (mean - c)^2 for the centre c (exactly M2 when c is the mean): a sum of non-negative terms.

Error bound (restating docs/design.md's row form for planes): a chunk's merge adds O(u) relative to the merged M2
whatever the mean (its d = s1 / nb is taken about the running mean, not as a difference of two large means). A row
or core merge forms d from two f32 means, each off by up to ulp(mean) / 2; the between term's error is then at most
about 2 |d| ulp(mean) na nb / n + ulp(mean)^2 na nb / n, relative to M2 = n sigma^2 of order
(ulp(mean) / sigma)^2 + ulp(mean) |d| / sigma^2 per merge: the same order as the two-pass form's own second-order
term (deviations from an f32 mean), so the bound stays that of the row form. Sum / sum-of-squares would lose
every digit at mean 1e4, sigma 0.1 (tests/test_plane_merge.py).

Reductions inside a chunk are numpy's f32 sums here, not the kernel's ReduceSum order: this is a model of the
merge order and its bound; the interpreter's mirror of the lowered fold must follow the kernel's instructions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

F32 = np.float32


@dataclass(frozen=True)
class Moments:
    """(count, mean, M2) of a set of values, in f32."""

    n: np.float32
    mean: np.float32
    m2: np.float32


EMPTY = Moments(F32(0), F32(0), F32(0))


def merge(a: Moments, b: Moments, *, between: bool = True) -> Moments:
    """Chan et al.'s pairwise update; `between=False` drops the between-sets term (a planted bug for tests)."""
    if b.n == 0:
        return a
    if a.n == 0:
        return b
    n = F32(a.n + b.n)
    d = F32(b.mean - a.mean)
    mean = F32(a.mean + F32(d * F32(b.n / n)))
    m2 = F32(a.m2 + b.m2)
    if between:
        m2 = F32(m2 + F32(F32(d * d) * F32(F32(a.n * b.n) / n)))
    return Moments(n, mean, m2)


def chunk(v: np.ndarray, shift: np.float32) -> Moments:
    """A chunk's moments from its shifted sums: mean = K + s1 / nb, M2b = s2 - s1^2 / nb."""
    nb = F32(v.size)
    dev = (v - shift).astype(F32)
    s1 = F32(dev.sum(dtype=F32))
    s2 = F32((dev * dev).sum(dtype=F32))
    return Moments(nb, F32(shift + F32(s1 / nb)), F32(s2 - F32(F32(s1 * s1) / nb)))


def row(v: np.ndarray, chunk_len: int) -> Moments:
    """A plane (row) in chunks of `chunk_len`: the first chunk shifted by its own mean, then by the running mean."""
    v = np.asarray(v, dtype=F32).ravel()
    m = EMPTY
    for lo in range(0, v.size, chunk_len):
        c = v[lo:lo + chunk_len]
        shift = F32(c.sum(dtype=F32) / F32(c.size)) if m.n == 0 else m.mean
        m = merge(m, chunk(c, shift))
    return m


def slot(cores: Sequence[Sequence[np.ndarray]], chunk_len: int, *, between_cores: bool = True,
         count=None) -> Moments:
    """A slot's moments: each core merges its rows in row order, then the cores merge in core order. `count`
    (tests: a planted wrong count) replaces each core partial's count when given."""
    total = EMPTY
    for rows in cores:
        part = EMPTY
        for r in rows:
            part = merge(part, row(r, chunk_len))
        if count is not None and part.n:
            part = Moments(F32(count(part.n)), part.mean, part.m2)
        total = merge(total, part, between=between_cores)
    return total


def written(m: Moments, centre: np.float32 | None = None) -> tuple[np.float32, np.float32]:
    """(s, q): the slot total `s[r]` holds and the written sum of squared deviations from `centre` (the mean
    when None): M2 + n (mean - c)^2."""
    s = F32(m.mean * m.n)
    if centre is None:
        return s, m.m2
    e = F32(m.mean - F32(centre))
    return s, F32(m.m2 + F32(m.n * F32(e * e)))
