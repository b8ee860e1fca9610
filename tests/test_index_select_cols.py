"""index_select along the last dim with any number of indices: `index_select(x, load(idx[:]))` in a row loop over the
output's rows, x read whole (ascend_dsl/parser_select.py, lowering/emit/col_select.py)."""

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
def k(x: Tensor[f32, "B, D"], idx: Tensor[i64, "K"], j: Tensor[i32, "K"], f: Tensor[f32, "K"],
      z: Tensor[f32, "Q, D"], y: Tensor[f32, "B, K"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


def _k(body: str) -> ir.Kernel:
    return tile_kernel(HEAD, body, "select.adsl")


def _tensors(b: int = 5, d: int = 9, k: int = 13) -> dict[str, torch.Tensor]:
    idx = torch.randint(0, d, (k,))
    return {"x": torch.randn(b, d), "idx": idx, "j": idx.int(), "f": torch.randn(k), "z": torch.randn(2, d),
            "y": torch.empty(b, k)}


def test_index_select_types_as_whole_rows_of_the_loop_and_prints_back():
    k = _k("store(y[r, :], index_select(x, load(idx[:])) + load(f[:]))")
    (store,) = first_tile(k).body
    assert store.value.args[0].op == "index_select_cols"
    assert store.value.type == ir.tile_of(ir.DType.F32, ir.Layout.ROWS)
    assert "index_select(x, load(idx[:])) + load(f[:])" in printer.kernel(k)


@pytest.mark.parametrize("k_len", [4, 13])  # fewer and more indices than columns
def test_interpreter_is_torch_index_select(k_len):
    t = _tensors(k=k_len) | {"f": torch.randn(k_len)}
    for index in ("idx", "j"):
        interpreter.run(_k(f"store(y[r, :], index_select(x, load({index}[:])) + load(f[:]))"), t, num_cores=2, tile=2)
        assert torch.equal(t["y"], torch.index_select(t["x"], 1, t["idx"]) + t["f"]), index


@pytest.mark.parametrize("bad", [-1, 9])
def test_interpreter_reports_columns_outside_x(bad):
    t = _tensors()
    t["idx"][3] = bad
    with pytest.raises(DslError) as e:
        interpreter.run(_k("store(y[r, :], index_select(x, load(idx[:])))"), t, num_cores=2, tile=2)
    d = e.value.diagnostics[0]
    assert d.code == "INDEX" and f"column index {bad} is outside [0, 9) (the columns of 'x')" in d.message
    assert d.span.line == 6


@pytest.mark.parametrize("body,code,needle", [
    ("store(y[r, :], index_select(x, load(j[:])) + index_select(load(x[r, :]), load(idx[:])))", "TYPE",
     "a tensor parameter named as is"),
    ("store(y[r, :], index_select(x, load(j[:])) + index_select(z, load(idx[:])))", "INDEX",
     "a tensor [B, D] (the loop's rows"),
    ("store(y[r, :], index_select(x, load(f[:])))", "TYPE", "index is one i32 / i64 row"),
    ("store(y[r, :], index_select(x, load(idx[:]), 1))", "ARGS", "index_select takes a tensor (by name)"),
])
def test_misuse_is_a_located_error(body, code, needle):
    d = tile_error(HEAD, body, "select.adsl").diagnostics[0]
    assert d.code == code and needle in d.message and d.span.line == 6, (d.code, d.message)


def test_without_index_select_a_table_of_another_row_length_names_it():
    d = tile_error(HEAD, "store(y[r, :], load(f[:]))", "select.adsl").diagnostics[0]
    assert d.code == "INDEX" and "need one row shape" in d.message and d.span.line == 5
    assert "index_select(x, load(idx[:]))" in d.hint


def test_the_table_is_read_whole_only():
    with pytest.raises(DslError) as e:
        lower(_k("store(y[r, :], index_select(x, load(idx[:])) + load(x[r, :]))"), "ascend910b1", "select.adsl")
    d = e.value.diagnostics[0]
    assert d.code == "UNSUPPORTED" and "'x' is read whole by index_select" in d.message and d.span.line == 6


def test_lowering_reads_the_tiles_x_rows_and_gathers_by_one_offset_row():
    """x's GM view stays whole, the tile's rows come in by one copy; the one index row becomes clamped byte offsets
    (every tile row gathers by the same offsets: no per-row offset) (lowering/passes/plan_gather_rows.py)."""
    project, _ = lower(_k("store(y[r, :], index_select(x, load(j[:])))"), "ascend910b1", "select.adsl")
    code = project.files["k_kernel.cpp"]
    assert "xGm.SetGlobalBuffer((__gm__ float*)x, static_cast<uint64_t>(tiling.B) * static_cast<uint64_t>(tiling.D));" \
        in code
    assert "CopyRowsGmToUb(xRows, xGm[(rowStart_ + offset) * static_cast<uint64_t>(D_)]" in code
    assert "Mins(gatherOffsets_row, gatherOffsets_row, static_cast<int32_t>(D_), rowPitch_);" in code
    assert "gatherOffsets_row.ReinterpretCast<uint32_t>(), 0u, static_cast<uint32_t>(rowLen_));" in code
    assert "Trap()" not in code


@pytest.mark.slow
def test_emulator_matches_torch_and_reports_columns_outside_x(tmp_path):
    """One compile of the gallery's index_select_cols: more indices than columns, repeats; an index >= D reads the
    rows' never-written padding (UB-UNINIT at the copy-out), a negative one leaves UB (UB-OOB)."""
    adsl = REPO / "examples/index/index_select_cols.adsl"
    kernel = load_file(adsl)[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    x, idx = torch.randn(7, 3, 10), torch.randint(0, 10, (25,))
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx], [x[..., idx]]), work_dir=tmp_path / "ok")
    assert res.ok, res.summary() + res.detail
    for bad, code in ((10, "UB-UNINIT"), (10 ** 6, "UB-UNINIT"), (-1, "UB-OOB")):
        idx2 = idx.clone()
        idx2[11] = bad
        res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx2], [x[..., idx]]),
                           work_dir=tmp_path / str(bad))
        assert not res.ok and code in [e.code for e in res.sim_errors], (bad, res.summary() + res.detail)
