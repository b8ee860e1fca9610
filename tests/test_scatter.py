"""Element scatter along the last dim: `scatter(rows, idx, src)` / `scatter_add` (torch.scatter / scatter_add with
dim=1; index_copy / index_add along the last dim with one index row `load(idx[:])`). A copy of the rows, then a
scalar loop over each row's columns in order (lowering/emit/scatter.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from dsl_snippets import first_tile, tile_error, tile_kernel

from ascend_dsl import DslError, interpreter, ir, load_file, printer
from lowering import lower
from npu_harness.task import TaskRun
from npu_harness.validate import validate_sim

REPO = Path(__file__).resolve().parent.parent

HEAD = '''@kernel
def k(x: Tensor[f32, "B, D"], h: Tensor[f16, "B, D"], i: Tensor[i64, "B, D"], j: Tensor[i32, "B, D"],
      f: Tensor[f32, "B, D"], c: Tensor[i64, "D"], n: Tensor[i32, "B, D"], y: Tensor[f32, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


def _k(body: str) -> ir.Kernel:
    return tile_kernel(HEAD, body, "scatter.adsl")


def _tensors(b: int = 5, d: int = 9) -> dict[str, torch.Tensor]:
    x = torch.randn(b, d)
    idx = torch.randint(0, d, (b, d))  # repeats in most rows
    return {"x": x, "h": x.half(), "i": idx, "j": idx.int(), "f": torch.randn(b, d), "c": torch.randint(0, d, (d,)),
            "n": torch.randint(-50, 50, (b, d), dtype=torch.int32), "y": torch.empty(b, d)}


def test_scatter_types_as_whole_rows_and_prints_back():
    k = _k("store(y[r, :], scatter_add(load(x[r, :]), load(i[r, :]), load(f[r, :]) * 2.0))")
    (store,) = first_tile(k).body
    assert store.value.type == ir.tile_of(ir.DType.F32, ir.Layout.ROWS)
    assert "scatter_add(load(x[r, :]), load(i[r, :]), load(f[r, :]) * 2.0)" in printer.kernel(k)


def test_interpreter_is_torch_and_repeats_are_deterministic():
    t = _tensors()
    x, idx, f, c = t["x"], t["i"], t["f"], t["c"]
    cases = {
        "scatter_add(load(x[r, :]), load(j[r, :]), load(f[r, :]))": torch.scatter_add(x, 1, idx, f),
        "scatter_add(load(x[r, :]), load(c[:]), load(f[r, :]) * 0.5)": torch.index_add(x, 1, c, f, alpha=0.5),
        "scatter(load(x[r, :]), load(i[r, :]), -3.0)": x.scatter(1, idx, -3.0),
    }
    for body, want in cases.items():
        interpreter.run(_k(f"store(y[r, :], {body})"), t, num_cores=2, tile=18)
        assert torch.allclose(t["y"], want, atol=1e-6), body
    # scatter with repeats: the last column's value wins (a documented rule; PyTorch leaves it unspecified)
    interpreter.run(_k("store(y[r, :], scatter(load(x[r, :]), load(i[r, :]), load(f[r, :])))"), t, num_cores=2, tile=18)
    for row in range(5):
        for col in range(9):
            hits = (idx[row] == col).nonzero().flatten()
            want = f[row, hits[-1]] if len(hits) else x[row, col]
            assert t["y"][row, col] == want


def test_interpreter_reports_columns_outside_the_row():
    t = _tensors()
    k = _k("store(y[r, :], scatter_add(load(x[r, :]), load(i[r, :]), load(f[r, :])))")
    for bad in (9, -1):  # torch.scatter_add rejects negative indices too
        t["i"] = t["i"].clone()
        t["i"][3, 4] = bad
        with pytest.raises(DslError) as e:
            interpreter.run(k, t, num_cores=2, tile=18)
        d = e.value.diagnostics[0]
        assert d.code == "INDEX" and f"scatter_add: column index {bad} is outside the rows' [0, 9)" in d.message
        assert d.span.line == 6


@pytest.mark.parametrize("body,code,needle", [
    ("scatter(load(x[r, :]), load(f[r, :]), load(x[r, :]))", "TYPE", "index is i32 or i64 whole rows"),
    ("scatter(load(x[r, :]), load(i[r, :]), load(h[r, :]))", "DTYPE-MISMATCH", "the source holds f16, the rows f32"),
    ("scatter(load(x[r, :]), load(i[r, :]))", "ARGS", "takes whole rows, their column indices and the source"),
    ("scatter(1.0, load(i[r, :]), load(x[r, :]))", "TYPE", "first argument is whole rows"),
    ("scatter(load(x[r, :]), load(i[r, :]), sum(load(x[r, :]), axis=1))", "TYPE", "source is whole rows"),
])
def test_misuse_is_a_located_error(body, code, needle):
    d = tile_error(HEAD, f"store(y[r, :], {body})", "scatter.adsl").diagnostics[0]
    assert d.code == code and needle in d.message and d.span.line == 6, d.message


def test_storing_through_an_index_tensor_names_the_supported_forms():
    head = HEAD.replace('y: Tensor[f32, "B, D"]', 'y: Tensor[f32, "V, D"]')
    e = tile_error(head.replace('c: Tensor[i64, "D"]', 'c: Tensor[i64, "B"]'), "store(y[c[r], :], load(x[r, :]))",
                   "scatter.adsl")
    d = e.diagnostics[0]
    assert d.code == "UNSUPPORTED" and d.span.line == 6 and "a scatter along dim 0" in d.message
    assert "scatter along the last dim works" in d.hint


def test_lowering_copies_the_rows_then_walks_each_row_in_column_order():
    project, _ = lower(_k("store(y[r, :], scatter_add(load(x[r, :]), load(i[r, :]), load(f[r, :])))"),
                       "ascend910b1", "scatter.adsl")
    code = project.files["k_kernel.cpp"]
    assert "DataCopy(yLocal, xLocal, static_cast<uint32_t>(count * Dp_));" in code
    assert "row.SetSize(static_cast<uint32_t>(D_));" in code
    assert "const uint32_t col = static_cast<uint32_t>(iLocal.GetValue(i * Dp_ + j));" in code
    assert "row.SetValue(col, static_cast<float>(static_cast<float>(row.GetValue(col)) + " in code
    project, _ = lower(_k("store(y[r, :], cast(scatter_add(load(n[r, :]), load(c[:]), 3), f32))"),
                       "ascend910b1", "scatter.adsl")
    code = project.files["k_kernel.cpp"]
    assert "static_cast<uint32_t>(cLocal.GetValue(j))" in code  # one index row for every row
    assert "row.SetValue(col, row.GetValue(col) + 3);" in code  # i32 adds as integers


@pytest.mark.slow
def test_emulator_matches_torch_with_repeats_and_reports_indices_outside_the_row(tmp_path):
    """One compile: repeats give PyTorch's sums (column order), a column past D or negative is UB-OOB at the
    SetValue of the row view, never a write into the next row."""
    adsl = REPO / "examples/index/scatter_add.adsl"
    kernel = load_file(adsl)[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    x, src = torch.randn(5, 37), torch.randn(5, 37)
    idx = torch.randint(0, 4, (5, 37))  # many repeats
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx, src], [torch.scatter_add(x, 1, idx, src)]),
                       work_dir=tmp_path)
    assert res.ok, res.summary() + res.detail
    for bad in (37, -1):
        idx2 = idx.clone()
        idx2[1, 3] = bad
        res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx2, src], [x]), work_dir=tmp_path / str(bad))
        assert not res.ok and [e.code for e in res.sim_errors] == ["UB-OOB"], res.summary() + res.detail
