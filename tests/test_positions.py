"""Positions in row loops: `col_index()` / `row_index()`, whole i32 rows of column / row indices (tril, triu,
causal masks, position-dependent formulas)."""

from __future__ import annotations

import pytest
import torch
from dsl_snippets import first_tile, tile_error, tile_kernel

from ascend_dsl import interpreter, ir, printer
from lowering import lower
from npu_harness.task import TaskRun
from npu_harness.validate import validate_sim

HEAD = '''@kernel
def k(x: Tensor[f32, "B, N, M"], c: Tensor[i32, "B, N, M"], q: Tensor[i32, "B, N, M"], y: Tensor[f32, "B, N, M"]):
    for blk in split(B * N, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


def _k(body: str) -> ir.Kernel:
    return tile_kernel(HEAD, body, "pos.adsl")


def test_positions_are_whole_i32_rows_and_print_back():
    k = _k("store(c[r, :], col_index())\nstore(q[r, :], row_index())")
    col, row = (s.value for s in first_tile(k).body)
    assert col.type == row.type == ir.tile_of(ir.DType.I32, ir.Layout.ROWS)
    assert col.args == (ir.Ref("M", ir.scalar_of(ir.DType.I32)),)  # the row length
    assert row.args[0] == ir.Ref("N", ir.scalar_of(ir.DType.I32))  # the period: the rows' last dim
    text = printer.kernel(k)
    assert "store(c[r, :], col_index())" in text and "store(q[r, :], row_index())" in text


def test_interpreter_counts_columns_and_rows_along_the_last_row_dim():
    b, n, m = 3, 5, 7
    c, q = torch.full((b, n, m), -1, dtype=torch.int32), torch.full((b, n, m), -1, dtype=torch.int32)
    y = torch.empty(b, n, m)
    x = torch.randn(b, n, m)
    k = _k("store(c[r, :], col_index())\nstore(q[r, :], row_index())\n"
           "store(y[r, :], select(col_index() <= row_index() + 1, load(x[r, :]), 0.0))")
    interpreter.run(k, {"x": x, "c": c, "q": q, "y": y}, num_cores=2, tile=2 * m)  # 2 rows per tile, 2 cores
    assert torch.equal(c, torch.arange(m, dtype=torch.int32).expand(b, n, m))
    assert torch.equal(q, torch.arange(n, dtype=torch.int32).reshape(1, n, 1).expand(b, n, m))
    torch.testing.assert_close(y, torch.tril(x, diagonal=1))


@pytest.mark.parametrize("body,code,msg", [
    ("store(c[r, :], col_index(1))", "ARGS", "col_index() takes no arguments"),
    ("store(c[r, :], row_index(axis=1))", "ARGS", "row_index() takes no arguments"),
    ("store(y[r, :], col_index() + load(x[r, :]))", "DTYPE-MISMATCH", "operands have dtypes i32 and f32"),
    ("col_index = load(x[r, :])\nstore(y[r, :], col_index)", "DUPLICATE-NAME", "built-in col_index(...)"),
])
def test_position_errors_are_located(body, code, msg):
    e = tile_error(HEAD, body, "pos.adsl")
    d = e.diagnostics[0]
    assert d.code == code and msg in d.message, e.render()
    assert d.span.file == "pos.adsl" and d.span.line == 5


def test_positions_need_a_row_loop():
    head = '''@kernel
