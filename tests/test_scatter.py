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


def test_storing_through_an_index_tensor_names_the_row_scatters():
    head = HEAD.replace('y: Tensor[f32, "B, D"]', 'y: Tensor[f32, "V, D"]')
    e = tile_error(head.replace('c: Tensor[i64, "D"]', 'c: Tensor[i64, "B"]'), "store(y[c[r], :], load(x[r, :]))",
                   "scatter.adsl")
    d = e.diagnostics[0]
    assert d.code == "UNSUPPORTED" and d.span.line == 6 and "storing into rows chosen by an index" in d.message
    assert "store(y[r, :], index_add(load(x[r, :]), idx, src))" in d.hint


def test_lowering_copies_the_rows_then_walks_each_row_in_column_order():
    project, _ = lower(_k("store(y[r, :], scatter_add(load(x[r, :]), load(i[r, :]), load(f[r, :])))"),
                       "ascend910b1", "scatter.adsl")
    code = project.files["k_kernel.cpp"]
    assert "DataCopy(yLocal, xLocal, static_cast<uint32_t>(count * rowPitch_));" in code
    assert "row.SetSize(static_cast<uint32_t>(rowLen_));" in code
    assert "const uint32_t col = static_cast<uint32_t>(iLocal.GetValue(i * rowPitch_ + j));" in code
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


