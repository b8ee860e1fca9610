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


def test_emitted_reduction_packs_the_index_slots_on_the_vector_unit():
    project, ctx = lower(_k("store(y[r], argmax(load(h[r, :]), axis=1))"), "ascend910b1", "arg.adsl")
    code = project.files["k_kernel.cpp"]
    # row i's [value, index] pair at element 2i of the i64 tile; the index slots packed, widened to i64
    assert ("ReduceMax(yLocal.ReinterpretCast<half>()[2 * i], hLocal[i * rowPitch_], reduceTmp_f16, "
            "static_cast<int32_t>(rowLen_), true);") in code
    assert "GatherMask(argIdx_i32.ReinterpretCast<int16_t>(), yLocal.ReinterpretCast<int16_t>()" in code
    assert "Cast(yLocal, argIdx_i32, RoundMode::CAST_NONE, count);" in code
    assert "GetValue" not in code and "HardEvent::V_S" not in code  # no scalar step per row
    # half rows: the index slot holds 16 bits, so the host refuses rows longer than 65535
    tiling = project.files["k_main.cpp"]
    assert "static_cast<uint64_t>(D) <= 65535" in tiling and "error[SHAPE]: argmax of f16 rows at arg.adsl:6" in tiling
    tl = next(s for s in ir.walk(ctx.lowered.body) if isinstance(s, ir.TileLoop))
    assert "'argmax' needs the whole row in UB" in tl.shape.chunked.reason


def test_310p_has_no_int64_cast_so_the_scalar_unit_moves_the_index():
    head = HEAD.replace(', b: Tensor[bf16, "B, D"]', "")  # 310P has no bf16
    project, _ = lower(tile_kernel(head, "store(y[r], argmin(load(x[r, :]), axis=1))", "arg.adsl"), "ascend310p",
                       "arg.adsl")
    code = project.files["k_kernel.cpp"]
    assert "reduceOut_f32.ReinterpretCast<uint32_t>().GetValue(1)" in code and "GatherMask" not in code


def test_f32_rows_have_no_index_limit():
    project, _ = lower(_k("store(y[r], argmin(load(x[r, :]), axis=1))"), "ascend910b1", "arg.adsl")
    assert "65535" not in project.files["k_main.cpp"]
    assert "GatherMask(argIdx_i32, yLocal.ReinterpretCast<int32_t>()" in project.files["k_kernel.cpp"]


def _validate(name: str, dtype: ir.DType, x: torch.Tensor, tmp_path, target: str = "ascend910b1", buffers: int = 2):
    from pathlib import Path

    from ascend_dsl import load_file
    from npu_harness.task import TaskRun
    from npu_harness.validate import validate_sim

    adsl = Path(__file__).resolve().parent.parent / f"examples/index/{name}.adsl"
    if buffers != 2:  # the gallery kernel with single-buffered tiles (rows up to ~47,000 halves fit UB)
        text = adsl.read_text()
        assert text.count("buffers=2") == 1
        adsl = tmp_path / adsl.name
        adsl.write_text(text.replace("buffers=2", f"buffers={buffers}"))
    kernel = load_file(adsl)[0].instantiate({"T": dtype})
    project, ctx = lower(kernel, target, adsl.name)
    want = getattr(torch, name.split("_")[0])(x.float(), dim=1)
    return validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x], [want]), work_dir=tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["argmax_dim", "argmin_dim"])
def test_half_indices_above_32767_survive_the_int16_step(name, tmp_path):
    """The uint16 index patterns go through int16 -> f32 (negative above 32767) and get 65536 back: rows of
    40000 halves (single-buffered: double-buffered rows that fit UB are shorter than 32768) whose extreme lies
    on either side of 32768, ties included (the first one wins)."""
    gen = torch.Generator().manual_seed(34)
    x = torch.randint(-8, 9, (50, 40000), generator=gen).half()
    sign = 1 if name == "argmax_dim" else -1
    for i in range(50):
        at = [32767, 32768, 39999, 65535 % 40000, 100][i % 5]
        x[i, at] = sign * 20
        if i % 3 == 0:
            x[i, min(at + 7, 39999)] = sign * 20  # a later tie: the first one wins
    res = _validate(name, ir.DType.F16, x, tmp_path, buffers=1)
    assert res.ok, (res.summary(), res.detail, res.sim_errors)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["ascend910b1", "ascend310p"])
@pytest.mark.parametrize("name", ["argmax_dim", "argmin_dim"])
def test_padded_rows_odd_tiles_and_ties_validate(name, target, tmp_path):
    """1001 rows of 300 (padded in UB), tail tiles, many ties: both index paths against PyTorch."""
    gen = torch.Generator().manual_seed(3401)
    x = (torch.randint(-6, 7, (1001, 300), generator=gen) / 2).float()
    res = _validate(name, ir.DType.F32, x, tmp_path, target)
    assert res.ok, (res.summary(), res.detail, res.sim_errors)


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