def k(x: Tensor[f32, "N"], y: Tensor[f32, "N"]):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
'''
    e = tile_error(head, "store(y[t], select(col_index() > 2, load(x[t]), 0.0))", "pos.adsl")
    d = e.diagnostics[0]
    assert d.code == "UNSUPPORTED" and "needs a row loop" in d.message and (d.span.line, d.span.col) == (5, 32)


def test_emitted_positions_whole_rows_and_chunks():
    project, ctx = lower(_k("store(c[r, :], col_index())\nstore(q[r, :], row_index())"), "ascend910b1", "pos.adsl")
    code = project.files["k_kernel.cpp"]
    # whole rows: a seed row per run of one period (the whole pitch), then doubling by Adds
    assert "CreateVecIndex(cLocal[a * rowPitch_], static_cast<int32_t>(0), static_cast<uint32_t>(rowPitch_));" in code
    assert "const uint64_t r = static_cast<uint64_t>(rowStart_ + tileRow_ + a) % " \
           "static_cast<uint64_t>(static_cast<int64_t>(N_));" in code
    assert "Duplicate(qLocal[a * rowPitch_], static_cast<int32_t>(r), static_cast<int32_t>(rowPitch_));" in code
    assert "Adds(qLocal[(a + h) * rowPitch_], qLocal[a * rowPitch_], static_cast<int32_t>(h), " \
           "static_cast<int32_t>(n * rowPitch_));" in code
    assert "Adds(cLocal[(a + h) * rowPitch_], cLocal[a * rowPitch_], 0, static_cast<int32_t>(n * rowPitch_));" in code
    assert "tileRow_ = offset;" in code and "rowStart_ = start;" in code
    tl = next(s for s in ir.walk(ctx.lowered.body) if isinstance(s, ir.TileLoop))
    assert isinstance(tl.shape.chunked, ir.ChunkPlan)  # rows longer than UB: per column chunk of the row
    assert "chunkCol_ = offset;" in code and "CreateVecIndex(cLocal, static_cast<int32_t>(chunkCol_), count);" in code
    assert "Duplicate(qLocal, static_cast<int32_t>((rowStart_ + rowOffset_ / rowLen_) % static_cast<int64_t>(N_)), " \
           "static_cast<int32_t>(count));" in code


def test_square_matrices_take_the_row_length_as_period():
    head = HEAD.replace('"B, N, M"', '"B, S, S"').replace("B * N", "B * S")
    project, _ = lower(tile_kernel(head, "store(q[r, :], row_index())", "pos.adsl"), "ascend910b1", "pos.adsl")
    code = project.files["k_kernel.cpp"]
    assert "% static_cast<uint64_t>(static_cast<int64_t>(rowLen_));" in code  # S is the row length: rowLen_ holds
    assert "% static_cast<int64_t>(rowLen_))" in code  # it (whole rows
    assert "static_cast<int64_t>(S_)" not in code  # and the chunked pass); S_ (every value symbol's member) is unread


@pytest.mark.slow
def test_emulator_positions_match_the_interpreter(tmp_path):
    """Several tiles per core, rows not a multiple of 32 bytes, matrices split across tiles and cores."""
    k = _k("store(c[r, :], col_index())\nstore(q[r, :], row_index())\n"
           "xt = load(x[r, :])\n"
           "store(y[r, :], cast(col_index() * 2 - row_index(), f32) * xt + select(row_index() < col_index(), xt, 0.0))")
    project, ctx = lower(k, "ascend910b1", "pos.adsl")
    assert "CreateVecIndex(mask" not in project.files["k_kernel.cpp"]
    b, n, m = 3, 29, 45
    x = torch.randn(b, n, m)
    cols = torch.arange(m, dtype=torch.int32).expand(b, n, m)
    rows = torch.arange(n, dtype=torch.int32).reshape(1, n, 1).expand(b, n, m)
    run = TaskRun([x], [cols.clone(), rows.clone(), (2 * cols - rows).float() * x + torch.triu(x, diagonal=1)])
    res = validate_sim(k, ctx.lowered, project, ctx, run, work_dir=tmp_path)
    assert res.ok, res.summary() + res.detail


@pytest.mark.slow
@pytest.mark.parametrize("b, n, m", [(600, 1, 64), (300, 2, 33), (3, 300, 20), (2, 700, 128)])
def test_doubled_runs_match_the_interpreter_at_any_period(b, n, m, tmp_path):
    """Runs of one row (period 1), runs of two, runs longer than a tile, runs split across tiles and cores."""
    k = _k("store(c[r, :], col_index())\nstore(q[r, :], row_index())\n"
           "store(y[r, :], select(col_index() - row_index() <= 1, load(x[r, :]), 0.0))")
    project, ctx = lower(k, "ascend910b1", "pos.adsl")
    x = torch.randn(b, n, m)
    cols = torch.arange(m, dtype=torch.int32).expand(b, n, m)
    rows = torch.arange(n, dtype=torch.int32).reshape(1, n, 1).expand(b, n, m)
    run = TaskRun([x], [cols.clone(), rows.clone(), torch.tril(x, diagonal=1)])
    res = validate_sim(k, ctx.lowered, project, ctx, run, work_dir=tmp_path)
    assert res.ok, res.summary() + res.detail


@pytest.mark.parametrize("mask,cmp", [("col_index() - row_index() <= 2", "LE"), ("col_index() <= row_index()", "LE"),
                                      ("row_index() < col_index()", "GT")])
def test_col_minus_row_is_one_index_vector_per_run(mask, cmp):
    """tril / triu / causal masks: j - i starts each run's first row at -i (one CreateVecIndex), the run's other
    rows by doubling (Adds of -h; no Duplicate, no Sub)."""
    project, ctx = lower(_k(f"store(y[r, :], select({mask}, load(x[r, :]), 0.0))"), "ascend910b1", "pos.adsl")
    code = project.files["k_kernel.cpp"]
    assert "CreateVecIndex(tmp0[a * rowPitch_], -static_cast<int32_t>(r), static_cast<uint32_t>(rowPitch_));" in code
    assert "Adds(tmp0[(a + h) * rowPitch_], tmp0[a * rowPitch_], -static_cast<int32_t>(h), " \
           "static_cast<int32_t>(n * rowPitch_));" in code
    assert "Duplicate(" not in code.split("Compute(uint32_t count)")[1].split("CopyOut(")[0]
    assert f"CMPMODE::{cmp}" in code
