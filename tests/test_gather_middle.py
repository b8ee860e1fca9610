"""Gathers along a middle dim under `split(A * K)`: whole rows `load(x[idx[r], :])` of x [A, R, C] (index_select(x, 1, idx)
with idx [K]; take_along_dim(x, idx[..., None], 1) with idx [A, K]; lowering/emit/row_gather.py `group_copy_in_lines`),
and single elements `gather(x, load(e[r, :]))` with x named (torch.gather(x, 1, e), e [A, K, C];
lowering/emit/col_select.py `middle_lines`)."""

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
def k(x: Tensor[f32, "A, R, C"], sel: Tensor[i64, "K"], per: Tensor[i32, "A, K"], bad: Tensor[i64, "R"],
      w: Tensor[f32, "A, R, E"], e: Tensor[i64, "A, K, C"], y: Tensor[f32, "A, K, C"]):
    for blk in split(A * K, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


def _k(body: str) -> ir.Kernel:
    return tile_kernel(HEAD, body, "middle.adsl")


def _tensors(a: int = 3, r: int = 6, c: int = 5, k: int = 4) -> dict[str, torch.Tensor]:
    return {"x": torch.randn(a, r, c), "sel": torch.tensor([5, 0, 5, 2])[:k], "per": torch.randint(-r, r, (a, k)).int(),
            "bad": torch.zeros(r, dtype=torch.int64), "w": torch.randn(a, r, 2), "e": torch.randint(0, r, (a, k, c)),
            "y": torch.empty(a, k, c)}


def test_gather_along_a_middle_dim_is_whole_rows_and_prints_back():
    k = _k("store(y[r, :], load(x[sel[r], :]))")
    (store,) = first_tile(k).body
    assert store.value.index.group == ir.GroupGather("K", "R", "C", True)
    assert "load(x[sel[r], :])" in printer.kernel(k)
    (store,) = first_tile(_k("store(y[r, :], load(x[per[r], :]))")).body
    assert store.value.index.group == ir.GroupGather("K", "R", "C", False)


def test_interpreter_is_index_select_and_take_along_dim():
    t = _tensors()
    interpreter.run(_k("store(y[r, :], load(x[sel[r], :]))"), t, num_cores=2, tile=3)
    assert torch.equal(t["y"], torch.index_select(t["x"], 1, t["sel"]))
    interpreter.run(_k("store(y[r, :], load(x[per[r], :]) * 2.0)"), t, num_cores=2, tile=3)
    assert torch.equal(t["y"], torch.take_along_dim(t["x"], t["per"].long().unsqueeze(-1), dim=1) * 2.0)


@pytest.mark.parametrize("value", [6, -7])
def test_interpreter_reports_numbers_outside_the_middle_dim(value):
    t = _tensors()
    t["sel"][2] = value
    with pytest.raises(DslError) as e:
        interpreter.run(_k("store(y[r, :], load(x[sel[r], :]))"), t, num_cores=2, tile=3)
    d = e.value.diagnostics[0]
    assert d.code == "INDEX" and f"row number {value} is outside [-6, 6) (dim R of 'x')" in d.message
    assert d.span.line == 6


@pytest.mark.parametrize("body,needle", [
    ("store(y[r, :], load(x[bad[r], :]))", "the index tensor 'bad' holds a row number per row of the loop [A, K]"),
    ("store(y[r, :], load(w[sel[r], :]))", "gathers along dim 1 of a tensor [A, R, C]; 'w' has shape"),
])
def test_misuse_is_a_located_error(body, needle):
    d = tile_error(HEAD, body, "middle.adsl").diagnostics[0]
    assert d.code == "INDEX" and needle in d.message and d.span.line == 6, d.message


def test_lowering_reads_the_number_per_k_and_offsets_by_the_group():
    project, _ = lower(_k("store(y[r, :], load(x[sel[r], :]))"), "ascend910b1", "middle.adsl")
    code = project.files["k_kernel.cpp"]
    assert "selGm.SetGlobalBuffer((__gm__ int64_t*)sel, tiling.K);" in code
    assert "int64_t row = static_cast<int64_t>(selGm.GetValue(g % static_cast<uint64_t>(xGmGroup_)));" in code
    assert "if (row < 0) { row += static_cast<int64_t>(xGmRows_); }" in code
    assert "(g / static_cast<uint64_t>(xGmGroup_)) * static_cast<uint64_t>(xGmRows_)" in code
    assert "if (row < 0 || row >= xGmRows_) { Trap(); }" in code
    code = lower(_k("store(y[r, :], load(x[per[r], :]))"), "ascend910b1", "middle.adsl")[0].files["k_kernel.cpp"]
    assert "perGm.GetValue(offset + i)" in code  # [A, K]: the index is split with the rows


@pytest.mark.slow
def test_emulator_matches_torch_and_traps_numbers_outside_the_middle_dim(tmp_path):
    """One compile of the gallery's index_select_dim1; a number outside [-R, R) would read another batch's row
    (no GM bound crossed): the kernel's Trap() makes it visible (TRAP)."""
    adsl = REPO / "examples/index/index_select_dim1.adsl"
    kernel = load_file(adsl)[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    x, idx = torch.randn(3, 9, 40), torch.tensor([8, 0, 3, 3, -1])
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx], [x[:, idx]]), work_dir=tmp_path / "ok")
    assert res.ok, res.summary() + res.detail
    for bad in (9, -10):
        idx2 = idx.clone()
        idx2[1] = bad
        res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx2], [x[:, idx]]),
                           work_dir=tmp_path / str(bad))
        assert not res.ok and "TRAP" in [e.code for e in res.sim_errors], res.summary() + res.detail