# ----------------------------------------------------------------------------- along dim 0 (whole rows)
ROWS_HEAD = '''@kernel
def k(x: Tensor[f32, "V, D"], idx: Tensor[i64, "N"], j: Tensor[i32, "N"], src: Tensor[f32, "N, D"],
      h: Tensor[f16, "N, D"], f: Tensor[f32, "N"], w: Tensor[f32, "N, D"], y: Tensor[f32, "V, D"]):
    for blk in split(V, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


def _rows_k(body: str) -> ir.Kernel:
    return tile_kernel(ROWS_HEAD, body, "rows.adsl")


def _rows_tensors(v: int = 7, n: int = 20, d: int = 5) -> dict[str, torch.Tensor]:
    idx = torch.randint(0, 3, (n,))  # rows 0..2 only: many repeats
    return {"x": torch.randn(v, d), "idx": idx, "j": idx.int(), "src": torch.randn(n, d), "h": torch.randn(n, d).half(),
            "f": torch.randn(n), "w": torch.randn(n, d), "y": torch.empty(v, d)}


def test_row_scatters_in_the_interpreter_are_torch_with_repeats_in_index_order():
    t = _rows_tensors()
    x, idx, src = t["x"], t["idx"], t["src"]
    cases = {
        "index_add(load(x[r, :]), idx, src, alpha=0.5)": torch.index_add(x, 0, idx, src, alpha=0.5),
        "index_add(load(x[r, :]), j, src)": torch.index_add(x, 0, idx, src),
        "index_put(load(x[r, :]), idx, src, accumulate=True)": x.index_put((idx,), src, accumulate=True),
    }
    for body, want in cases.items():
        interpreter.run(_rows_k(f"store(y[r, :], {body})"), t, num_cores=3, tile=2)
        assert torch.allclose(t["y"], want, atol=1e-5), body
    # copies with repeats: the last index entry naming a row wins (PyTorch leaves it unspecified)
    for call in ("index_copy(load(x[r, :]), idx, src)", "index_put(load(x[r, :]), idx, src)"):
        interpreter.run(_rows_k(f"store(y[r, :], {call})"), t, num_cores=3, tile=2)
        for row in range(7):
            hits = (idx == row).nonzero().flatten()
            assert torch.equal(t["y"][row], src[hits[-1]] if len(hits) else x[row]), (call, row)
    t["idx"] = torch.tensor([-1, -7, 2] * 6 + [0, 1])  # index_put: negative numbers count from the end
    interpreter.run(_rows_k("store(y[r, :], index_put(load(x[r, :]), idx, src, accumulate=True))"), t, num_cores=3,
                    tile=2)
    assert torch.allclose(t["y"], x.index_put((t["idx"],), src, accumulate=True), atol=1e-5)


@pytest.mark.parametrize("call,bad,low", [("index_add(load(x[r, :]), idx, src)", -1, 0),
                                          ("index_copy(load(x[r, :]), idx, src)", 7, 0),
                                          ("index_put(load(x[r, :]), idx, src)", -8, -7)])
def test_interpreter_reports_row_numbers_outside_the_destination(call, bad, low):
    t = _rows_tensors()
    t["idx"][5] = bad
    with pytest.raises(DslError) as e:
        interpreter.run(_rows_k(f"store(y[r, :], {call})"), t, num_cores=3, tile=2)
    d = e.value.diagnostics[0]
    assert d.code == "INDEX" and f"row number {bad} in 'idx' is outside [{low}, 7)" in d.message and d.span.line == 6


@pytest.mark.parametrize("body,code,needle", [
    ("index_add(load(x[r, :]), load(idx[r]), src)", "TYPE", "index is a tensor parameter named as is"),
    ("index_add(load(x[r, :]), f, src)", "TYPE", "'f' must be a 1-D i32 / i64 tensor of row numbers"),
    ("index_add(load(x[r, :]), idx, h)", "DTYPE-MISMATCH", "'h' holds f16, the rows f32"),
    ("index_add(load(x[r, :]), idx, f)", "INDEX", "'f' must be [N, D]"),
    ("index_copy(load(x[r, :]), idx, src, alpha=2.0)", "ARGS", "index_copy takes whole rows, an index tensor"),
    ("index_put(load(x[r, :]), idx, src, accumulate=1)", "ARGS", "accumulate= takes True or False"),
    ("index_add(load(x[r, :]), idx, src, alpha=load(x[r, :]))", "TYPE", "alpha= is a scalar"),
])
def test_row_scatter_misuse_is_a_located_error(body, code, needle):
    d = tile_error(ROWS_HEAD, f"store(y[r, :], {body})", "rows.adsl").diagnostics[0]
    assert d.code == code and needle in d.message and d.span.line == 6, (d.code, d.message)


def test_row_scatter_needs_a_row_loop_and_its_tensors_read_whole_only():
    flat = ROWS_HEAD.replace('"V, D"]):', '"V, D"], z: Tensor[f32, "M"]):').replace("split(V, cores=AIV)", "split(M, cores=AIV)")
    d = tile_error(flat, "store(z[r], index_add(load(z[r]), idx, src))", "rows.adsl").diagnostics[0]
    assert d.code == "UNSUPPORTED" and "runs in a row loop over one symbol" in d.message and d.span.line == 6
    with pytest.raises(DslError) as e:  # src also loaded as tiles: its GM view is the whole tensor
        square = ROWS_HEAD.replace('"N"]', '"V"]').replace('"N, D"]', '"V, D"]')
        lower(tile_kernel(square, "store(y[r, :], index_add(load(x[r, :]) + load(w[r, :]), idx, w))", "rows.adsl"),
              "ascend910b1", "rows.adsl")
    d = e.value.diagnostics[0]
    assert d.code == "UNSUPPORTED" and "'w' is read whole by index_add, so it cannot also be loaded" in d.message
    assert d.span.line == 6


def test_row_scatter_lowering_scans_the_index_in_order_and_traps_outside_the_rows():
    project, _ = lower(_rows_k("store(y[r, :], index_put(load(x[r, :]), j, src, accumulate=True))"), "ascend910b1",
                       "rows.adsl")
    code = project.files["k_kernel.cpp"]
    assert "jGm.SetGlobalBuffer((__gm__ int32_t*)j, static_cast<uint64_t>(jGmRows_));" in code
    assert "srcGm.SetGlobalBuffer((__gm__ float*)src, static_cast<uint64_t>(srcGmRows_) * rowLen_);" in code
    assert "for (int64_t k = 0; k < jGmRows_; ++k) {" in code
    assert "if (row < 0) { row += rowsV; }" in code and "if (row < 0 || row >= rowsV) { Trap(); }" in code
    assert "Add(yLocal[at], yLocal[at], reduceTmp_f32, static_cast<int32_t>(rowLen_));" in code
    assert "Muls(" not in code  # alpha 1: no scaling
    project, _ = lower(_rows_k("store(y[r, :], index_copy(load(x[r, :]), idx, src))"), "ascend910b1", "rows.adsl")
    code = project.files["k_kernel.cpp"]
    assert "DataCopy(yLocal[at], reduceTmp_f32, static_cast<uint32_t>(rowPitch_));" in code
    assert "row += rowsV" not in code  # index_copy: negative numbers are out of range


@pytest.mark.slow
def test_emulator_row_scatter_matches_torch_with_repeats_and_traps_outside_the_rows(tmp_path):
    """One compile (index_put accumulate=True of the gallery): repeats and negative numbers give PyTorch's sums;
    a number outside [-V, V) is TRAP (the kernel's Trap()), not a write into another row."""
    adsl = REPO / "examples/index/index_put_rows.adsl"
    kernel = load_file(adsl)[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    x, src = torch.randn(9, 13), torch.randn(30, 13)
    idx = torch.randint(-9, 9, (30,))
    idx[:6] = torch.tensor([2, -7, 2, 2, 8, -1])  # repeats of row 2 (as 2 and -7), row 8 (as 8 and -1)
    want = x.index_put((idx,), src, accumulate=True)
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx, src], [want]), work_dir=tmp_path)
    assert res.ok, res.summary() + res.detail
    for bad in (9, -10):
        idx2 = idx.clone()
        idx2[17] = bad
        res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx2, src], [x]), work_dir=tmp_path / str(bad))
        assert not res.ok and "TRAP" in [e.code for e in res.sim_errors], res.summary() + res.detail
