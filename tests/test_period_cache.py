"""Per-channel values `load(w[r])` cached in UB per core (lowering/passes/plan_period_cache.py,
lowering/emit/period_cache.py): which loops get the cache, when the kernel uses it, results against torch on the
cached and the uncached paths (C larger than the cache, rows wrapping the period within a tile and a core), and a
planted bug the emulator catches."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from ascend_dsl import ir, parse_text
from lowering import lower
from npu_harness.task import TaskRun
from npu_harness.validate import validate_sim

# Four per-channel tensors against short rows: the scalar GM reads outweigh the row's copy, so the cache pays.
BN = '''@kernel
def k(x: Tensor[f32, "N, C, D"], w: Tensor[f32, "C"], b: Tensor[f32, "C"], m: Tensor[f32, "C"], v: Tensor[f32, "C"],
      y: Tensor[f32, "N, C, D"]):
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            scale = load(w[r]) * rsqrt(load(v[r]) + 0.5)
            store(y[r, :], load(x[r, :]) * scale + (load(b[r]) - load(m[r]) * scale))
'''
# One per-channel tensor against long rows: one more DMA would cost more than the GM reads save.
BIAS = '''@kernel
def k(x: Tensor[f32, "N, C, D"], b: Tensor[f32, "C"], y: Tensor[f32, "N, C, D"]):
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], load(x[r, :]) + load(b[r]))
'''
# A row broadcast over a run of the split (row r reads s[r / C]): not a per-channel value, no cache.
STRIDED = '''@kernel
def k(x: Tensor[f32, "N, C, D"], s: Tensor[f32, "N"], y: Tensor[f32, "N, C, D"]):
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], load(x[r, :]) * load(s[r]))
'''


def _lower(text: str):
    k = parse_text(text, "pc.adsl")[0].instantiate()
    project, ctx = lower(k, "ascend910b1", "pc.adsl")
    return k, project, ctx


def _caches(ctx) -> list[ir.Buffer]:
    return [b for s in ir.walk(ctx.lowered.body) if isinstance(s, ir.TileLoop) for b in s.buffers_decl
            if b.role is ir.BufferRole.PERIOD_CACHE]


def test_each_per_channel_tensor_gets_a_fixed_cache_and_strided_rows_none():
    _, project, ctx = _lower(BN)
    assert sorted(b.of for b in _caches(ctx)) == ["b", "m", "v", "w"]
    assert all(b.layout is ir.Layout.PERIOD and b.bytes_for(1) == ir.PERIOD_CACHE_BYTES for b in _caches(ctx))
    code = project.files["k_kernel.cpp"]
    assert code.count(f"Period_ * sizeof(float) <= {ir.PERIOD_CACHE_BYTES}") == 8  # preload + CopyIn, per tensor
    assert "wGm.GetValue((rowStart_ + offset + i) % wGmPeriod_)" in code  # the uncached path stays
    assert not _caches(_lower(STRIDED)[2])


def _bn_inputs(N: int, C: int, D: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x, w, b, m = (torch.randn(*s, generator=g) for s in ((N, C, D), (C,), (C,), (C,)))
    v = torch.rand(C, generator=g) + 0.1
    scale = w * torch.rsqrt(v + 0.5)
    want = x * scale.view(1, C, 1) + (b - m * scale).view(1, C, 1)
    return [x, w, b, m, v], want


def _validate(k, project, ctx, inputs, want, tmp_path):
    res = validate_sim(k, ctx.lowered, project, ctx, TaskRun(inputs, [want]), work_dir=tmp_path)
    return res


@pytest.mark.slow
@pytest.mark.parametrize("N,C,D", [
    (8, 5, 40),     # cached: a row per core
    (40, 7, 100),   # cached: 6 rows per core in tiles of 3, wrapping the period of 7 within tiles and cores
    (2, 600, 24),   # C = 600 f32 does not fit 2 KB: the GM reads per row
])
def test_per_channel_values_match_pytorch_cached_or_not(tmp_path, N, C, D):
    k, project, ctx = _lower(BN)
    inputs, want = _bn_inputs(N, C, D)
    res = _validate(k, project, ctx, inputs, want, tmp_path)
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])
    gets = sum(b["gm_get"] for b in res.counters["blocks"])
    assert (gets == 0) == (C * 4 <= ir.PERIOD_CACHE_BYTES), gets  # cached: no scalar GM read at all


@pytest.mark.slow
def test_the_cache_is_left_out_where_the_row_copy_outweighs_the_reads(tmp_path):
    k, project, ctx = _lower(BIAS)
    assert [b.of for b in _caches(ctx)] == ["b"]
    g = torch.Generator().manual_seed(3)
    x, b = torch.randn(4, 6, 4096, generator=g), torch.randn(6, generator=g)
    res = _validate(k, project, ctx, [x, b], x + b.view(1, 6, 1), tmp_path)
    assert res.ok, res.summary() + res.detail
    assert sum(blk["gm_get"] for blk in res.counters["blocks"]) == 24  # a GM read per row: 4 x 6 rows


@pytest.mark.slow
def test_emulator_catches_a_cache_read_at_the_wrong_channel(tmp_path):
    """Planted bug: the cached path gives every row of a tile (3 rows) the channel of the tile's first row."""
    k, project, ctx = _lower(BN)
    name = "k_kernel.cpp"
    old = "wLocal.SetValue(i, perCache_w.GetValue((rowStart_ + offset + i) % wGmPeriod_));"
    assert project.files[name].count(old) == 1
    bad = dataclasses.replace(project, files={**project.files, name: project.files[name].replace(
        old, "wLocal.SetValue(i, perCache_w.GetValue((rowStart_ + offset) % wGmPeriod_));")})
    inputs, want = _bn_inputs(40, 7, 100)
    assert _validate(k, project, ctx, inputs, want, tmp_path / "good").ok
    assert not _validate(k, bad, ctx, inputs, want, tmp_path / "bad").ok