# ----------------------------------------------------------------------------- single elements (torch.gather)
def test_element_gather_along_the_middle_dim_is_torch_gather_and_prints_back():
    k = _k("store(y[r, :], gather(x, load(e[r, :])) + 1.0)")
    assert "gather(x, load(e[r, :])) + 1.0" in printer.kernel(k)
    t = _tensors()
    interpreter.run(k, t, num_cores=2, tile=3)
    assert torch.equal(t["y"], torch.gather(t["x"], 1, t["e"]) + 1.0)


@pytest.mark.parametrize("value", [-1, 6])
def test_interpreter_reports_element_indices_outside_the_middle_dim(value):
    t = _tensors()
    t["e"][1, 2, 3] = value
    with pytest.raises(DslError) as e:
        interpreter.run(_k("store(y[r, :], gather(x, load(e[r, :])))"), t, num_cores=2, tile=3)
    d = e.value.diagnostics[0]
    assert d.code == "INDEX" and f"index {value} is outside [0, 6) (the middle dim of 'x')" in d.message
    assert d.span.line == 6


@pytest.mark.parametrize("body,code,needle", [
    ("store(y[r, :], gather(w, load(e[r, :])))", "INDEX", "reads a tensor [A, R, C]; 'w' has shape"),
    ("store(y[r, :], gather(x, load(sel[r])))", "TYPE", "index along a middle dim is i32 / i64 whole rows"),
])
def test_element_gather_misuse_is_a_located_error(body, code, needle):
    d = tile_error(HEAD, body, "middle.adsl").diagnostics[0]
    assert d.code == code and needle in d.message and d.span.line == 6, (d.code, d.message)


def test_element_gather_lowering_reads_x_whole_and_traps_outside_the_middle_dim():
    """With more work in the loop than the gather (`+ 1.0`) the scalar walk stays (lowering/passes/
    plan_gather_middle.py takes the gather alone; tests/test_gather_middle_vec.py)."""
    code = lower(_k("store(y[r, :], gather(x, load(e[r, :])) + 1.0)"), "ascend910b1", "middle.adsl")[0].files["k_kernel.cpp"]
    assert "xGm.SetGlobalBuffer((__gm__ float*)x, static_cast<uint64_t>(tiling.A) * static_cast<uint64_t>(tiling.R) * " \
        "static_cast<uint64_t>(tiling.C));" in code
    assert "{ Trap(); }  // outside the middle dim: stop" in code
    assert "xGm.GetValue((first + static_cast<uint64_t>(n)) * rowLen_ + c)" in code


@pytest.mark.slow
def test_emulator_element_gather_matches_torch_and_traps_outside_the_middle_dim(tmp_path):
    adsl = REPO / "examples/index/gather_middle.adsl"
    kernel = load_file(adsl)[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    x, idx = torch.randn(3, 9, 40), torch.randint(0, 9, (3, 5, 40))
    want = torch.gather(x, 1, idx)
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx], [want]), work_dir=tmp_path / "ok")
    assert res.ok, res.summary() + res.detail
    for bad in (9, -1):
        idx2 = idx.clone()
        idx2[1, 2, 30] = bad
        res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx2], [want]), work_dir=tmp_path / str(bad))
        assert not res.ok and "TRAP" in [e.code for e in res.sim_errors], res.summary() + res.detail
