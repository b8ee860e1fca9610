"""gather along the last dim with K index columns per row (K != D): `gather(x, load(idx[r, :]))` with x named
[B, D] and idx [B, K] in a row loop over the output's rows (ascend_dsl/parser_select.py `_gather_last`, op
index_select_cols with whole rows of indices; lowering/emit/col_select.py)."""

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
def k(x: Tensor[f32, "B, D"], idx: Tensor[i64, "B, K"], j: Tensor[i32, "B, K"], f: Tensor[f32, "B, K"],
      w: Tensor[f32, "K"], y: Tensor[f32, "B, K"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


def _k(body: str) -> ir.Kernel:
    return tile_kernel(HEAD, body, "gather.adsl")


def _tensors(b: int = 5, d: int = 9, k: int = 4) -> dict[str, torch.Tensor]:
    idx = torch.randint(0, d, (b, k))
    return {"x": torch.randn(b, d), "idx": idx, "j": idx.int(), "f": torch.randn(b, k), "w": torch.randn(k),
            "y": torch.empty(b, k)}


def test_gather_by_narrower_rows_types_as_index_select_cols_and_prints_back():
    k = _k("store(y[r, :], gather(x, load(idx[r, :])) + load(f[r, :]))")
    (store,) = first_tile(k).body
    op = store.value.args[0]
    assert op.op == "index_select_cols" and op.args[0].type.layout is ir.Layout.ROWS
    assert "gather(x, load(idx[r, :])) + load(f[r, :])" in printer.kernel(k)


@pytest.mark.parametrize("k_len", [4, 13])  # fewer and more index columns than x's columns
def test_interpreter_is_torch_gather_on_the_last_dim(k_len):
    t = _tensors(k=k_len) | {"f": torch.randn(5, k_len), "w": torch.randn(k_len), "y": torch.empty(5, k_len)}
    for index in ("idx", "j"):
        interpreter.run(_k(f"store(y[r, :], gather(x, load({index}[r, :])) + load(f[r, :]))"), t, num_cores=2, tile=2)
        assert torch.equal(t["y"], torch.gather(t["x"], -1, t["idx"]) + t["f"]), index


@pytest.mark.parametrize("bad", [-1, 9])  # PyTorch's gather rejects negative numbers too
def test_interpreter_reports_columns_outside_x(bad):
    t = _tensors()
    t["idx"][3, 1] = bad
    with pytest.raises(DslError) as e:
        interpreter.run(_k("store(y[r, :], gather(x, load(idx[r, :])))"), t, num_cores=2, tile=2)
    d = e.value.diagnostics[0]
    assert d.code == "INDEX" and f"gather: column index {bad} is outside [0, 9) (the columns of 'x')" in d.message
    assert d.span.line == 6


def test_a_float_index_is_a_located_error():
    d = tile_error(HEAD, "store(y[r, :], gather(x, load(f[r, :])))", "gather.adsl").diagnostics[0]
    assert d.code == "TYPE" and "index along the last dim of a named tensor" in d.message and d.span.line == 6
    d = tile_error(HEAD, "store(y[r, :], gather(x, load(w[:])))", "gather.adsl").diagnostics[0]
    assert d.code == "TYPE" and d.span.line == 6, d.message


def test_gathering_from_loaded_rows_of_another_width_names_the_form():
    d = tile_error(HEAD, "store(y[r, :], gather(load(x[r, :]), load(idx[r, :])))", "gather.adsl").diagnostics[0]
    assert d.code == "INDEX" and "need one row shape" in d.message and d.span.line == 5
    assert "gather(x, load(idx[r, :])) for torch.gather(x, -1, idx)" in d.hint


def test_lowering_gathers_on_the_vector_unit_from_the_tiles_x_rows():
    """x's rows come in by one copy per tile (rows D + 1 padded apart), the index becomes clamped byte offsets on the
    vector unit, one Gather per row (lowering/passes/plan_gather_rows.py); no per-element scalar loop is left."""
    project, _ = lower(_k("store(y[r, :], gather(x, load(j[r, :])))"), "ascend910b1", "gather.adsl")
    code = project.files["k_kernel.cpp"]
    assert "CopyRowsGmToUb(xRows, xGm[(rowStart_ + offset) * static_cast<uint64_t>(D_)], count" in code
    assert "Maxs(gatherOffsets_rows, jLocal, static_cast<int32_t>(-1), count * rowPitch_);" in code  # i32: no Cast
    assert "Mins(gatherOffsets_rows, gatherOffsets_rows, static_cast<int32_t>(D_)" in code
    assert "Gather(yLocal[i * rowPitch_], xRows[i * ((D_ + 8) / 8 * 8)], gatherOffsets_rows[i * rowPitch_]" in code
    assert "GetValue" not in code.split("void Compute")[1].split("void CopyOut")[0]
    assert "(r * ((D + 8) / 8 * 8) * 4 + 31) / 32 * 32" in project.files["k_tiling.h"]  # the host counts x's rows


@pytest.mark.slow
@pytest.mark.parametrize("d", [37, 40])  # x rows with and without a partial 32-byte block
def test_emulator_matches_torch_and_reports_columns_outside_x(tmp_path, d):
    """One compile of the gallery's gather_narrow: fewer index columns than x's, repeats. An index >= D reads the
    row's never-written padding (UB-UNINIT when it reaches GM), a negative one leaves UB (UB-OOB); i64 indices
    beyond i32 saturate to the same."""
    adsl = REPO / "examples/index/gather_narrow.adsl"
    kernel = load_file(adsl)[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    x, idx = torch.randn(7, d), torch.randint(0, d, (7, 5))
    want = [torch.gather(x, -1, idx)]
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx], want), work_dir=tmp_path / "ok")
    assert res.ok, res.summary() + res.detail
    for bad, code in ((d, "UB-UNINIT"), (d + 9, "UB-UNINIT"), (2 ** 40, "UB-UNINIT"), (-1, "UB-OOB"),
                      (-(2 ** 40), "UB-OOB")):
        idx2 = idx.clone()
        idx2[4, 2] = bad
        res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx2], want), work_dir=tmp_path / str(bad))
        assert not res.ok and code in [e.code for e in res.sim_errors], (bad, res.summary() + res.detail)


