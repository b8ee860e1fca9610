"""Rows read through an index tensor: `load(w[idx[r], :])` (embedding lookups, x[idx], index_select on dim 0)."""

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
def k(x: Tensor[f32, "B, D"], w: Tensor[f32, "V, D"], idx: Tensor[i64, "B"], f: Tensor[f32, "B"],
      y: Tensor[f32, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


def _k(body: str) -> ir.Kernel:
    return tile_kernel(HEAD, body, "gather.adsl")


def test_row_gather_is_whole_rows_indexed_by_a_tensor():
    k = _k("store(y[r, :], load(w[idx[r], :]) + load(x[r, :]))")
    (store,) = first_tile(k).body
    gathered = store.value.args[0]
    assert isinstance(gathered, ir.Load) and gathered.index.by == "idx" and gathered.type.layout is ir.Layout.ROWS
    assert "load(w[idx[r], :])" in printer.kernel(k)


def test_interpreter_picks_rows_and_counts_negative_numbers_from_the_end():
    w, x = torch.randn(5, 7), torch.randn(9, 7)
    idx = torch.tensor([0, 4, -1, -5, 2, 2, 3, 1, 0])
    y = torch.empty(9, 7)
    interpreter.run(_k("store(y[r, :], load(w[idx[r], :]) * load(x[r, :]))"),
                    {"x": x, "w": w, "idx": idx, "f": torch.zeros(9), "y": y}, num_cores=4, tile=2)
    torch.testing.assert_close(y, w[idx] * x)


@pytest.mark.parametrize("bad", [5, -6])
def test_interpreter_reports_row_numbers_out_of_range(bad):
    idx = torch.tensor([0, bad, 1])
    with pytest.raises(DslError) as e:
        interpreter.run(_k("store(y[r, :], load(w[idx[r], :]))"),
                        {"x": torch.zeros(3, 4), "w": torch.zeros(5, 4), "idx": idx, "f": torch.zeros(3),
                         "y": torch.empty(3, 4)}, num_cores=2, tile=2)
    d = e.value.diagnostics[0]
    assert d.code == "INDEX" and f"row number {bad} is outside [-5, 5)" in d.message and d.span.line == 6


@pytest.mark.parametrize("body,code,msg", [
    ("store(w[idx[r], :], load(x[r, :]))", "UNSUPPORTED", "storing into rows chosen by an index tensor is not supported"),
    ("store(y[r, :], load(w[f[r], :]))", "TYPE", "row numbers are i32 or i64"),
    ("store(y[r, :], load(w[idx[r]]))", "INDEX", "an index tensor picks whole rows"),
    ("store(y[r, :], load(w[idx[r + 1], :]))", "INDEX", "read at the tile's rows"),
    ("store(y[r, :], load(f[idx[r], :]))", "INDEX", "needs a tensor [V, D]"),
    ("store(y[r, :], load(w[y[r], :]))", "TYPE", "row numbers are i32 or i64"),
    ("store(y[r, :], load(w[nope[r], :]))", "UNDEFINED-NAME", "'nope' is not defined"),
])
def test_row_gather_errors_are_located(body, code, msg):
    e = tile_error(HEAD, body, "gather.adsl")
    d = e.diagnostics[0]
    assert d.code == code and msg in d.message, e.render()
    assert d.span.file == "gather.adsl" and d.span.line == 6


def test_index_tensor_must_run_over_the_rows():
    head = HEAD.replace('idx: Tensor[i64, "B"]', 'idx: Tensor[i64, "V"]')
    e = tile_error(head, "store(y[r, :], load(w[idx[r], :]))", "gather.adsl")
    assert e.diagnostics[0].code == "INDEX" and "one row number per row of the loop (B)" in e.diagnostics[0].message


def test_row_gather_needs_a_row_loop():
    head = '''@kernel
def k(w: Tensor[f32, "V, D"], idx: Tensor[i64, "N"], y: Tensor[f32, "N"]):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
'''
    e = tile_error(head, "store(y[t], load(w[idx[t], :]))", "gather.adsl")
    assert e.diagnostics[0].code == "INDEX" and "needs a row loop" in e.diagnostics[0].message


def test_a_gathered_tensor_is_not_also_read_as_tiles():
    head = HEAD.replace('w: Tensor[f32, "V, D"]', 'w: Tensor[f32, "B, D"]')
    k = tile_kernel(head, "store(y[r, :], load(w[idx[r], :]) + load(w[r, :]))", "gather.adsl")
    with pytest.raises(DslError) as e:
        lower(k, "ascend910b1", "gather.adsl")
    d = e.value.diagnostics[0]
    assert d.code == "UNSUPPORTED" and "read through an index tensor elsewhere" in d.message and d.span.line == 6


def test_rows_longer_than_ub_run_in_chunks_of_the_picked_row():
    project, ctx = lower(_k("xt = load(w[idx[r], :])\nstore(y[r, :], xt / sum(xt, axis=1))"), "ascend910b1",
                         "gather.adsl")
    tl = next(s for s in ir.walk(ctx.lowered.body) if isinstance(s, ir.TileLoop))
    assert isinstance(tl.shape.chunked, ir.ChunkPlan) and len(tl.shape.chunked.passes) == 2
    code = project.files["k_kernel.cpp"]
    assert code.count("int64_t row = static_cast<int64_t>(idxGm.GetValue(rowOffset_ / rowLen_));") == 2  # per pass
    assert "CopyGmToUb(wLocal, wGm[static_cast<uint64_t>(row) * rowLen_ + offset], count);" in code


def test_emitted_copy_reads_the_row_number_and_wraps_negative_ones():
    kernel = load_file(REPO / "examples/index/embedding.adsl")[0].instantiate()
    project, _ = lower(kernel, "ascend910b1", "embedding.adsl")
    code = project.files["embedding_kernel.cpp"]
    assert "int64_t row = static_cast<int64_t>(indicesGm.GetValue(offset + i));" in code
    assert "if (row < 0) { row += static_cast<int64_t>(embedding_weightGmRows_); }" in code
    assert "embedding_weightGm.SetGlobalBuffer((__gm__ float*)embedding_weight, " \
           "static_cast<uint64_t>(embedding_weightGmRows_) * rowLen_);" in code


@pytest.mark.slow
@pytest.mark.parametrize("bad", [11, -12])
def test_emulator_reports_a_row_number_out_of_range(bad, tmp_path):
    """The copy of a row outside the table is a GM bounds error of the emulator, not a crash or garbage."""
    kernel = load_file(REPO / "examples/index/embedding.adsl")[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1", "embedding.adsl")
    w = torch.randn(11, 33)
    idx = torch.tensor([0, 3, bad, 10, 1] * 5)
    run = TaskRun([idx], [torch.zeros(25, 33)], params={"embedding_weight": w})
    res = validate_sim(kernel, ctx.lowered, project, ctx, run, work_dir=tmp_path)
    assert not res.ok and any(e.code == "GM-OOB" for e in res.sim_errors), res.summary() + res.detail
    assert "embedding_weight" in res.detail or "GM" in res.detail
