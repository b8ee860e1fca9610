"""Element scatter along dim 0: `scatter / scatter_add(load(x[r, :]), index, src)` with index and src named [N, D]
tensors (torch.scatter / scatter_add(x, 0, index, src)). Owner computes over the destination rows; the scalar unit
walks the index in source-row order (lowering/emit/row_scatter.py `element_lines`)."""

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
def k(x: Tensor[f32, "V, D"], idx: Tensor[i64, "N, D"], j: Tensor[i32, "N, D"], src: Tensor[f32, "N, D"],
      h: Tensor[f16, "N, D"], f: Tensor[f32, "N"], w: Tensor[f32, "M, D"], y: Tensor[f32, "V, D"]):
    for blk in split(V, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


def _k(body: str) -> ir.Kernel:
    return tile_kernel(HEAD, body, "dim0.adsl")


def _tensors(v: int = 7, n: int = 20, d: int = 5) -> dict[str, torch.Tensor]:
    idx = torch.randint(0, 3, (n, d))  # rows 0..2 only: many repeats per column
    return {"x": torch.randn(v, d), "idx": idx, "j": idx.int(), "src": torch.randn(n, d),
            "h": torch.randn(n, d).half(), "f": torch.randn(n), "w": torch.randn(4, d), "y": torch.empty(v, d)}


def test_element_scatter_types_as_whole_rows_and_prints_back():
    k = _k("store(y[r, :], scatter_add(load(x[r, :]), idx, src))")
    (store,) = first_tile(k).body
    assert store.value.op == "scatter_add_dim0" and store.value.type == ir.tile_of(ir.DType.F32, ir.Layout.ROWS)
    assert "scatter_add(load(x[r, :]), idx, src)" in printer.kernel(k)
    assert "scatter(load(x[r, :]), j, src)" in printer.kernel(_k("store(y[r, :], scatter(load(x[r, :]), j, src))"))


def test_interpreter_is_torch_with_repeats_in_source_row_order():
    t = _tensors()
    x, idx, src = t["x"], t["idx"], t["src"]
    for body in ("scatter_add(load(x[r, :]), idx, src)", "scatter_add(load(x[r, :]), j, src)"):
        interpreter.run(_k(f"store(y[r, :], {body})"), t, num_cores=3, tile=2)
        assert torch.allclose(t["y"], torch.scatter_add(x, 0, idx, src), atol=1e-5), body
    # scatter with repeats: the last source row naming a (row, column) wins (PyTorch leaves it unspecified)
    interpreter.run(_k("store(y[r, :], scatter(load(x[r, :]), idx, src))"), t, num_cores=3, tile=2)
    for row in range(7):
        for col in range(5):
            hits = (idx[:, col] == row).nonzero().flatten()
            assert t["y"][row, col] == (src[hits[-1], col] if len(hits) else x[row, col]), (row, col)
    perm = torch.argsort(torch.rand(7, 5), dim=0)[:4]  # distinct rows per column: PyTorch's result is defined
    t2 = _tensors(n=4) | {"idx": perm}
    interpreter.run(_k("store(y[r, :], scatter(load(x[r, :]), idx, src))"), t2, num_cores=3, tile=2)
    assert torch.equal(t2["y"], torch.scatter(t2["x"], 0, perm, t2["src"]))


@pytest.mark.parametrize("bad", [-1, 7])
def test_interpreter_reports_row_numbers_outside_the_destination(bad):
    t = _tensors()
    t["idx"][5, 3] = bad  # PyTorch refuses negative numbers in scatter too
    with pytest.raises(DslError) as e:
        interpreter.run(_k("store(y[r, :], scatter_add(load(x[r, :]), idx, src))"), t, num_cores=3, tile=2)
    d = e.value.diagnostics[0]
    assert d.code == "INDEX" and f"row number {bad} in 'idx' is outside [0, 7)" in d.message and d.span.line == 6


@pytest.mark.parametrize("body,code,needle", [
    ("scatter_add(load(x[r, :]), idx, load(src[r, :]))", "TYPE", "source is a tensor named as is too"),
    ("scatter_add(load(x[r, :]), f, src)", "TYPE", "'f' must be an i32 / i64 tensor [N, D] of row numbers"),
    ("scatter_add(load(x[r, :]), w, src)", "TYPE", "'w' must be an i32 / i64 tensor [M, D]"),
    ("scatter(load(x[r, :]), idx, h)", "DTYPE-MISMATCH", "'h' holds f16, the rows f32"),
    ("scatter(load(x[r, :]), idx, w)", "INDEX", "'w' must have the index's shape ['N', 'D']"),
    ("scatter(load(x[r, :]), idx, src, reduce=1)", "ARGS", "scatter along dim 0 takes whole rows"),
    ("scatter_add(x, idx, src)", "TYPE", "'x' is a GM tensor"),
])
def test_element_scatter_misuse_is_a_located_error(body, code, needle):
    d = tile_error(HEAD, f"store(y[r, :], {body})", "dim0.adsl").diagnostics[0]
    assert d.code == code and needle in d.message and d.span.line == 6, (d.code, d.message)


def test_element_scatter_needs_a_row_loop_over_the_destination_rows():
    flat = HEAD.replace('"V, D"]):', '"V, D"], z: Tensor[f32, "Q"]):').replace("split(V, cores=AIV)", "split(Q, cores=AIV)")
    d = tile_error(flat, "store(z[r], scatter_add(load(z[r]), idx, src))", "dim0.adsl").diagnostics[0]
    assert d.code == "UNSUPPORTED" and "along dim 0 runs in a row loop over one symbol" in d.message
    assert d.span.line == 6


def test_lowering_walks_every_element_in_source_row_order_and_traps_outside_the_rows():
    project, _ = lower(_k("store(y[r, :], scatter_add(load(x[r, :]), j, src))"), "ascend910b1", "dim0.adsl")
    code = project.files["k_kernel.cpp"]
    assert "jGm.SetGlobalBuffer((__gm__ int32_t*)j, static_cast<uint64_t>(jGmRows_) * rowLen_);" in code
    assert "for (int64_t k = 0; k < jGmRows_; ++k) {" in code and "if (row < 0 || row >= rowsV) { Trap(); }" in code
    assert "row += rowsV" not in code  # negative numbers are out of range, as in PyTorch
    assert "yLocal.GetValue(to)) + static_cast<float>(srcGm.GetValue(at))" in code
    # each index row lands in UB by DMA (a GM scalar read costs 20x a UB one), then the scalar unit walks it
    assert "CopyGmToUb(reduceTmp_i32, jGm[static_cast<uint64_t>(k) * rowLen_], static_cast<uint32_t>(rowLen_));" in code
    assert "reduceTmp_i32.GetValue(static_cast<uint32_t>(j))" in code and "jGm.GetValue(" not in code
    walk = code[code.index("CopyGmToUb(reduceTmp_i32"):]
    assert walk.index("WaitFlag<HardEvent::MTE2_S>") < walk.index("reduceTmp_i32.GetValue")
    assert "WaitFlag<HardEvent::S_MTE2>" in walk  # read before the next index row lands


@pytest.mark.slow
def test_emulator_element_scatter_matches_torch_with_repeats_and_traps_outside_the_rows(tmp_path):
    """One compile (the gallery's scatter_add_dim0, f16: adds rounded one by one as PyTorch's): repeats add in
    source-row order; a number outside [0, V) is TRAP (the kernel's Trap()), not a write into another row."""
    adsl = REPO / "examples/index/scatter_add_dim0.adsl"
    kernel = load_file(adsl)[0].instantiate({"T": ir.DType.F16})
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    x, src = torch.randn(9, 13).half(), torch.randn(30, 13).half()
    idx = torch.randint(0, 9, (30, 13))
    idx[:6, 4] = torch.tensor([2, 2, 2, 8, 8, 2])  # repeats in one column
    want = torch.scatter_add(x, 0, idx, src)
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx, src], [want]), work_dir=tmp_path)
    assert res.ok, res.summary() + res.detail
    for bad in (9, -1):
        idx2 = idx.clone()
        idx2[17, 5] = bad
        res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx2, src], [x]), work_dir=tmp_path / str(bad))
        assert not res.ok and "TRAP" in [e.code for e in res.sim_errors], res.summary() + res.detail