HEAD3 = '''@kernel
def k(x: Tensor[f32, "A, K, D"], idx: Tensor[i64, "A, K, J"], y: Tensor[f32, "A, K, J"]):
    for blk in split(A * K, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


def test_over_two_split_symbols_the_last_dim_form_is_told_from_the_middle_dim_one_by_shape():
    """x [A, K, D] with idx [A, K, J]: x's last dim is not the loop's row, so the last dim (torch.gather(x, -1, idx));
    with idx [A, K, D] like x, the middle dim stays (torch.gather(x, 1, idx), the earlier form)."""
    last = tile_kernel(HEAD3, "store(y[r, :], gather(x, load(idx[r, :])))", "g3.adsl")
    assert first_tile(last).body[0].value.op == "index_select_cols"
    t = {"x": torch.randn(2, 3, 7), "idx": torch.randint(0, 7, (2, 3, 4)), "y": torch.empty(2, 3, 4)}
    interpreter.run(last, t, num_cores=2, tile=2)
    assert torch.equal(t["y"], torch.gather(t["x"], -1, t["idx"]))
    like_x = HEAD3.replace('"A, K, J"', '"A, K, D"')
    middle = tile_kernel(like_x, "store(y[r, :], gather(x, load(idx[r, :])))", "g3.adsl")
    assert first_tile(middle).body[0].value.op == "gather_middle"


@pytest.mark.slow
@pytest.mark.parametrize("target, index", [("ascend310p", "j"), ("ascend310p", "idx"), ("ascend910b1", "j")])
def test_emulator_matches_torch_on_both_targets_and_index_dtypes(tmp_path, target, index):
    """i32 indices on 310P and 910B gather on the vector unit; an i64 index on 310P (no Cast from int64) keeps the
    scalar path (Trap)."""
    kernel = _k(f"store(y[r, :], gather(x, load({index}[r, :])) + load(f[r, :]))")
    project, ctx = lower(kernel, target, "gather.adsl")
    assert ("xRows[i * " in project.files["k_kernel.cpp"]) is not (target == "ascend310p" and index == "idx")
    t = _tensors(b=11, d=21, k=6)
    want = [torch.gather(t["x"], -1, t["idx"]) + t["f"]]
    args = [t[n] for n in ("x", "idx", "j", "f", "w")]
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun(args, want), work_dir=tmp_path)
    assert res.ok, res.summary() + res.detail


@pytest.mark.slow
def test_x_rows_longer_than_ub_are_a_tiling_error_at_launch(tmp_path):
    """The tile's x rows sit in UB beside the loop's rows: an x row of 60,000 f32 (240 KB) does not fit UB, and the
    host tiling launches nothing (TILING, not a wrong result)."""
    kernel = _k("store(y[r, :], gather(x, load(j[r, :])))")
    project, ctx = lower(kernel, "ascend910b1", "gather.adsl")
    t = _tensors(b=2, d=60000, k=3)
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([t[n] for n in ("x", "idx", "j", "f", "w")],
                                                                  [torch.gather(t["x"], -1, t["idx"])]),
                       work_dir=tmp_path)
    assert not res.ok and [e.code for e in res.sim_errors] == ["TILING"], res.summary() + res.detail


TWO_LOOPS = '''@kernel
def k(x: Tensor[f16, "B, D"], idx: Tensor[i32, "B, K"], f: Tensor[f16, "B, K"], y: Tensor[f16, "B, K"],
      z: Tensor[f16, "B, K"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], load(f[r, :]) * 2.0 + gather(x, load(idx[r, :])))
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(z[r, :], gather(x, load(idx[r, :])))
'''


@pytest.mark.slow
def test_a_later_loop_sizes_its_x_rows_from_the_member_and_matches_torch(tmp_path):
    """A second split loop carves UB in Process, where the tiling struct is out of scope (fuzz seed 3330)."""
    from ascend_dsl.parser import parse_text
    kernel = parse_text(TWO_LOOPS, "two.adsl")[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1", "two.adsl")
    assert "tileLength1_ * ((D_ + 16) / 16 * 16) * sizeof(half)" in project.files["k_kernel.cpp"]
    x, idx, f = torch.randn(9, 45).half(), torch.randint(0, 45, (9, 7), dtype=torch.int32), torch.randn(9, 7).half()
    picked = torch.gather(x, -1, idx.long())
    want = [f * 2 + picked, picked]
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx, f], want), work_dir=tmp_path)
    assert res.ok, res.summary() + res.detail
