"""argmax / argmin over whole rows: the i64 column of each row's first max / min (PyTorch's tie rule)."""

from __future__ import annotations

import pytest
import torch
from dsl_snippets import first_tile, tile_error, tile_kernel

from ascend_dsl import interpreter, ir, printer
from lowering import lower

HEAD = '''@kernel
def k(x: Tensor[f32, "B, D"], h: Tensor[f16, "B, D"], b: Tensor[bf16, "B, D"], y: Tensor[i64, "B"],
      z: Tensor[f32, "B"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


def _k(body: str) -> ir.Kernel:
    return tile_kernel(HEAD, body, "arg.adsl")


def test_argmax_is_one_i64_per_row_and_prints_back():
    k = _k("store(y[r], argmax(load(x[r, :]), axis=1))")
    (store,) = first_tile(k).body
    assert store.value.type == ir.tile_of(ir.DType.I64, ir.Layout.COL)
    assert "argmax(load(x[r, :]), axis=1)" in printer.kernel(k)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_interpreter_takes_the_first_of_tied_extremes(op):
    x = torch.tensor([[1.0, 3.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0], [2.0, -1.0, 2.0, -1.0]])
    y = torch.full((3,), -7, dtype=torch.int64)
    interpreter.run(_k(f"store(y[r], {op}(load(x[r, :]), axis=1))"),
                    {"x": x, "h": x.half(), "b": x.bfloat16(), "y": y, "z": torch.zeros(3)}, num_cores=2, tile=1)
    assert y.tolist() == getattr(torch, op)(x, dim=1).tolist() == ([1, 0, 0] if op == "argmax" else [3, 0, 1])


@pytest.mark.parametrize("body,code,msg", [
    ("store(y[r], argmax(load(x[r, :]), axis=0))", "UNSUPPORTED", "last axis of a row tile"),
    ("store(y[r], argmax(load(x[r, :])))", "ARGS", "takes one value and axis="),
    ("store(y[r], argmax(load(b[r, :]), axis=1))", "DTYPE-UNSUPPORTED", "'argmax' does not support bf16"),
    ("store(z[r], argmin(load(x[r, :]), axis=1))", "DTYPE-MISMATCH", "storing i64 into 'z'"),
    ("store(y[r], argmax(load(x[r, :]), axis=1) + 1)", "DTYPE-UNSUPPORTED", "'add' does not support i64"),
    ("store(y[r], argmax(argmax(load(x[r, :]), axis=1), axis=1))", "TYPE", "needs whole rows"),
])
def test_argmax_errors_are_located(body, code, msg):
    e = tile_error(HEAD, body, "arg.adsl")
    d = e.diagnostics[0]
    assert d.code == code and msg in d.message, e.render()
    assert d.span.file == "arg.adsl" and d.span.line == 6


def test_emitted_reduction_reads_the_index_slot():
    project, ctx = lower(_k("store(y[r], argmax(load(h[r, :]), axis=1))"), "ascend910b1", "arg.adsl")
    code = project.files["k_kernel.cpp"]
    assert "ReduceMax(reduceOut_f16, hLocal[i * rowPitch_], reduceTmp_f16, static_cast<int32_t>(rowLen_), true);" in code
    assert "reduceOut_f16.ReinterpretCast<uint16_t>().GetValue(1)" in code
    # half rows: the index slot holds 16 bits, so the host refuses rows longer than 65535
    tiling = project.files["k_main.cpp"]
    assert "static_cast<uint64_t>(D) <= 65535" in tiling and "error[SHAPE]: argmax of f16 rows at arg.adsl:6" in tiling
    tl = next(s for s in ir.walk(ctx.lowered.body) if isinstance(s, ir.TileLoop))
    assert "'argmax' needs the whole row in UB" in tl.shape.chunked.reason


def test_f32_rows_have_no_index_limit():
    project, _ = lower(_k("store(y[r], argmin(load(x[r, :]), axis=1))"), "ascend910b1", "arg.adsl")
    assert "65535" not in project.files["k_main.cpp"]
    assert "reduceOut_f32.ReinterpretCast<uint32_t>().GetValue(1)" in project.files["k_kernel.cpp"]


@pytest.mark.slow
def test_half_rows_longer_than_the_index_slot_are_refused_at_launch(tmp_path):
    from pathlib import Path

    from ascend_dsl import load_file
    from npu_harness.task import TaskRun
    from npu_harness.validate import validate_sim

    adsl = Path(__file__).resolve().parent.parent / "examples/index/argmax_dim.adsl"
    kernel = load_file(adsl)[0].instantiate({"T": ir.DType.F16})
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    x = torch.randn(2, 70000).half()
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x], [x.float().argmax(1)]), work_dir=tmp_path)
    assert not res.ok and "error[SHAPE]: argmax of f16 rows at argmax_dim.adsl:9" in res.detail, res.detail
