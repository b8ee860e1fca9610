"""compare() works chunk by chunk: the same verdict, mismatch count and max error as one pass, for
mismatches, NaN and infinities falling in any chunk (large outputs are never widened whole)."""

from __future__ import annotations

import numpy as np

from npu_harness import compare as cmp
from npu_harness.arrays import HostArray


def _arrays(n: int) -> tuple[HostArray, HostArray]:
    rng = np.random.default_rng(3)
    ref = rng.standard_normal(n).astype(np.float32)
    got = ref.copy()
    got[5] += 1.0                         # chunk 0
    got[n // 2] = np.nan                  # a middle chunk: NaN against a number
    ref[n - 3] = got[n - 3] = np.nan      # NaN against NaN: close
    ref[n - 2] = got[n - 2] = np.inf      # equal infinities: close
    got[n - 1] = -np.inf                  # last chunk: infinite error
    return HostArray(got, "float32"), HostArray(ref, "float32")


def test_chunked_compare_matches_one_pass(monkeypatch):
    got, ref = _arrays(10_000)
    whole = cmp.compare("y", got, ref, "f32")
    monkeypatch.setattr(cmp, "CHUNK", 97)  # many chunks, the last one short
    chunked = cmp.compare("y", got, ref, "f32")
    assert not whole.ok and (whole.mismatches, whole.max_abs_err) == (chunked.mismatches, chunked.max_abs_err)
    assert chunked.mismatches == 3 and chunked.max_abs_err == float("inf")


def test_chunked_compare_bf16_and_clean(monkeypatch):
    monkeypatch.setattr(cmp, "CHUNK", 64)
    bits = (np.arange(1000, dtype=np.uint32) * 7 % 30000).astype(np.uint16)
    a = HostArray(bits.reshape(10, 100), "bfloat16")
    assert cmp.compare("y", a, HostArray(bits.copy().reshape(10, 100), "bfloat16"), "bf16").ok


def test_equal_chunks_skip_widening_but_keep_the_verdict(monkeypatch):
    # chunks whose elements all compare equal are passed without widening; NaN never compares equal, so a
    # chunk holding NaN (here NaN against NaN: close) and signed zeros still takes the full test
    monkeypatch.setattr(cmp, "CHUNK", 8)
    widened = []
    real = cmp._compare_chunk
    monkeypatch.setattr(cmp, "_compare_chunk", lambda g, r, tol: widened.append(g.size) or real(g, r, tol))
    ref = np.arange(32, dtype=np.float32)
    got = ref.copy()
    ref[9] = got[9] = np.nan
    got[17], ref[17] = -0.0, 0.0  # equal values: no widening needed
    res = cmp.compare("y", HostArray(got, "float32"), HostArray(ref, "float32"), "f32")
    assert res.ok and res.mismatches == 0 and res.max_abs_err == 0.0
    assert widened == [8]  # only the chunk with the NaN
    got[30] += 0.5
    res = cmp.compare("y", HostArray(got, "float32"), HostArray(ref, "float32"), "f32")
    assert not res.ok and res.mismatches == 1 and res.max_abs_err == 0.5


def test_weakness_quick_answer_agrees_with_the_full_scan():
    # the quick look at the first elements only ever answers "not weak", and only when that is the answer
    for ref, expected in [
        (np.r_[np.zeros(5000), 1.0], None),                      # zeros at the head, a value later
        (np.r_[np.zeros(5000)], "reference is all zeros"),
        (np.r_[np.arange(5000.0), np.nan], None),                # distinct values then a NaN
        (np.full(6000, 1e-5), "reference is one value (1e-05)"),
        (np.r_[np.full(5000, 1e-5), -1e-5], "reference is all within tolerance of 0 (an all-zero output passes)"),
    ]:
        assert cmp.weakness(ref.astype(np.float32), 1e-4) == expected, ref[:3]
