"""index_copy / index_add along the last dim by one index row shared by every row, on the vector unit (kind
SCATTER_SHARED: lowering/passes/plan_scatter_shared.py, lowering/emit/scatter_shared.py): the index's inverse once
per core (Sort32 + MrgSort), then a Gather + Select per row (copy) or per repeat level (add); the scalar walk when
D > 4096 (the host decides)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch
from dsl_snippets import first_tile, tile_kernel

from ascend_dsl import ir, load_file
from lowering import lower
from npu_harness.task import TaskRun
from npu_harness.validate import validate_sim

REPO = Path(__file__).resolve().parent.parent

HEAD = '''@kernel
def k(x: Tensor[f32, "B, D"], c: Tensor[i64, "D"], c32: Tensor[i32, "D"], i: Tensor[i64, "B, D"],
      f: Tensor[f32, "B, D"], n: Tensor[i32, "B, D"], y: Tensor[f32, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


def _lowered(body: str) -> ir.Kernel:
    return lower(tile_kernel(HEAD, body, "shared.adsl"), "ascend910b1", "shared.adsl")[1].lowered


def _scatter_attrs(k: ir.Kernel) -> dict:
    (op,) = [s for s in ir.walk(k.body) if isinstance(s, ir.VecOp) and "Scatter" in s.api]
    return {"api": op.api, **dict(op.attrs)}


@pytest.mark.parametrize("index", ["c", "c32"])
def test_the_shared_index_copy_alone_in_its_loop_takes_the_vector_form(index):
    k = _lowered(f"store(y[r, :], scatter(load(x[r, :]), load({index}[:]), load(f[r, :])))")
    assert k.kind is ir.KernelKind.SCATTER_SHARED
    attrs = _scatter_attrs(k)
    assert attrs["api"] == "ScatterSharedVec" and "Sort32 + MrgSort" in attrs["inverse"]
    assert "D > 4096" in attrs["fallback"]


@pytest.mark.parametrize("body,why", [
    ("store(y[r, :], scatter(load(x[r, :]), load(c[:]), load(f[r, :])) * 2.0)", "the loop does more than"),
    ("store(y[r, :], scatter(load(x[r, :]), load(c[:]), load(f[r, :]) + 1.0))", "the loop does more than"),
    ("store(y[r, :], scatter(load(x[r, :]), load(c[:]), 2.0))", "a scalar value"),
    ("store(y[r, :], scatter_add(load(x[r, :]), load(c[:]), load(f[r, :]) * load(x[r, :])))", "the loop does more"),
])
def test_other_work_keeps_the_scalar_walk_and_says_why(body, why):
    k = _lowered(body)
    assert k.kind is ir.KernelKind.VECTOR
    attrs = _scatter_attrs(k)
    assert attrs["api"] in ("Scatter", "ScatterAdd") and attrs["vector"].startswith(f"no: {why}"), attrs


@pytest.mark.parametrize("body", [
    "store(y[r, :], scatter_add(load(x[r, :]), load(c[:]), load(f[r, :])))",
    "store(y[r, :], scatter_add(load(x[r, :]), load(c32[:]), load(f[r, :]) * 0.5))",
])
def test_the_shared_index_add_takes_the_vector_form(body):
    k = _lowered(body)
    assert k.kind is ir.KernelKind.SCATTER_SHARED
    attrs = _scatter_attrs(k)
    assert attrs["api"] == "ScatterSharedAddVec" and "per repeat level" in attrs["rows"]


@pytest.mark.parametrize("body", [
    "store(y[r, :], scatter(load(x[r, :]), load(i[r, :]), load(f[r, :])))",  # an index per element
    "store(y[r, :], scatter_add(load(x[r, :]), load(i[r, :]), load(f[r, :])))",
])
def test_other_scatters_are_not_this_form(body):
    k = _lowered(body)
    assert k.kind is ir.KernelKind.VECTOR and "vector" not in _scatter_attrs(k)
    assert first_tile(k) is not None


def test_310p_keeps_the_scalar_walk():
    k = lower(tile_kernel(HEAD, "store(y[r, :], scatter(load(x[r, :]), load(c[:]), load(f[r, :])))", "shared.adsl"),
              "ascend310p", "shared.adsl")[1].lowered
    assert k.kind is ir.KernelKind.VECTOR and "no Sort32 / MrgSort" in _scatter_attrs(k)["vector"]


def _want(x: torch.Tensor, idx: torch.Tensor, src: torch.Tensor, add: bool = False) -> torch.Tensor:
    """index_copy with repeats: the last column wins (the DSL's rule; PyTorch leaves it undefined); index_add: the
    repeats added in column order, rounded to the dtype per step (the interpreter's order)."""
    y = x.clone()
    for j, c in enumerate(idx.tolist()):
        y[:, c] = (y[:, c] + src[:, j]) if add else src[:, j]
    return y


def _gallery(dtype: str, name: str = "index_copy"):
    adsl = REPO / f"examples/index/{name}.adsl"
    kernel = load_file(adsl)[0].instantiate({"T": dtype})
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    assert ctx.lowered.kind is ir.KernelKind.SCATTER_SHARED
    return kernel, project, ctx


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_emulator_index_add_adds_repeats_in_column_order(tmp_path, dtype):
    """One compile per dtype (alpha = 0.5: src scaled first, as the DSL's `load(src[r, :]) * alpha`): repeats
    (up to every source on four columns) at several shapes and core shares equal the column-order sums exactly; a
    number outside [0, D) stops the kernel (TRAP); D > 4096 takes the scalar walk."""
    kernel, project, ctx = _gallery(dtype, "index_add")
    tdt = torch.float32 if dtype == "f32" else torch.float16
    g = torch.Generator().manual_seed(361)
    for b, d, cores, kind in CASES + [(2, 4160, 2, "repeat")]:
        x, src = torch.randn(b, d, generator=g).to(tdt), torch.randn(b, d, generator=g).to(tdt)
        idx = _index(d, kind, g)
        want = _want(x, idx, src * torch.tensor(0.5, dtype=tdt), add=True)
        res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx, src], [want], attrs={"alpha": 0.5}),
                           work_dir=tmp_path / f"{b}x{d}", core_num=cores)
        assert res.ok and max(c.max_abs_err for c in res.comparisons) == 0, (b, d, kind, res.summary() + res.detail)
    x, src = torch.randn(3, 100).to(tdt), torch.randn(3, 100).to(tdt)
    idx = torch.randint(0, 100, (100,))
    idx[17] = -1
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx, src], [x], attrs={"alpha": 0.5}),
                       work_dir=tmp_path / "bad")
    assert not res.ok and "TRAP" in [e.code for e in res.sim_errors], res.summary() + res.detail


