"""The source indices and weights of the resize kernels (codegen_templates/resize_kernel.cpp.jinja: Scale,
HalfPixel, SignedHalfPixel, Round24, Nearest, Linear, Cubic), modelled step for step in numpy and compared with what PyTorch's CPU kernel
computes (F.interpolate of an index ramp, or of one-hot planes for the weights) over 1000 random (in, out) pairs
per mode: fast, no emulator. tests/test_resize.py runs the emitted C++ itself at tie cases in the emulator."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
import torch.nn.functional as F

f32 = np.float32
U64 = np.uint64


def scale(n_in: int, n_out: int, align_corners: bool = False) -> tuple[np.float32, int, int]:
    """Scale(): PyTorch's float scale s, and s = m * 2^e (2^23 <= m < 2^24) by exact doublings/halvings."""
    if align_corners:
        s = f32(f32(n_in - 1) / f32(n_out - 1)) if n_out > 1 else f32(0)
    else:
        s = f32(f32(n_in) / f32(n_out))
    f, e = s, 0
    while f32(0) < f < f32(8388608.0):
        f, e = f32(f * f32(2)), e - 1
    while f >= f32(16777216.0):
        f, e = f32(f * f32(0.5)), e + 1
    return s, int(f), e


def round24(v: np.ndarray) -> np.ndarray:
    """Round24(): v rounded to 24 significant bits, ties to even, at the same scale (uint64, as the C++)."""
    top = np.zeros_like(v)
    for k in (32, 16, 8, 4, 2, 1):
        top += np.where((v >> (top + U64(k))) != 0, U64(k), U64(0))
    sh = np.where(top < 24, U64(0), top - U64(23))
    r, rem = v >> sh, v & ((U64(1) << sh) - U64(1))
    half = np.where(sh > 0, U64(1) << np.maximum(sh, U64(1)) - U64(1), U64(0))
    up = (sh > 0) & ((rem > half) | ((rem == half) & ((r & U64(1)) != 0)))
    return (r + up.astype(U64)) << sh


def half_pixel(o: np.ndarray, m: int, e: int) -> tuple[np.ndarray, int]:
    """HalfPixel(): max(scale * (o + 0.5) - 0.5 rounded once to float, 0) as a numerator over 2^q."""
    q = 1 - e if e < 0 else 1
    x = (U64(m) * (U64(2) * o + U64(1))) << U64(max(e, 0))
    half = U64(1) << U64(q - 1)
    return np.where(x > half, round24(np.where(x > half, x - half, U64(0))), U64(0)), q


def nearest(n_in: int, n_out: int, exact: bool) -> np.ndarray:
    """Nearest() for every output position."""
    o = np.arange(n_out, dtype=U64)
    s, m, e = scale(n_in, n_out)
    if exact:
        real, q = half_pixel(o, m, e)
        i = np.where((real << U64(2)) < (U64(1) << U64(q)), U64(0), round24(real + (U64(1) << U64(q - 1))) >> U64(q))
    else:
        i = np.floor(o.astype(f32) * s).astype(np.int64)
    return np.minimum(i.astype(np.int64), n_in - 1)


def linear_weights(n_in: int, n_out: int, align_corners: bool, dtype) -> np.ndarray:
    """Linear() for every output position, as the [in, out] matrix of source weights (what one-hot planes give)."""
    o = np.arange(n_out, dtype=U64)
    if n_in == n_out:
        i, src = o.astype(np.int64), o.astype(f32)
    elif align_corners:
        s, _, _ = scale(n_in, n_out, True)
        src = (o.astype(f32) * s).astype(f32)
        i = src.astype(np.int64)
    else:
        _, m, e = scale(n_in, n_out)
        num, q = half_pixel(o, m, e)
        src = num.astype(f32) * f32(2.0 ** -q)  # exact: <= 24 significant bits times a power of two
        i = (num >> U64(q)).astype(np.int64)
    i = np.minimum(i, n_in - 1)
    lam = np.clip(src - i.astype(f32), f32(0), f32(1)).astype(f32)
    w1 = lam.astype(dtype).astype(f32)
    w0 = (f32(1) - w1).astype(dtype).astype(f32)
    if n_in == n_out:
        w0, w1 = np.ones_like(w0), np.zeros_like(w1)
    i1 = i + (i < n_in - 1)
    mat = np.zeros((n_in, n_out), f32)
    cols = np.arange(n_out)
    same = i == i1
    mat[i[same], cols[same]] = (w0[same] + w1[same]).astype(dtype).astype(f32)
    mat[i[~same], cols[~same]] = w0[~same]
    mat[i1[~same], cols[~same]] = w1[~same]
    return mat


