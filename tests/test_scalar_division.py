"""x / d for a scalar d on f32 tiles (lowering/emit/scalar_division.py): one Muls by 1 / d where that is a normal
float, and d scaled by 2^64 or 2^-64 first where it is not (|d| < 2^-126: 1 / d overflows or loses bits; |d| >
2^126: 1 / d is subnormal). Checked in the emulator against torch's own division, for a kernel scalar (flat tiles),
a per-row sum (whole rows, row by row and with Brcb'd blocks) and a chunked row's sum (rows longer than UB)."""

from __future__ import annotations

import pytest
import torch

import ascend_dsl
from lowering import lower
from npu_harness.task import TaskRun
from npu_harness.validate import validate_sim

FLAT = '''@kernel
def k(x: Tensor[f32, "N"], y: Tensor[f32, "N"], s: f32 = 1.0):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], load(x[t]) / s)
'''

ROWS = '''@kernel
def k(x: Tensor[f32, "B, D"], y: Tensor[f32, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            v = load(x[r, :])
            e = exp(v * 0.3 - max(v, axis=1))
            store(y[r, :], e / sum(e, axis=1))
'''


def _run(text: str, inputs: list, expected: torch.Tensor, tmp_path, scalars: dict | None = None):
    k = ascend_dsl.parse_text(text, file="div.adsl")[0].instantiate()
    project, ctx = lower(k, "ascend910b1", "div.adsl")
    run = TaskRun(inputs, [expected], attrs=scalars or {})
    return validate_sim(k, ctx.lowered, project, ctx, run, work_dir=tmp_path), project


# tiny (1 / d overflows; 1 / d finite but d subnormal), huge (1 / d subnormal), normal, and the specials
@pytest.mark.parametrize("d", [1e-45, 3e-39, 1e-38, 9e37, 3.4e38, 2.5, -1e-40, 0.0, float("inf"), float("nan")])
def test_a_kernel_scalar_divides_like_torch_at_every_magnitude(d, tmp_path):
    x = torch.tensor([0.0, -0.0, 1e-44, -3e-39, 1e-30, 1.0, -7.5, 3e30, 1e38, float("inf"), float("nan")] * 300)
    ref = x / torch.tensor(d, dtype=torch.float32)
    res, _ = _run(FLAT, [x], ref, tmp_path, {"s": d})
    assert res.ok, res.summary() + "\n" + res.detail


@pytest.mark.parametrize("shape", [(49, 17), (6, 300), (2, 60000)])  # row by row, Brcb'd blocks, chunked passes
def test_softmax_rows_whose_sum_is_subnormal(shape, tmp_path):
    """Every e = exp(0.3 v - max(v)) of a row below 2^-126, a third of them 0: the row sum is subnormal and 1 / s
    overflows, so x * (1 / s) was inf * 0 = NaN and inf where x / s is 0 and at most 1 (fuzz seed 3606, session 36)."""
    g = torch.Generator().manual_seed(7)
    x = torch.rand(shape, generator=g) * 30 + 110.0
    e = torch.exp(x * 0.3 - x.max(dim=1, keepdim=True).values)
    s = e.sum(dim=1)
    assert bool(((s > 0) & (s < 2 ** -128)).all()) and bool((e == 0).any())
    res, _ = _run(ROWS, [x], e / e.sum(dim=1, keepdim=True), tmp_path)
    assert res.ok, res.summary() + "\n" + res.detail


BY_TILE = '''@kernel
def k(w: Tensor[f32, "B, D"], x: Tensor[f32, "B, D"], y: Tensor[f32, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], sum(load(w[r, :]), axis=1) / (load(x[r, :]) * 2.0))
'''


@pytest.mark.parametrize("shape", [(49, 17), (6, 300), (2, 60000)])  # row by row, Brcb'd blocks, chunked passes
def test_a_per_row_value_divided_by_a_tile_with_subnormal_elements(shape, tmp_path):
    """v / x of a per-row value by a tile is Duplicate + Div (select_instructions), not v * (1 / x): 1 / x is inf for
    |x| < 2^-128 where v / x is finite (here about 1e7)."""
    g = torch.Generator().manual_seed(3)
    w = torch.rand(shape, generator=g) * 1e-35
    x = torch.where(torch.rand(shape, generator=g) < 0.3, torch.tensor(1e-40), torch.rand(shape, generator=g) + 0.5)
    ref = w.sum(dim=1, keepdim=True) / (x * 2.0)
    assert bool(torch.isfinite(ref).all())
    res, _ = _run(BY_TILE, [w, x], ref, tmp_path)
    assert res.ok, res.summary() + "\n" + res.detail
