"""pass@k and fast_p against hand-computed values."""

from __future__ import annotations

import math

import pytest

from kernelgen.metrics import fast_p, mean_pass_at_k, pass_at_k


@pytest.mark.parametrize("n,c,k,expected", [
    (10, 0, 1, 0.0),
    (10, 10, 1, 1.0),
    (10, 3, 1, 0.3),                       # c/n
    (10, 3, 2, 1 - (7 * 6) / (10 * 9)),    # 1 - C(7,2)/C(10,2) = 1 - 21/45
    (5, 1, 5, 1.0),                        # n - c < k
    (20, 2, 10, 1 - math.comb(18, 10) / math.comb(20, 10)),
    (2, 1, 2, 1.0),
])
def test_pass_at_k_hand_computed(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_pass_at_k_stable_for_large_n():
    # C(1000, 500) overflows float; the product form does not
    assert pass_at_k(1000, 1, 500) == pytest.approx(0.5)
    assert pass_at_k(1000, 0, 500) == 0.0


def test_pass_at_k_undefined_and_invalid():
    assert pass_at_k(3, 1, 5) is None
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 0)


def test_mean_over_tasks():
    assert mean_pass_at_k([(2, 1), (2, 0)], 1) == pytest.approx(0.25)
    assert mean_pass_at_k([(2, 1), (1, 1)], 2) is None


def test_fast_p():
    assert fast_p([2.0, 0.5, None, 1.5], 1.0) == pytest.approx(0.5)
    assert fast_p([2.0, 0.5, None, 1.5], 0.0) == pytest.approx(0.75)  # fast_0 = correctness
    assert fast_p([], 1.0) == 0.0