def cubic_weights(n_in: int, n_out: int, align_corners: bool, dtype) -> np.ndarray:
    """Cubic() for every output position, as the [in, out] matrix of source weights: the source position not
    clamped at 0 (SignedHalfPixel), floor, t = src - i in [0, 1], Keys' A = -0.75 weights in f32 in factored form
    (each operation rounded), taps i - 1 .. i + 2 clamped, a clamped tap's weight added to its neighbour's in tap order."""
    o = np.arange(n_out, dtype=U64)
    if align_corners:
        s, _, _ = scale(n_in, n_out, True)
        src = (o.astype(f32) * s).astype(f32)
        i = src.astype(np.int64)
    else:
        _, m, e = scale(n_in, n_out)
        q = 1 - e if e < 0 else 1
        x = (U64(m) * (U64(2) * o + U64(1))) << U64(max(e, 0))
        half = U64(1) << U64(q - 1)
        neg = x < half
        mag = round24(np.where(neg, half - np.minimum(x, half), x - np.minimum(x, half)))
        src = (mag.astype(f32) * f32(2.0 ** -q)).astype(f32)
        src = np.where(neg, -src, src).astype(f32)
        i = np.where(neg, np.where(mag == 0, 0, -1), (mag >> U64(q)).astype(np.int64))
    i = np.minimum(i, n_in - 1)
    t = np.clip((src - i.astype(f32)).astype(f32), f32(0), f32(1)).astype(f32)
    a, one = f32(-0.75), f32(1)
    r = (one - t).astype(f32)
    w = [(a * t * r * r).astype(f32), (r * (one + t - (a + f32(2)) * t * t)).astype(f32),
         (t * (one + r - (a + f32(2)) * r * r)).astype(f32), (a * r * t * t).astype(f32)]
    mat = np.zeros((n_in, n_out), f32)
    cols = np.arange(n_out)
    for j in range(4):
        k = np.clip(i + j - 1, 0, n_in - 1)
        mat[k, cols] = (mat[k, cols] + w[j].astype(dtype).astype(f32)).astype(f32)
    return mat.astype(dtype).astype(f32)


def _pairs(seed: int, hi_in: int, hi_out: int, n: int = 1000) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    return [(rng.randint(1, hi_in), rng.randint(1, hi_out)) for _ in range(n)]


#: Exact ties the float formula floor((o + 0.5f) * scale) got wrong (differential fuzzer; torch takes the upper).
TIES = [(2, 2033), (18, 2763)]


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_nearest_indices_match_pytorch(mode):
    bad = []
    for n_in, n_out in TIES + _pairs(11, 3000, 3000):
        ramp = torch.arange(n_in, dtype=torch.float32).view(1, 1, n_in)
        ref = F.interpolate(ramp, size=n_out, mode=mode).view(-1).long().numpy()
        got = nearest(n_in, n_out, mode == "nearest-exact")
        if not np.array_equal(ref, got):
            o = int(np.flatnonzero(ref != got)[0])
            bad.append(f"in={n_in} out={n_out}: output {o} takes {got[o]}, PyTorch {ref[o]}")
    assert not bad, bad[:5]


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_linear_indices_and_weights_match_pytorch(align_corners, dtype):
    """1-D (linear) and, in f32, 2-D (bilinear, along W) one-hot planes: the weight of every source for every
    output. (f16 bilinear: PyTorch's 2-D kernel rounds some weights differently, by at most one f16 step of the
    weight. The 1-D kernel stores them as the emitted code does.)"""
    tdt, ndt = {"f32": (torch.float32, np.float32), "f16": (torch.float16, np.float16)}[dtype]
    bad = []
    for k, (n_in, n_out) in enumerate(_pairs(12, 200, 500)):
        eye = torch.eye(n_in, dtype=tdt)
        if k % 2 or dtype == "f16":
            ref = F.interpolate(eye.view(1, n_in, n_in), size=n_out, mode="linear", align_corners=align_corners)[0]
        else:
            ref = F.interpolate(eye.view(1, n_in, 1, n_in), size=(1, n_out), mode="bilinear",
                                align_corners=align_corners)[0, :, 0]
        got = linear_weights(n_in, n_out, align_corners, ndt)
        if not np.array_equal(ref.float().numpy(), got):
            c, o = np.argwhere(ref.float().numpy() != got)[0]
            bad.append(f"in={n_in} out={n_out}: source {c} output {o}: {got[c, o]!r}, PyTorch {ref[c, o].item()!r}")
    assert not bad, bad[:5]


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_cubic_indices_and_weights_match_pytorch(align_corners, dtype):
    """Bicubic along W of one-hot planes [in, 1, in]: every source's weight for every output, up and down (taps
    clamped at both edges, a source position below 0). The taps are PyTorch's; the f32 weights are Keys' cubic in
    factored form (within a few ulps of exact), PyTorch's its expanded form (within about 7e-7 of exact), so they
    differ by rounding only (a wrong tap would be off by 0.01 to 1): within 1e-6; in f16, where a clamped source sums
    up to three weights each rounded to f16, within two f16 steps of 1 (2^-9)."""
    tdt, ndt = {"f32": (torch.float32, np.float32), "f16": (torch.float16, np.float16)}[dtype]
    bad = []
    for n_in, n_out in _pairs(13, 200, 500, 150):
        eye = torch.eye(n_in, dtype=tdt).view(1, n_in, 1, n_in)
        ref = F.interpolate(eye, size=(1, n_out), mode="bicubic", align_corners=align_corners)[0, :, 0].float().numpy()
        got = cubic_weights(n_in, n_out, align_corners, ndt)
        far = np.abs(ref - got) > (2.0 ** -9 if dtype == "f16" else 1e-6)
        if far.any():
            c, o = np.argwhere(far)[0]
            bad.append(f"in={n_in} out={n_out}: source {c} output {o}: {got[c, o]!r}, PyTorch {ref[c, o]!r}")
    assert not bad, bad[:5]


def test_the_single_rounding_matters():
    """The model is not vacuous: rounding the product and the subtraction separately (the float formula the
    kernels had) differs from PyTorch at the saved ties and at many weights."""
    n_in, n_out = TIES[0]
    s, _, _ = scale(n_in, n_out)
    o = np.arange(n_out, dtype=f32)
    two_roundings = np.minimum(np.floor(((o + f32(0.5)) * s).astype(f32)).astype(np.int64), n_in - 1)
    assert not np.array_equal(two_roundings, nearest(n_in, n_out, True))
    assert nearest(n_in, n_out, True)[1016] == 1 and two_roundings[1016] == 0
