"""Per-row values against whole rows (`x op load(c[r])`): the values Brcb'd to a 32-byte block per row, then one
level-0 instruction per strip of a repeat's columns and up to 255 rows (lowering/passes/plan_row_value_blocks.py,
lowering/emit/row_value_broadcast.py), validated in the emulator at odd shapes (a tail strip, more than 255 rows
in a tile, more than 2032 rows in a tile for Brcb, the values as either operand, f16 casts), the instruction count,
and planted bugs caught (the values' block stride, Brcb's repeat count)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from ascend_dsl import ir, parse_text
from lowering import lower
from lowering.row_value_ops import binary
from npu_harness.task import TaskRun
from npu_harness.validate import validate_sim

KERNEL = '''@kernel(T=[f32, f16])
def k(x: Tensor[T, "B, D"], c: Tensor[T, "B"], y: Tensor[T, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], {expr})
'''


def _lower(expr: str, dtype: str):
    k = parse_text(KERNEL.format(expr=expr), "rv.adsl")[0].instantiate({"T": dtype})
    project, ctx = lower(k, "ascend910b1", "rv.adsl")
    return k, project, ctx


def _run(expr: str, dtype: str, rows: int, d: int, ref, tmp_path, patch=None):
    k, project, ctx = _lower(expr, dtype)
    if patch:
        project = replace(project, files={**project.files, "k_kernel.cpp": patch(project.files["k_kernel.cpp"])})
    torch.manual_seed(0)
    tdt = torch.float32 if dtype == "f32" else torch.float16
    x = torch.randn(rows, d).to(tdt)
    c = ((torch.rand(rows) + 0.5) * torch.where(torch.rand(rows) < 0.5, -1.0, 1.0)).to(tdt)  # away from 0
    return validate_sim(k, ctx.lowered, project, ctx, TaskRun([x, c], [ref(x.float(), c.float()[:, None]).to(tdt)]),
                        work_dir=tmp_path)


def _instructions(result, api: str) -> int:
    return max(sum(n for key, (n, _) in b.get("vec", {}).items() if key.startswith(api + "."))
               for b in result.counters["blocks"])


@pytest.mark.parametrize("expr,api,values_first", [
    ("load(x[r, :]) / load(c[r])", "Div", False), ("load(c[r]) / load(x[r, :])", "Div", True),
    ("load(x[r, :]) - load(c[r])", "Sub", False), ("load(c[r]) - load(x[r, :])", "Sub", True),
    ("load(x[r, :]) * load(c[r])", "Mul", False), ("load(c[r]) + load(x[r, :])", "Add", False),
    ("max(load(x[r, :]), load(c[r]))", "Max", False), ("min(load(c[r]), load(x[r, :]))", "Min", False),
])
def test_each_per_row_form_is_read_back_as_one_binary_op(expr, api, values_first):
    _, project, ctx = _lower(expr, "f32")
    per_rows = [s for s in ir.walk(ctx.lowered.body) if isinstance(s, ir.PerRow)]
    assert [(binary(s).api, binary(s).values_first) for s in per_rows] == [(api, values_first)]
    cpp = project.files["k_kernel.cpp"]
    assert "Brcb(rowValBlocks_f32" in cpp and "pipe.InitBuffer(rowValBlocks_f32Buf" in cpp


def test_a_loop_without_per_row_values_gets_no_scratch():
    _, project, _ = _lower("load(x[r, :]) * 2.0", "f32")
    cpp = project.files["k_kernel.cpp"]
    assert "Brcb(" not in cpp and "rowValBlocks_" not in cpp


@pytest.mark.slow
@pytest.mark.parametrize("expr,api,dtype,rows,d,ref", [
    # 65,536 rows of 64 f32: 1366 rows per core, tiles of more than 255 rows (several repeat batches per strip)
    ("load(x[r, :]) / load(c[r])", "Div", "f32", 65536, 64, lambda x, c: x / c),
    # f16 rows of 100 (computed in f32: casts around the Div); the values first
    ("load(c[r]) / load(x[r, :])", "Div", "f16", 9000, 100, lambda x, c: c / x),
    ("load(c[r]) - load(x[r, :])", "Sub", "f32", 4801, 200, lambda x, c: c - x),
    ("load(x[r, :]) - load(c[r])", "Sub", "f16", 4801, 37, lambda x, c: x - c),
    ("max(load(x[r, :]), load(c[r]))", "Max", "f32", 3000, 37, lambda x, c: torch.maximum(x, c)),
])
def test_per_row_values_against_short_rows_validate_in_few_instructions(expr, api, dtype, rows, d, ref, tmp_path):
    res = _run(expr, dtype, rows, d, ref, tmp_path)
    assert res.ok, (res.summary(), res.detail, res.sim_errors)
    per_core = -(-rows // 48)
    lanes = 64  # every form here computes in f32 (f16 division and subtraction: casts) or f32 data
    assert _instructions(res, api) < per_core / 4, res.counters["blocks"][0]["vec"]
    assert _instructions(res, api) % -(-d // lanes) == 0
    assert _instructions(res, "Brcb") >= 1


@pytest.mark.slow
def test_few_long_rows_keep_one_instruction_per_row(tmp_path):
    """Rows of 1000 f32 with 3 rows per core: 16 strips would cost more than 3 rows, so row by row (no Brcb)."""
    res = _run("load(x[r, :]) * load(c[r])", "f32", 130, 1000, lambda x, c: x * c, tmp_path)
    assert res.ok, (res.summary(), res.detail)
    assert _instructions(res, "Brcb") == 0 and _instructions(res, "Muls") == 3


@pytest.mark.slow
@pytest.mark.parametrize("bad,good", [
    # the values' block stride must be 0 (all lanes of a repeat read the row's one block)
    ("BinaryRepeatParams(1, 1, 0, rowBlocks, rowBlocks, 1)", "BinaryRepeatParams(1, 1, 1, rowBlocks, rowBlocks, 1)"),
    # Brcb must spread every row's value: one repeat short leaves the last rows' blocks unwritten
    ("static_cast<uint8_t>((n + 7) / 8)", "static_cast<uint8_t>(n / 8)"),
])
def test_planted_bugs_are_caught(bad, good, tmp_path):
    def patch(cpp: str) -> str:
        assert bad in cpp
        return cpp.replace(bad, good)
    res = _run("load(x[r, :]) / load(c[r])", "f32", 4801, 64, lambda x, c: x / c, tmp_path, patch=patch)
    assert not res.ok
