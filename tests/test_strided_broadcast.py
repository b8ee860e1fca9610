"""A `[D]` row vector against many short rows: one level-0 instruction per strip of a repeat's columns and up to
255 rows (lowering/emit/strided_broadcast.py), validated in the emulator at odd shapes (a tail strip, more than
255 rows in a tile, the vector as either operand), its instruction count, and a planted stride bug caught."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from ascend_dsl import parse_text
from lowering import lower
from npu_harness.task import TaskRun
from npu_harness.validate import validate_sim

KERNEL = '''@kernel(T=[f32, f16])
def k(x: Tensor[T, "B, D"], w: Tensor[T, "D"], y: Tensor[T, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], {expr})
'''


def _run(expr: str, dtype: str, rows: int, d: int, ref, tmp_path, patch=None):
    k = parse_text(KERNEL.format(expr=expr), "sb.adsl")[0].instantiate({"T": dtype})
    project, ctx = lower(k, "ascend910b1", "sb.adsl")
    if patch:
        project = replace(project, files={**project.files, "k_kernel.cpp": patch(project.files["k_kernel.cpp"])})
    torch.manual_seed(0)
    tdt = torch.float32 if dtype == "f32" else torch.float16
    x, w = torch.randn(rows, d).to(tdt), (torch.rand(d) + 0.5).to(tdt)
    return validate_sim(k, ctx.lowered, project, ctx, TaskRun([x, w], [ref(x.float(), w.float()).to(tdt)]),
                        work_dir=tmp_path)


def _instructions(result, api: str) -> int:
    return max(sum(n for key, (n, _) in b.get("vec", {}).items() if key.startswith(api + "."))
               for b in result.counters["blocks"])


@pytest.mark.slow
@pytest.mark.parametrize("expr,api,dtype,rows,d,ref", [
    # 28,800 rows of 64 f32: 600 rows per core, tiles of more than 255 rows (two repeat batches per strip)
    ("load(x[r, :]) + load(w[:])", "Add", "f32", 28800, 64, lambda x, w: x + w),
    # rows of 100 f16 (200 bytes, not whole 32-byte blocks; one strip of 100 of 128 lanes)
    ("load(x[r, :]) * load(w[:])", "Mul", "f16", 9000, 100, lambda x, w: x * w),
    # the vector first: Sub keeps its operand order; rows of 200 f32 (a tail strip of 8 of 64 lanes)
    ("load(w[:]) - load(x[r, :])", "Sub", "f32", 4801, 200, lambda x, w: w - x),
    ("max(load(x[r, :]), load(w[:]))", "Max", "f32", 3000, 37, lambda x, w: torch.maximum(x, w)),
])
def test_row_vector_against_short_rows_validates_in_few_instructions(expr, api, dtype, rows, d, ref, tmp_path):
    res = _run(expr, dtype, rows, d, ref, tmp_path)
    assert res.ok, (res.summary(), res.detail, res.sim_errors)
    per_core = -(-rows // 48)
    lanes = 256 // (4 if dtype == "f32" else 2)
    # row by row this is one instruction per row; strips of all the tile's rows need a few per tile
    assert _instructions(res, api) < per_core / 4, res.counters["blocks"][0]["vec"]
    assert _instructions(res, api) % -(-d // lanes) == 0


@pytest.mark.slow
def test_long_rows_and_few_rows_keep_one_instruction_per_row(tmp_path):
    """Rows of 1000 f32 with 3 rows per core: 16 strips would cost more than 3 rows, so row by row."""
    res = _run("load(x[r, :]) + load(w[:])", "f32", 130, 1000, lambda x, w: x + w, tmp_path)
    assert res.ok, (res.summary(), res.detail)
    assert _instructions(res, "Add") == 3


@pytest.mark.slow
def test_planted_bug_the_vector_advancing_per_repeat_is_caught(tmp_path):
    """The vector's repeat stride must be 0 (every row reads the same D elements): with the rows' stride it reads
    past the vector into other UB, and the comparison (or the emulator's UB checks) fails."""
    res = _run("load(x[r, :]) + load(w[:])", "f32", 28800, 64, lambda x, w: x + w, tmp_path,
               patch=lambda c: c.replace("BinaryRepeatParams(1, 1, 1, rowBlocks, rowBlocks, 0)",
                                         "BinaryRepeatParams(1, 1, 1, rowBlocks, rowBlocks, rowBlocks)"))
    assert not res.ok
