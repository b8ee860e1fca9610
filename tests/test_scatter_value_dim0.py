"""scatter along dim 0 with a scalar value: `scatter(load(x[r, :]), index, value)` with index a named [N, D]
tensor (x.scatter(0, index, value)); the element scatter's source operand is the scalar (parser_scatter `named`),
lowered by the same owner-computes walk (lowering/emit/row_scatter.py `element_lines`)."""

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
def k(x: Tensor[f32, "V, D"], idx: Tensor[i64, "N, D"], j: Tensor[i32, "N, D"], y: Tensor[f32, "V, D"],
      value: f32 = 0.0):
    for blk in split(V, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


def _k(body: str) -> ir.Kernel:
    return tile_kernel(HEAD, body, "value.adsl")


def _tensors(v: int = 7, n: int = 20, d: int = 5) -> dict[str, torch.Tensor]:
    idx = torch.randint(0, v, (n, d))
    return {"x": torch.randn(v, d), "idx": idx, "j": idx.int(), "y": torch.empty(v, d)}


def test_scatter_value_types_as_the_element_scatter_with_a_scalar_source_and_prints_back():
    k = _k("store(y[r, :], scatter(load(x[r, :]), idx, value * 2.0))")
    (store,) = first_tile(k).body
    assert store.value.op == "scatter_dim0" and store.value.args[2].type.kind is ir.Kind.SCALAR
    assert "scatter(load(x[r, :]), idx, value * 2.0)" in printer.kernel(k)


def test_interpreter_is_torch_scatter_with_value():
    t = _tensors()
    for index in ("idx", "j"):
        interpreter.run(_k(f"store(y[r, :], scatter(load(x[r, :]), {index}, value))"), t, num_cores=3, tile=2,
                        scalars={"value": -2.5})
        assert torch.equal(t["y"], t["x"].scatter(0, t["idx"], -2.5)), index


@pytest.mark.parametrize("bad", [-1, 7])  # PyTorch refuses negative numbers here
def test_interpreter_reports_row_numbers_outside_the_destination(bad):
    t = _tensors()
    t["idx"][5, 3] = bad
    with pytest.raises(DslError) as e:
        interpreter.run(_k("store(y[r, :], scatter(load(x[r, :]), idx, 1.0))"), t, num_cores=3, tile=2)
    d = e.value.diagnostics[0]
    assert d.code == "INDEX" and f"row number {bad} in 'idx' is outside [0, 7)" in d.message and d.span.line == 6


@pytest.mark.parametrize("body,needle", [
    ("scatter_add(load(x[r, :]), idx, 1.0)", "source is a tensor named as is too"),  # torch has no scatter_add value=
    ("scatter(load(x[r, :]), idx, load(x[r, :]))", "or a scalar (scatter's value=)"),
])
def test_a_value_only_for_scatter_and_only_a_scalar(body, needle):
    d = tile_error(HEAD, f"store(y[r, :], {body})", "value.adsl").diagnostics[0]
    assert d.code == "TYPE" and needle in d.message and d.span.line == 6, (d.code, d.message)


def test_lowering_writes_the_scalar_and_reads_no_source_tensor():
    project, _ = lower(_k("store(y[r, :], scatter(load(x[r, :]), j, value))"), "ascend910b1", "value.adsl")
    code = project.files["k_kernel.cpp"]
    assert "if (row < 0 || row >= rowsV) { Trap(); }" in code and "row += rowsV" not in code
    assert "yLocal.SetValue(to, static_cast<float>(" in code
    assert "GetValue(at))" not in code.replace("jGm.GetValue(at))", "")  # no source tensor read


@pytest.mark.slow
def test_emulator_matches_torch_and_traps_outside_the_rows(tmp_path):
    """One compile of the gallery's scatter_value_dim0 (f16): repeats write the same value; -1 and V are TRAP."""
    adsl = REPO / "examples/index/scatter_value_dim0.adsl"
    kernel = load_file(adsl)[0].instantiate({"T": ir.DType.F16})
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    x, idx = torch.randn(9, 13).half(), torch.randint(0, 9, (30, 13))
    want = x.scatter(0, idx, 2.5)
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx], [want], attrs={"value": 2.5}),
                       work_dir=tmp_path)
    assert res.ok, res.summary() + res.detail
    for bad in (9, -1):
        idx2 = idx.clone()
        idx2[17, 5] = bad
        res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx2], [want], attrs={"value": 2.5}),
                           work_dir=tmp_path / str(bad))
        assert not res.ok and "TRAP" in [e.code for e in res.sim_errors], res.summary() + res.detail
