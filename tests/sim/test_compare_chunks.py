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