@pytest.mark.slow
def test_planted_bug_index_add_dropping_the_last_level_fails(tmp_path):
    kernel, project, ctx = _gallery("f32", "index_add")
    name = next(f for f in project.files if f.endswith("_kernel.cpp"))
    code = project.files[name]
    assert code.count("levels_ = static_cast<uint32_t>(mm.GetValue(0));") == 1
    bad = replace(project, files={**project.files, name: code.replace(
        "levels_ = static_cast<uint32_t>(mm.GetValue(0));", "levels_ = static_cast<uint32_t>(mm.GetValue(0)) - 1;")})
    g = torch.Generator().manual_seed(2)
    x, src, idx = torch.randn(4, 128, generator=g), torch.randn(4, 128, generator=g), torch.randint(0, 128, (128,), generator=g)
    want = _want(x, idx, src * 0.5, add=True)
    res = validate_sim(kernel, ctx.lowered, bad, ctx, TaskRun([x, idx, src], [want], attrs={"alpha": 0.5}), work_dir=tmp_path)
    assert not res.ok and res.sim_errors == [], res.summary() + res.detail


CASES = [  # (B, D, cores, index): rows per core 1, 2 and 3+; D off 64 and 32 bytes; permutations and repeats
    (5, 100, 48, "perm"), (7, 64, 3, "repeat"), (9, 200, 2, "few"), (3, 1000, 2, "repeat"), (4, 37, 1, "perm"),
]


