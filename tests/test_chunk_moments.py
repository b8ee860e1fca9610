"""Single-pass mean and centred second moment on rows longer than UB (lowering/passes/chunk_moments.py): which
written forms are recognised, the passes and GM reads left, and emulator runs against PyTorch (odd row
lengths, a row group, a large mean with a small variance where sum / sum-of-squares would cancel)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from ascend_dsl import ir, load_file, parse_text
from lowering import lower
from npu_harness.task import TaskRun
from npu_harness.validate import load_task_for, validate_sim

REPO = Path(__file__).resolve().parent.parent


def _plan(lowered: ir.Kernel, loop: int = 0) -> ir.ChunkPlan:
    loops = [s for s in ir.walk(lowered.body) if isinstance(s, ir.TileLoop) and s.kind is ir.LoopKind.ROWS]
    plan = loops[loop].shape.chunked
    assert isinstance(plan, ir.ChunkPlan), plan
    return plan


def _lower_text(text: str):
    k = parse_text(text, "moments.adsl")[0].instantiate()
    project, ctx = lower(k, "ascend910b1", "moments.adsl")
    return k, project, ctx


STATS = """from ascend_dsl import kernel, Tensor, f32


@kernel
def stats(x: Tensor[f32, "B, D"], m: Tensor[f32, "B"], v: Tensor[f32, "B"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            xt = load(x[r, :])
{body}
"""

#: Written forms of the centred second moment, each with the mean it stores and the variance.
FORMS = {
    "mean, xc * xc": "            mu = mean(xt, axis=1)\n            xc = xt - mu\n"
                     "            store(m[r], mu)\n            store(v[r], mean(xc * xc, axis=1) * 10000.0)",
    "mean, xc ** 2": "            mu = mean(xt, axis=1)\n            xc = xt - mu\n"
                     "            store(m[r], mu)\n            store(v[r], sum(xc ** 2, axis=1) / D)",
    "sum / D, mu - x": "            mu = sum(xt, axis=1) / D\n            xc = mu - xt\n"
                       "            store(m[r], mu)\n            store(v[r], mean(xc * xc, axis=1) * 10000.0)",
    "(x - mu) * (x - mu)": "            mu = mean(xt, axis=1)\n"
                           "            store(m[r], mu)\n            store(v[r], mean((xt - mu) * (xt - mu), axis=1))",
}


@pytest.mark.parametrize("form", FORMS)
def test_written_forms_fold_in_one_pass(form):
    _, project, ctx = _lower_text(STATS.format(body=FORMS[form]))
    plan = _plan(ctx.lowered)
    assert len(plan.passes) == 1
    assert {f.moments[:2] for f in plan.passes[0].reductions if f.moments} != set()
    assert project.files["stats_kernel.cpp"].count("CopyGmToUb(xLocal, xGm[rowOffset_ + offset], count);") == 1


@pytest.mark.parametrize("body", [
    # the deviations of another value than the one whose mean the pass folds
    "            mu = mean(xt, axis=1)\n            xc = xt * 2.0 - mu\n"
    "            store(m[r], mu)\n            store(v[r], mean(xc * xc, axis=1))",
    # not a square
    "            mu = mean(xt, axis=1)\n            xc = xt - mu\n"
    "            store(m[r], mu)\n            store(v[r], mean(xc * xt, axis=1))",
    # the centre is not a per-row value of the mean's depth
    "            mu = max(xt, axis=1)\n            xc = xt - mu\n"
    "            store(m[r], mu)\n            store(v[r], mean(xc * xc, axis=1))",
])
def test_other_forms_keep_their_pass(body):
    _, _, ctx = _lower_text(STATS.format(body=body))
    plan = _plan(ctx.lowered)
    assert len(plan.passes) == 2
    assert not any(f.moments for p in plan.passes for f in p.reductions)


@pytest.mark.parametrize("name,dt,reads", [
    ("normalization/layer_norm", "f32", 2), ("normalization/instance_norm", "f16", 2),
    ("normalization/instance_norm", "f32", 2), ("normalization/rms_norm", "f32", 2),
    # layer_norm's T = f16 variant takes its deviations and squares in f16 (cast to f32 for the mean): not
    # the f32 pattern, so it keeps its variance pass rather than change the written arithmetic
    ("normalization/layer_norm", "f16", 3)])
def test_norms_read_x_twice(name, dt, reads):
    adsl = REPO / "examples" / f"{name}.adsl"
    kernel = load_file(adsl)[0].instantiate({"T": dt})
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    assert len(_plan(ctx.lowered).passes) == reads
    code = project.files[f"{project.name}_kernel.cpp"]
    assert code.count("xGm[rowOffset_ + offset], count);") == reads


def _check(res) -> None:
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])


@pytest.mark.slow
@pytest.mark.parametrize("name,dt,sizes", [("layer_norm", "f32", {"batch_size": 3, "dim": 70001}),
                                           ("layer_norm", "f32", {"batch_size": 50, "dim": 40007}),
                                           ("instance_norm", "f16", {"batch_size": 1, "features": 3, "dim1": 301, "dim2": 263})])
def test_norms_on_long_rows_against_pytorch(name, dt, sizes, tmp_path):
    """3 rows (a group of cores per row: partials merged across cores), 50 rows (a core per row) and 3 planes
    of f16 (cast to f32), all odd lengths with a short last chunk."""
    adsl = REPO / f"examples/normalization/{name}.adsl"
    kernel = load_file(adsl)[0].instantiate({"T": dt})
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    run = load_task_for(kernel, REPO / f"examples/normalization/{name}.py", overrides=sizes)
    _check(validate_sim(kernel, ctx.lowered, project, ctx, run, work_dir=tmp_path))


@pytest.mark.slow
@pytest.mark.parametrize("form,cores", [("mean, xc * xc", 48), ("mean, xc * xc", 2), ("sum / D, mu - x", 2)])
def test_large_mean_small_variance(form, cores, tmp_path):
    """Rows with mean 1e4 and standard deviation 0.1 (sum / sum-of-squares in f32 would lose every digit of the
    variance: x^2 ~ 1e8, whose f32 spacing is 8), a row with a trend along it (chunk means far apart) and a
    standard normal row; 3 rows of 70,001 on 48 cores (each row split over a group of 16 cores, one chunk
    each: the group merge) and on 2 cores (a core walks whole rows: 5 chunks, the chunk merge). The kernels
    store 1e4 times the variance, so the comparison's atol = rtol = 1e-4 asks the variance to 1e-4 relative
    of float64."""
    k, project, ctx = _lower_text(STATS.format(body=FORMS[form]))
    torch.manual_seed(0)
    d = 70001
    x = torch.stack([1e4 + 0.1 * torch.randn(d), torch.linspace(-1e3, 3e3, d) + torch.randn(d), torch.randn(d)])
    x64 = x.double()
    mean, var = x64.mean(1), x64.var(1, unbiased=False)
    run = TaskRun([x], [mean.float(), (var * 1e4).float()])
    res = validate_sim(k, ctx.lowered, project, ctx, run, work_dir=tmp_path, core_num=cores)
    _check(res)


def test_ir_dump_shows_the_pair_in_one_pass():
    from lowering import PassContext, get_target, run_pipeline

    adsl = REPO / "examples/normalization/layer_norm.adsl"
    ctx = PassContext(get_target("ascend910b1"), adsl.name)
    run_pipeline(load_file(adsl)[0].instantiate({"T": "f32"}), ctx, frozenset({"plan_chunks"}))
    dump = ctx.dumps["plan_chunks"]
    assert "#   pass 0: folds _t0 (mean:_t0/_t2), _t2 (m2:_t0/_t2); chunks <= " in dump
    assert "#         __t0Dev = xt - _t0ShiftRow" in dump
    assert "#   _t0Row = _t0MeanRow" in dump  # the mean, no longer a folded sum times 1 / D
    assert "#   pass 1: stores y; chunks <= " in dump and "pass 2" not in dump


@pytest.mark.slow
@pytest.mark.parametrize("old,new", [
    ("d_ * d_ * ", "0.0f * d_ * "),                      # the merge without the between-chunks term
    ("s1_ * s1_ / ", "0.0f * s1_ / "),                 # a chunk's squares about the shift, not its mean
])
def test_a_planted_merge_bug_is_caught(old, new, tmp_path):
    """The checks above can fail: the trend row (chunk means 4,000 apart; 2 cores, so 5 chunks per row) exposes
    a merge that drops a term."""
    import dataclasses

    k, project, ctx = _lower_text(STATS.format(body=FORMS["mean, xc * xc"]))
    name = "stats_kernel.cpp"
    code = project.files[name]
    assert old in code
    bad = dataclasses.replace(project, files={**project.files, name: code.replace(old, new)})
    torch.manual_seed(0)
    x = torch.stack([torch.linspace(-1e3, 3e3, 70001) + torch.randn(70001), torch.randn(70001)])
    x64 = x.double()
    run = TaskRun([x], [x64.mean(1).float(), (x64.var(1, unbiased=False) * 1e4).float()])
    res = validate_sim(k, ctx.lowered, bad, ctx, run, work_dir=tmp_path, core_num=2)
    assert not res.ok and not res.comparisons[1].ok, res.summary()
