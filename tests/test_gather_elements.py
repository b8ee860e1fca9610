"""Element gather along the last dim: `gather(rows, load(idx[r, :]))`, torch.gather(x, 1, idx) with idx shaped
like x (the vector Gather per row, at i32 byte offsets)."""

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
      f: Tensor[f32, "B, D"], c: Tensor[i64, "D"], y: Tensor[f32, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


def _k(body: str) -> ir.Kernel:
    return tile_kernel(HEAD, body, "gather.adsl")


def test_whole_rows_of_indices_gather_whole_rows():
    k = _k("store(y[r, :], gather(load(x[r, :]), load(i[r, :])) * 2.0)")
    (store,) = first_tile(k).body
    assert store.value.args[0].type == ir.tile_of(ir.DType.F32, ir.Layout.ROWS)
    assert "gather(load(x[r, :]), load(i[r, :]))" in printer.kernel(k)


def test_interpreter_is_torch_gather_and_reports_indices_outside_the_row():
    x, idx = torch.randn(5, 9), torch.randint(0, 9, (5, 9))
    tensors = {"x": x, "h": x.half(), "i": idx, "j": idx.int(), "f": x, "c": idx[0], "y": torch.empty(5, 9)}
    k = _k("store(y[r, :], gather(load(x[r, :]), load(j[r, :])))")
    interpreter.run(k, tensors, num_cores=2, tile=18)
    assert torch.equal(tensors["y"], torch.gather(x, 1, idx))
    for bad in (9, -1):  # torch.gather rejects negative indices too
        tensors["j"] = idx.int().clone()
        tensors["j"][3, 4] = bad
        with pytest.raises(DslError) as e:
            interpreter.run(k, tensors, num_cores=2, tile=18)
        d = e.value.diagnostics[0]
        assert d.code == "INDEX" and f"column index {bad} is outside the rows' [0, 9)" in d.message and d.span.line == 6


def test_index_must_be_integer_rows_or_per_row_values():
    e = tile_error(HEAD, "store(y[r, :], gather(load(x[r, :]), load(f[r, :])))", "gather.adsl")
    d = e.diagnostics[0]
    assert d.code == "TYPE" and "one per element (whole rows" in d.message and d.span.line == 6
    assert "the same columns for every row" in d.message


def test_lowering_converts_indices_to_byte_offsets_and_copies_each_row_first():
    project, _ = lower(_k("store(y[r, :], gather(load(x[r, :]), load(i[r, :])))"), "ascend910b1", "gather.adsl")
    code = project.files["k_kernel.cpp"]
    assert "Cast(tmp0, iLocal, RoundMode::CAST_NONE, count * rowPitch_);" in code  # int64 -> int32 (A2)
    assert "Muls(tmp0, tmp0, 4, count * rowPitch_);" in code  # bytes of f32
    assert "DataCopy(reduceTmp_f32, xLocal[i * rowPitch_], static_cast<uint32_t>(rowPitch_));" in code
    assert "Gather(yLocal[i * rowPitch_], reduceTmp_f32, tmp0[i * rowPitch_].ReinterpretCast<uint32_t>(), 0u, " \
           "static_cast<uint32_t>(rowLen_));" in code


def test_i64_indices_on_310p_are_a_located_error():
    with pytest.raises(DslError) as e:
        lower(_k("store(y[r, :], gather(load(x[r, :]), load(i[r, :])))"), "ascend310p", "gather.adsl")
    d = e.value.diagnostics[0]
    assert d.code == "UNSUPPORTED" and "no vector Cast from int64" in d.message and d.span.line == 6
    lower(_k("store(y[r, :], gather(load(x[r, :]), load(j[r, :])))"), "ascend310p", "gather.adsl")  # i32: fine


def test_one_index_row_gathers_the_same_columns_of_every_row():
    """index_select(x, -1, c) with as many indices as columns: gather(rows, load(c[:]))."""
    x, c = torch.randn(5, 9), torch.tensor([8, 0, 0, 3, 2, 7, 7, 1, 4])
    k = _k("store(y[r, :], gather(load(x[r, :]), load(c[:])) + 1.0)")
    (store,) = first_tile(k).body
    assert store.value.args[0].type == ir.tile_of(ir.DType.F32, ir.Layout.ROWS)
    tensors = {"x": x, "h": x.half(), "i": c.expand(5, 9), "j": c.expand(5, 9).int(), "f": x, "c": c,
               "y": torch.empty(5, 9)}
    interpreter.run(k, tensors, num_cores=2, tile=18)
    assert torch.equal(tensors["y"], torch.index_select(x, -1, c) + 1.0)
    tensors["c"] = torch.tensor([0, 1, 2, 3, 4, 5, 6, 7, 9])
    with pytest.raises(DslError) as e:
        interpreter.run(k, tensors, num_cores=2, tile=18)
    assert e.value.diagnostics[0].code == "INDEX" and "column index 9 is outside" in e.value.diagnostics[0].message
    code = lower(k, "ascend910b1", "gather.adsl")[0].files["k_kernel.cpp"]
    assert ".ReinterpretCast<uint32_t>(), 0u, static_cast<uint32_t>(rowLen_));" in code  # one offset row for every row
    assert "[i * rowPitch_].ReinterpretCast" not in code


@pytest.mark.slow
@pytest.mark.parametrize("bad,code", [(77, "UB-UNINIT"), (-1, "UB-OOB")])
def test_emulator_reports_a_column_outside_the_row_of_one_index_row(bad, code, tmp_path):
    adsl = REPO / "examples/index/index_select_last.adsl"
    kernel = load_file(adsl)[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    x = torch.randn(3, 5, 77)
    c = torch.randperm(77)
    c[10] = bad
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, c], [x]), work_dir=tmp_path)
    assert not res.ok and [e.code for e in res.sim_errors] == [code], res.summary() + res.detail


@pytest.mark.slow
@pytest.mark.parametrize("bad,code", [(37, "UB-UNINIT"), (-1, "UB-OOB"), (200, "UB-OOB")])
def test_emulator_reports_an_index_outside_the_row(bad, code, tmp_path):
    """Past the row: its padding (never written) reaches GM, or Gather reads outside the row scratch; never the next
    row's data."""
    adsl = REPO / "examples/index/gather_dim1.adsl"
    kernel = load_file(adsl)[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    x = torch.randn(5, 37)
    idx = torch.randint(0, 37, (5, 37))
    idx[1, 3] = bad
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx], [x]), work_dir=tmp_path)
    assert not res.ok and [e.code for e in res.sim_errors] == [code], res.summary() + res.detail