def _index(d: int, kind: str, g: torch.Generator) -> torch.Tensor:
    if kind == "perm":
        return torch.randperm(d, generator=g)
    if kind == "few":  # four columns named by every source
        return torch.randint(0, 4, (d,), generator=g)
    return torch.randint(0, d, (d,), generator=g)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_emulator_keeps_the_last_source_and_traps_outside_the_row(tmp_path, dtype):
    """One compile per dtype: permutations and repeats at several shapes and core shares match the last-wins
    reference exactly; a number outside [0, D) stops the kernel (TRAP)."""
    kernel, project, ctx = _gallery(dtype)
    tdt = torch.float32 if dtype == "f32" else torch.float16
    g = torch.Generator().manual_seed(36)
    for b, d, cores, kind in CASES:
        x, src = torch.randn(b, d, generator=g).to(tdt), torch.randn(b, d, generator=g).to(tdt)
        idx = _index(d, kind, g)
        res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx, src], [_want(x, idx, src)]),
                           work_dir=tmp_path / f"{b}x{d}", core_num=cores)
        assert res.ok and max(c.max_abs_err for c in res.comparisons) == 0, (b, d, kind, res.summary() + res.detail)
    x, src = torch.randn(3, 100).to(tdt), torch.randn(3, 100).to(tdt)
    for bad in (100, -1):
        idx = torch.randperm(100)
        idx[17] = bad
        res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx, src], [x]), work_dir=tmp_path / str(bad))
        assert not res.ok and "TRAP" in [e.code for e in res.sim_errors], res.summary() + res.detail


@pytest.mark.slow
def test_emulator_rows_longer_than_4096_take_the_scalar_walk(tmp_path):
    kernel, project, ctx = _gallery("f32")
    g = torch.Generator().manual_seed(7)
    x, src, idx = torch.randn(2, 4160, generator=g), torch.randn(2, 4160, generator=g), torch.randint(0, 4160, (4160,), generator=g)
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx, src], [_want(x, idx, src)]), work_dir=tmp_path)
    assert res.ok and max(c.max_abs_err for c in res.comparisons) == 0, res.summary() + res.detail
    assert not any(k.startswith("Sort32") for k in res.counters["blocks"][0]["vec"])  # no inverse: the walk
    idx[5] = 4160
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx, src], [x]), work_dir=tmp_path / "bad")
    assert not res.ok and "TRAP" in [e.code for e in res.sim_errors], res.summary() + res.detail


@pytest.mark.slow
def test_planted_bug_first_source_instead_of_last_fails(tmp_path):
    """The kernel with the FIRST source of each column (the position after the column's marker) instead of the
    last one: repeated indices must make the validation fail."""
    kernel, project, ctx = _gallery("f32")
    name = next(f for f in project.files if f.endswith("_kernel.cpp"))
    code = project.files[name]
    assert code.count("Adds(qn, qn, -1.0f, dp);") == 1
    bad = replace(project, files={**project.files, name: code.replace("Adds(qn, qn, -1.0f, dp);", "Adds(qn, q, 1.0f, dp);")})
    g = torch.Generator().manual_seed(1)
    x, src, idx = torch.randn(4, 128, generator=g), torch.randn(4, 128, generator=g), torch.randint(0, 128, (128,), generator=g)
    res = validate_sim(kernel, ctx.lowered, bad, ctx, TaskRun([x, idx, src], [_want(x, idx, src)]), work_dir=tmp_path)
    assert not res.ok and res.sim_errors == [], res.summary() + res.detail
