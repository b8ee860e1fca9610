"""Row reductions a tile at a time (lowering/emit/tile_fold.py): repeat columns folded across the tile's rows, then
one single-repeat reduction per row; the per-row path for rows of one repeat, padded rows and small tiles."""

from __future__ import annotations

import pytest
import torch
from dsl_snippets import tile_kernel

from lowering import lower
from npu_harness.task import TaskRun
from npu_harness.validate import validate_sim

HEAD = '''@kernel
def k(x: Tensor[T, "B, D"], s: Tensor[T, "B"], m: Tensor[T, "B"], n: Tensor[T, "B"], a: Tensor[T, "B"],
      y: Tensor[T, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''
BODY = ("xt = load(x[r, :])\nstore(s[r], sum(xt, axis=1))\nstore(m[r], max(xt, axis=1))\n"
        "store(n[r], min(xt, axis=1))\nstore(a[r], mean(xt, axis=1))\nstore(y[r, :], xt - max(xt, axis=1))")


def _kernel(dtype: str):
    return tile_kernel(HEAD.replace("@kernel", f"@kernel(T=[{dtype}])"), BODY, "fold.adsl")


def test_the_tile_fold_is_emitted_with_the_per_row_path_as_its_else():
    project, _ = lower(_kernel("f32"), "ascend910b1", "fold.adsl")
    code = project.files["k_kernel.cpp"]
    assert "if (rowLen_ % lanes == 0 && reps >= 2 && rowBlocks <= 255 && count >= 4) {  // emit/tile_fold.py" in code
    assert "Add(foldTmp_f32[r * foldPitch + c * lanes], from[r * pitch + c * lanes]," in code
    assert "Max(foldTmp_f32[r * foldPitch + c * lanes]" in code and "Min(foldTmp_f32[r * foldPitch + c * lanes]" in code
    assert "ReduceSum(sLocal[i], foldTmp_f32[i * foldPitch], reduceTmp_f32, static_cast<int32_t>(lanes));" in code
    # the scratch: half a row per row, one block when the fold cannot run (host and kernel alike)
    assert "(tileLength_ >= 4 && rowPitch_ * sizeof(float) / 32 <= 255" in code
    assert "(r >= 4 && padded * sizeof(float) / 32 <= 255" in project.files["k_tiling.h"]


@pytest.mark.slow
@pytest.mark.parametrize("dtype, rows, d", [
    ("f32", 1000, 128),   # 2 repeats
    ("f32", 700, 192),    # 3: an odd column
    ("f32", 500, 320),    # 5
    ("f32", 400, 768),    # 12: 6, 3, 2, 1
    ("f16", 900, 384),    # 3 repeats of 128 halves
    ("f16", 600, 1280),   # 10
    ("f32", 300, 100),    # padded rows: the per-row path
    ("f32", 60, 512),     # 2 rows per core: tiles below 4 rows, the per-row path
    ("f32", 20000, 64),   # one repeat per row: the per-row path; tiles of more than 255 rows
])
def test_tile_fold_matches_pytorch(dtype, rows, d, tmp_path):
    k = _kernel(dtype)
    project, ctx = lower(k, "ascend910b1", "fold.adsl")
    gen = torch.Generator().manual_seed(rows + d)
    tdt = torch.float32 if dtype == "f32" else torch.float16
    x = (torch.randn(rows, d, generator=gen) * 4).to(tdt)
    if d > 2 * (256 // x.element_size()):  # a maximum in the last repeat column and a minimum in the odd one
        x[::7, -1] = 50
        x[::5, 2 * (256 // x.element_size())] = -50
    xf = x.float()
    want = [xf.sum(1), xf.amax(1), xf.amin(1), xf.mean(1), xf - xf.amax(1, keepdim=True)]
    res = validate_sim(k, ctx.lowered, project, ctx, TaskRun([x], [w.to(tdt) for w in want]), work_dir=tmp_path)
    assert res.ok, (res.summary(), res.detail, res.sim_errors)
