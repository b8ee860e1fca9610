"""Two-sided broadcasts in row loops (ascend_dsl/parser_broadcast.py): tensors over a run of the split's symbols
(`[A, 1, D] * [1, R, D]`, `[I, 1, K] + [1, J, 1]`) and comparisons / selects of per-row values or row vectors
next to whole rows (torch.where with a per-row mask)."""

from __future__ import annotations

import pytest
import torch
from dsl_snippets import first_tile, tile_error, tile_kernel

from ascend_dsl import interpreter, ir
from lowering import lower
from npu_harness.task import TaskRun
from npu_harness.validate import validate_sim

HEAD = '''@kernel
def k(x: Tensor[f32, "A, B, C, D"], a: Tensor[f32, "A, D"], b: Tensor[f32, "B, D"], bc: Tensor[f32, "B, C, D"],
      s: Tensor[f32, "A"], sb: Tensor[f32, "B"], sab: Tensor[f32, "A, B"], w: Tensor[f32, "D"],
      m: Tensor[u8, "A, B, C"], y: Tensor[f32, "A, B, C, D"]):
    for blk in split(A * B * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''
SIZES = {"A": 3, "B": 5, "C": 2, "D": 7}


def _k(body: str) -> ir.Kernel:
    return tile_kernel(HEAD, body, "bcast.adsl")


def _inputs(seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    A, B, C, D = SIZES.values()

    def randn(*shape):
        return torch.randn(*shape, generator=g)

    return {"x": randn(A, B, C, D), "a": randn(A, D), "b": randn(B, D), "bc": randn(B, C, D), "s": randn(A),
            "sb": randn(B), "sab": randn(A, B), "w": randn(D),
            "m": (torch.rand(A, B, C, generator=g) < 0.5).to(torch.uint8), "y": torch.zeros(A, B, C, D)}


def _run(body: str, seed: int = 0) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    t = _inputs(seed)
    interpreter.run(_k(body), t, num_cores=4, tile=3 * SIZES["D"])
    return t, t["y"]


@pytest.mark.parametrize("text,period,stride", [
    ("a[r, :]", "A", "B * C"), ("b[r, :]", "B", "C"), ("bc[r, :]", "B * C", None)])
def test_rows_over_a_run_of_the_split_read_row_q_div_stride_mod_period(text, period, stride):
    (store,) = first_tile(_k(f"store(y[r, :], load({text}))")).body
    idx = store.value.index
    assert store.value.type.layout is ir.Layout.ROWS and (idx.period, idx.stride) == (period, stride)


@pytest.mark.parametrize("text,period,stride", [("s[r]", "A", "B * C"), ("sb[r]", "B", "C"), ("sab[r]", "A * B", "C")])
def test_per_row_values_over_a_run_of_the_split(text, period, stride):
    (store,) = first_tile(_k(f"store(y[r, :], load(x[r, :]) * load({text}))")).body
    load = store.value.args[1]
    assert load.type.layout is ir.Layout.COL and (load.index.period, load.index.stride) == (period, stride)


def test_interpreter_broadcasts_as_pytorch():
    t, y = _run("store(y[r, :], load(a[r, :]) * load(b[r, :]) + load(bc[r, :]) * load(s[r]) - load(sab[r]) "
                "+ load(sb[r]))")
    A, B, C, D = SIZES.values()
    want = (t["a"].view(A, 1, 1, D) * t["b"].view(1, B, 1, D) + t["bc"].view(1, B, C, D) * t["s"].view(A, 1, 1, 1)
            - t["sab"].view(A, B, 1, 1) + t["sb"].view(1, B, 1, 1))
    torch.testing.assert_close(y, want)


def test_where_with_a_per_row_mask_selects_whole_rows():
    t, y = _run("store(y[r, :], select(cast(load(m[r]), f32) > 0.0, load(x[r, :]), load(a[r, :])))")
    A, B, C, D = SIZES.values()
    torch.testing.assert_close(y, torch.where(t["m"].bool().unsqueeze(-1), t["x"], t["a"].view(A, 1, 1, D).expand(
        A, B, C, D)))


def test_per_row_values_and_row_vectors_compare_and_select_next_to_whole_rows():
    t, y = _run("store(y[r, :], select(load(w[:]) < load(s[r]), load(sb[r]), load(x[r, :])))")
    A, B, C, D = SIZES.values()
    s, sb = t["s"].view(A, 1, 1, 1), t["sb"].view(1, B, 1, 1)
    torch.testing.assert_close(y, torch.where(t["w"] < s, sb.expand(A, B, C, D), t["x"]))


def test_broadcast_operands_are_whole_rows_only_inside_comparisons_and_selects():
    (store,) = first_tile(_k("store(y[r, :], select(load(s[r]) > 0.0, load(x[r, :]), 0.0) + load(s[r]))")).body
    sel, plus = store.value.args
    assert sel.args[0].args[0].op == "broadcast_rows" and sel.args[0].type.layout is ir.Layout.ROWS
    assert isinstance(plus, ir.Load) and plus.type.layout is ir.Layout.COL  # arithmetic broadcasts per row as before


def test_a_run_that_skips_a_split_symbol_is_a_located_error():
    head = HEAD.replace('bc: Tensor[f32, "B, C, D"]', 'bc: Tensor[f32, "A, C, D"]')
    e = tile_error(head, "store(y[r, :], load(bc[r, :]))", "bcast.adsl")
    d = e.diagnostics[0]
    assert d.code == "INDEX" and "not adjacent in the split A * B * C" in d.message and d.span.line == 7
    assert "expand" in (d.hint or "")


def test_a_named_per_row_mask_between_whole_rows_is_a_located_error():
    e = tile_error(HEAD, "c = load(s[r]) > 0.0\nstore(y[r, :], select(c, load(x[r, :]), 0.0))", "bcast.adsl")
    d = e.diagnostics[0]
    assert d.code == "UNSUPPORTED" and "named mask" in d.message and d.span.line == 8 and "inside the select" in d.hint


def test_a_per_row_store_of_a_broadcast_tensor_is_still_rejected():
    e = tile_error(HEAD, "store(s[r], sum(load(x[r, :]), axis=1))", "bcast.adsl")
    d = e.diagnostics[0]
    assert d.code == "INDEX" and "cannot be stored" in d.message and d.span.line == 7, e.render()


@pytest.mark.slow
def test_emulator_matches_the_interpreter_on_every_broadcast_form(tmp_path):
    body = ("store(y[r, :], select(cast(load(m[r]), f32) > 0.5, load(a[r, :]) * load(b[r, :]) + load(s[r]), "
            "load(bc[r, :]) - load(sab[r])) + load(x[r, :]) * load(sb[r]))")
    kernel = _k(body)
    project, ctx = lower(kernel, "ascend910b1", "bcast.adsl")
    t, want = _run(body, seed=1)
    A, B, C, D = SIZES.values()
    s, sb, sab, m = t["s"].view(A, 1, 1, 1), t["sb"].view(1, B, 1, 1), t["sab"].view(A, B, 1, 1), t["m"].unsqueeze(-1)
    torch.testing.assert_close(want, torch.where(m.float() > 0.5, t["a"].view(A, 1, 1, D) * t["b"].view(1, B, 1, D) + s,
                                                 t["bc"] - sab) + t["x"] * sb)
    inputs = [t[p.name] for p in kernel.tensors if p.name != "y"]
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun(inputs, [want]), work_dir=tmp_path)
    assert res.ok, res.summary() + res.detail
