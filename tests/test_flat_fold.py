"""A flat tile's accumulated reduction folded in place (lowering/passes/plan_flat_folds.py decides, emit/flat_fold.py
renders): which accumulates fold, sums / max / min at tile lengths on the fold's edges in the emulator, a value read
again after its sum kept whole, and a planted bug."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import ascend_dsl
from ascend_dsl import ir
from lowering import lower
from npu_harness.task import TaskRun
from npu_harness.validate import validate_sim

HEAD = '''from ascend_dsl import kernel, Tensor, f32

@kernel
def k(x: Tensor[f32, "N"], out: Tensor[f32, "1"]):
    total = INIT
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            UPDATE
    store(out[0], total)
'''

SQUARES = HEAD.replace("INIT", "0.0").replace("UPDATE", "xt = load(x[t])\n            total += sum(xt * xt)")
# the squares are also stored: the value is read after its sum, so it must not be folded in place
KEEP = '''from ascend_dsl import kernel, Tensor, f32

@kernel
def k(x: Tensor[f32, "N"], y: Tensor[f32, "N"], out: Tensor[f32, "1"]):
    total = 0.0
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            xt = load(x[t])
            sq = xt * xt
            total += sum(sq)
            store(y[t], sq + 1.0)
    store(out[0], total)
'''


def _lower(text: str):
    k = ascend_dsl.parse_text(text, file="fold.adsl")[0].instantiate()
    project, ctx = lower(k, "ascend910b1", "fold.adsl")
    return k, project, ctx


def _folds(loop: ir.TileLoop) -> list[ir.Accumulate]:
    """The loop's reductions plan_flat_folds marked to fold in place."""
    return [s for st in loop.body for s in st.body if isinstance(s, ir.Accumulate) and s.fold_in_place]


def _loop(ctx) -> ir.TileLoop:
    return next(s for s in ir.walk(ctx.lowered.body) if isinstance(s, ir.TileLoop))


def test_dead_value_folds_and_a_value_read_again_does_not():
    _, project, ctx = _lower(SQUARES)
    assert len(_folds(_loop(ctx))) == 1
    assert "emit/row_fold.py" in project.files["k_kernel.cpp"]
    _, project, ctx = _lower(KEEP)
    assert _folds(_loop(ctx)) == []
    assert "emit/row_fold.py" not in project.files["k_kernel.cpp"]


def test_the_fold_is_shown_in_the_dump_after_plan_flat_folds():
    k = ascend_dsl.parse_text(SQUARES, file="fold.adsl")[0].instantiate()
    _, ctx = lower(k, "ascend910b1", "fold.adsl", dump_after=frozenset({"schedule_stages", "plan_flat_folds"}))
    assert "# halves folded in place" in ctx.dumps["plan_flat_folds"]
    assert "# halves folded in place" not in ctx.dumps["schedule_stages"]


# elements in one core (a single core below 4096 per core): 300 (5 repeats: not folded), 640 (10: halves of 5),
# 1100 (17.2: halves and a rest), 4096; 200003: 48 cores, two tiles each, a short last core
@pytest.mark.parametrize("n", [300, 640, 1100, 4096, 200003])
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
def test_folded_flat_reductions_match_pytorch(kind, n, tmp_path):
    init, update, ref = {
        "sum": ("0.0", "xt = load(x[t])\n            total += sum(xt * xt)", lambda x: (x * x).sum()),
        "max": ("-1e30", "xt = load(x[t])\n            total = max(total, max(xt * 2.0))", lambda x: (x * 2).max()),
        "min": ("1e30", "xt = load(x[t])\n            total = min(total, min(xt * 2.0))", lambda x: (x * 2).min()),
    }[kind]
    k, project, ctx = _lower(HEAD.replace("INIT", init).replace("UPDATE", update))
    assert "emit/row_fold.py" in project.files["k_kernel.cpp"]
    x = torch.randn(n)
    res = validate_sim(k, ctx.lowered, project, ctx, TaskRun([x], [ref(x).reshape(1)]), work_dir=tmp_path)
    assert res.ok, res.summary() + "\n" + res.detail


TWICE = '''from ascend_dsl import kernel, Tensor, f32

@kernel
def k(x: Tensor[f32, "N"], s: Tensor[f32, "1"], m: Tensor[f32, "1"]):
    total = 0.0
    top = -1e30
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            sq = load(x[t]) * 3.0
            total += sum(sq)
            top = max(top, max(sq))
    store(s[0], total)
    store(m[0], top)
'''


def test_value_reduced_twice_folds_only_at_its_last_reduction(tmp_path):
    """The sum must leave the tile whole for the max after it; the max may fold it."""
    k, project, ctx = _lower(TWICE)
    loop = _loop(ctx)
    accs = [s for st in loop.body for s in st.body if isinstance(s, ir.Accumulate)]
    assert [a.fold_in_place for a in accs] == [False, True]
    x = torch.randn(30000)
    run = TaskRun([x], [(x * 3).sum().reshape(1), (x * 3).max().reshape(1)])
    res = validate_sim(k, ctx.lowered, project, ctx, run, work_dir=tmp_path)
    assert res.ok, res.summary() + "\n" + res.detail


def test_value_read_again_keeps_its_squares(tmp_path):
    k, project, ctx = _lower(KEEP)
    x = torch.randn(20000)
    res = validate_sim(k, ctx.lowered, project, ctx, TaskRun([x], [x * x + 1.0, (x * x).sum().reshape(1)]),
                       work_dir=tmp_path)
    assert res.ok, res.summary() + "\n" + res.detail


def test_planted_bug_fold_drops_the_rest(tmp_path):
    """The elements past both halves not folded in: 1100 elements lose their last 76 squares."""
    k, project, ctx = _lower(SQUARES)
    code = project.files["k_kernel.cpp"]
    old = "Add(tmp0, tmp0, tmp0[2 * h], static_cast<int32_t>(n - 2 * h));"
    assert old in code
    bad = dataclasses.replace(project, files={**project.files, "k_kernel.cpp": code.replace(old, "", 1)})
    x = torch.rand(1100) + 0.5  # positive: no cancellation hides the lost part
    run = TaskRun([x], [(x * x).sum().reshape(1)])
    assert validate_sim(k, ctx.lowered, project, ctx, run, work_dir=tmp_path / "good").ok
    result = validate_sim(k, ctx.lowered, bad, ctx, run, work_dir=tmp_path / "bad")
    assert [c.name for c in result.comparisons if not c.ok] == ["out"], result.summary()
