"""Kernels of several launches (issues 14 and 15; lowering/passes/partition_launches.py): where the kernel is cut,
the launch graph's located errors, the interpreter, the project, the cost model's sum, and the emulator running
the launches in order (a planted wrong order is caught). The gallery kernels (examples/fuse/conv_*, *_norm,
*_softmax_long) run at two sizes in tests/test_gallery_e2e.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import lowering
from ascend_dsl import interpreter, ir, load_file, parse_text, printer
from ascend_dsl.diagnostics import DslError

REPO = Path(__file__).resolve().parents[1]

HEAD = '''@kernel
def k(x: Tensor[f16, "M, K"], w: Tensor[f16, "N, K"], y: Tensor[f32, "M, N"], z: Tensor[f32, "M, N"]):
'''
CUBE = '''    for blk in split(M, N, cores=AIC):
        with cube:
            acc = matmul(x[blk], w[blk], transpose_b=True)
        with vector:
            store(h[blk], acc)
'''
VECTOR = '''    for blk2 in split(M, cores=AIV):
        for r in tile(blk2, size=auto, buffers=2):
            v = load(h[r, :])
            store(y[r, :], v - max(v, axis=1))
'''
DECL = "    h = workspace(f32, M, N)\n"


def _kernel(text: str) -> ir.Kernel:
    return parse_text(text, "launches.adsl")[0].instantiate()


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _error(text: str):
    with pytest.raises(DslError) as e:
        lowering.lower(_kernel(text))
    return e.value.diagnostics[0]


def test_the_kernel_is_cut_where_the_loop_kind_changes():
    _, ctx = lowering.lower(_kernel(HEAD + DECL + CUBE + VECTOR))
    k = ctx.lowered
    assert k.kind is ir.KernelKind.LAUNCHES
    (a, b) = k.body
    assert [a.kernel.kind, b.kernel.kind] == [ir.KernelKind.MIX, ir.KernelKind.VECTOR]
    assert (a.reads, a.writes, b.reads, b.writes) == ((), ("h",), ("h",), ())
    # the shared workspace tensor is an ordinary parameter of each launch (the host allocates it)
    assert [p.name for p in a.kernel.tensors] == ["x", "w", "h"] and not a.kernel.param("h").workspace
    assert [p.name for p in b.kernel.tensors] == ["y", "h"] and [p.name for p in b.kernel.outputs] == ["y"]
    assert "# launch 1 (k_l1, vector): reads h, writes -" in printer.kernel(k)


def test_a_vector_launch_may_come_first_and_scalars_go_where_they_are_used():
    text = '''@kernel
def k(x: Tensor[f32, "M, K"], w: Tensor[f16, "N, K"], y: Tensor[f32, "M, N"], alpha: f32 = 0.5):
    h = workspace(f16, M, K)
    s = alpha * 2.0
    for blk in split(M, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(h[r, :], cast(relu(load(x[r, :])) * s, f16))
    for blk in split(M, N, cores=AIC):
        with cube:
            acc = matmul(h[blk], w[blk], transpose_b=True)
        with vector:
            store(y[blk], acc)
'''
    _, ctx = lowering.lower(_kernel(text))
    first, second = ctx.lowered.body
    assert [first.kernel.kind, second.kernel.kind] == [ir.KernelKind.VECTOR, ir.KernelKind.MIX]
    assert any(isinstance(s, ir.ScalarAssign) and s.name == "s" for s in ir.walk(first.kernel.body))
    assert not any(isinstance(s, ir.ScalarAssign) for s in second.kernel.body)


def test_cube_stages_still_chain_inside_one_launch():
    text = HEAD.replace('z: Tensor[f32, "M, N"]', 'v2: Tensor[f16, "N, N"]') + DECL + \
        "    g = workspace(f16, M, N)\n" + CUBE.replace("store(h[blk], acc)", "store(g[blk], cast(acc, f16))") + '''\
    for blk3 in split(M, N, cores=AIC):
        with cube:
            acc3 = matmul(g[blk3], v2[blk3])
        with vector:
            store(h[blk3], acc3)
''' + VECTOR
    _, ctx = lowering.lower(_kernel(text))
    kinds = [la.kernel.kind for la in ctx.lowered.body]
    assert kinds == [ir.KernelKind.CHAIN, ir.KernelKind.VECTOR]
    assert ctx.lowered.body[0].kernel.param("g").workspace  # the chain's own tensor stays in its workspace


def test_a_vector_loop_reading_what_an_earlier_vector_loop_wrote_is_a_launch_of_its_own():
    """Every core's share of the workspace must be written before any core reads it: a vector loop that reads a
    workspace tensor the run's earlier loops write starts a new launch (with the scalars just before it); one that
    does not stays in the run (ascend_dsl/launches.py)."""
    text = HEAD + DECL + "    g = workspace(f32, M, N)\n" + CUBE + VECTOR.replace("store(y[r, :]", "store(g[r, :]") + \
        "    s = 2.0\n" + VECTOR.replace("blk2", "blk3").replace("load(h[", "load(g[").replace("store(y[", "store(z[") \
        .replace("v - max", "v * s - max")
    _, ctx = lowering.lower(_kernel(text))
    launches = ctx.lowered.body
    assert [la.kernel.kind for la in launches] == [ir.KernelKind.MIX, ir.KernelKind.VECTOR, ir.KernelKind.VECTOR]
    assert (launches[1].writes, launches[2].reads) == (("g",), ("g",))
    assert any(isinstance(st, ir.ScalarAssign) and st.name == "s" for st in launches[2].kernel.body)
    independent = text.replace("load(g[r, :])", "load(h[r, :])")
    _, ctx = lowering.lower(_kernel(independent.replace('    g = workspace(f32, M, N)\n', '').replace(
        "store(g[r, :]", "store(y[r, :]")))
    assert [la.kernel.kind for la in ctx.lowered.body] == [ir.KernelKind.MIX, ir.KernelKind.VECTOR]


def test_launches_that_depend_on_each_other_in_a_cycle_are_located():
    text = '''@kernel
def k(w: Tensor[f16, "N, N"]):
    h = workspace(f32, N, N)
    g = workspace(f16, N, N)
    for blk in split(N, N, cores=AIC):
        with cube:
            acc = matmul(g[blk], w[blk])
        with vector:
            store(h[blk], acc)
    for blk2 in split(N, cores=AIV):
        for r in tile(blk2, size=auto, buffers=2):
            store(g[r, :], cast(load(h[r, :]), f16))
'''
    err = _error(text)
    assert err.code == "KERNEL-STRUCTURE" and "cycle" in err.message and "launch 0 (h) -> launch 1 (g)" in err.message
    assert err.span.line == _line(text, "split(N, N, cores=AIC)")


def test_a_workspace_read_before_any_launch_writes_it_is_located():
    text = HEAD + DECL + CUBE.replace("store(h[blk], acc)", "store(z[blk], acc)") + VECTOR
    err = _error(text)
    assert err.code == "KERNEL-STRUCTURE" and "read before any split loop writes it" in err.message
    assert err.span.line == _line(text, "v = load(h[r, :])")


def test_a_workspace_written_by_two_launches_or_never_used_is_located():
    text = HEAD + DECL + CUBE + VECTOR.replace("store(y[r, :], v - max(v, axis=1))", "store(h[r, :], v * 2.0)")
    err = _error(text)
    assert err.code == "KERNEL-STRUCTURE" and "written by 2 launches" in err.message
    assert err.span.line == _line(text, "v = load(h[r, :])")
    text = HEAD + DECL + "    g = workspace(f32, M, N)\n" + CUBE + VECTOR
    err = _error(text)
    assert err.code == "KERNEL-STRUCTURE" and "'g' is never written or read" in err.message
    assert err.span.line == _line(text, "g = workspace")


SECOND_CUBE = CUBE.replace("blk", "blk3").replace("acc", "acc3").replace("store(h[blk3], acc3)", "store(z[blk3], acc3)")


@pytest.mark.parametrize("text, needle, at", [
    (HEAD + DECL + CUBE + VECTOR + SECOND_CUBE + "    store(z[0], 1.0)\n",
     "after a cube split loop belong to no launch", "store(z[0], 1.0)"),
    (HEAD + DECL + CUBE + "    t = 2.0\n" + SECOND_CUBE + VECTOR, "between cube launches belong to no launch",
     "t = 2.0"),
], ids=["scalar-store-after-the-cube-loop", "scalar-between-cube-loops"])
def test_kernel_scope_statements_outside_any_vector_launch_are_located(text, needle, at):
    err = _error(text)
    assert err.code == "UNSUPPORTED" and needle in err.message
    assert err.span.line == _line(text, at)


def test_the_project_holds_each_launch_and_the_order():
    project, ctx = lowering.lower(load_file(REPO / "examples/fuse/conv_batch_norm_relu.adsl")[0].instantiate())
    m = project.manifest
    assert m["kernel_type"] == "LAUNCHES"
    assert [(la["kernel"], la["kind"], la["writes"], la["reads"]) for la in m["launches"]] == [
        ("conv_batch_norm_relu_l0", "conv", ["c"], []), ("conv_batch_norm_relu_l1", "vector", [], ["c"])]
    assert m["workspace_tensors"] == [{"name": "c", "dtype": "f32", "shape": ["N", "K", "OH", "OW"]}]
    assert "conv_batch_norm_relu_l0/conv_batch_norm_relu_l0_kernel.cpp" in project.files
    assert "conv_batch_norm_relu_l1/conv_batch_norm_relu_l1_tiling.h" in project.files
    assert [p.name for p in project.launches] == ["conv_batch_norm_relu_l0", "conv_batch_norm_relu_l1"]


def test_exports_of_several_launches_are_a_located_unsupported(tmp_path):
    from npu_harness.validate_launches import require_one_launch

    text = HEAD + DECL + CUBE + VECTOR
    project, ctx = lowering.lower(_kernel(text))
    with pytest.raises(DslError) as e:
        require_one_launch(project, ctx, "the mkb-direct export")
    d = e.value.diagnostics[0]
    assert d.code == "UNSUPPORTED" and d.span.line == _line(text, "split(M, cores=AIV)")


def _conv_bn_task():
    from npu_harness.validate import load_task_for

    k = load_file(REPO / "examples/fuse/conv_batch_norm_relu.adsl")[0].instantiate()
    return k, load_task_for(k, REPO / "examples/fuse/conv_batch_norm_relu.py")


def test_interpreter_runs_the_launches_in_order():
    from npu_harness.validate import validate_interp

    k, run = _conv_bn_task()
    assert validate_interp(k, run).ok
    # the same kernel with its launches' order swapped reads the workspace before it is written (NaN)
    x = torch.randn(1, 3, 5, 6).half()
    wt = torch.randn(4, 3, 3, 3).half()
    params = {n: torch.rand(4) + 0.5 for n in ("bn_weight", "bn_bias", "bn_running_mean", "bn_running_var")}
    y = torch.zeros(1, 4, 5, 6)
    interpreter.run(k, {"x": x, "conv_weight": wt, **params, "y": y})
    ref = torch.nn.functional.conv2d(x.float(), wt.float(), padding=1)
    scale = params["bn_weight"] / torch.sqrt(params["bn_running_var"] + 1e-5)
    ref = torch.relu(ref * scale[:, None, None] + (params["bn_bias"] - params["bn_running_mean"] * scale)[:, None, None])
    torch.testing.assert_close(y, ref, rtol=1e-4, atol=1e-4)


def test_the_estimate_of_launches_adds_them():
    from npu_harness.cost import Estimate
    from npu_harness.cost.launches import combine

    def est(t, ideal, kind):
        return Estimate("ascend910b1", 40, 48, t + 20.0, t, 20.0, "MTE2", False, "memory", t / 2, 0.5, 1.0, 1000, 1000,
                        10, ideal_kind=kind, ideal_us=ideal)

    total = combine([est(10.0, 8.0, "cube"), est(5.0, 4.0, "memory")], "ascend910b1", 1000)
    assert total.time_us == pytest.approx(55.0) and total.kernel_us == pytest.approx(15.0)
    assert total.launch_overhead_us == pytest.approx(40.0)
    assert (total.ideal_kind, total.ideal_us) == ("cube", pytest.approx(8.0))
    assert total.gm_read_bytes == 2000 and "2 launches in order" in total.note


@pytest.mark.slow
def test_emulator_runs_the_launches_in_order_and_catches_a_wrong_order(tmp_path):
    from npu_harness.validate import validate_sim

    k, run = _conv_bn_task()
    project, ctx = lowering.lower(k)
    good = validate_sim(k, ctx.lowered, project, ctx, run)
    assert good.ok, good.detail
    assert good.report is not None and "2 launches in order" in good.report.note
    assert good.estimate_us == pytest.approx(good.report.time_us)
    # planted bug: the vector launch runs first, reading the workspace before the conv writes it (0xFF: NaN)
    bad = validate_sim(k, ctx.lowered, project, ctx, run, launch_order=[1, 0])
    assert not bad.ok and not bad.comparisons[0].ok


@pytest.mark.slow
def test_emulator_runs_a_vector_launch_before_a_cube_launch(tmp_path):
    from npu_harness.task import TaskRun
    from npu_harness.validate import validate_sim

    text = '''@kernel
def k(x: Tensor[f32, "M, K"], w: Tensor[f16, "N, K"], y: Tensor[f32, "M, N"]):
    h = workspace(f16, M, K)
    for blk in split(M, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(h[r, :], cast(relu(load(x[r, :])), f16))
    for blk in split(M, N, cores=AIC):
        with cube:
            acc = matmul(h[blk], w[blk], transpose_b=True)
        with vector:
            store(y[blk], acc)
'''
    k = _kernel(text)
    project, ctx = lowering.lower(k)
    g = torch.Generator().manual_seed(1)
    x, w = torch.randn(37, 70, generator=g), torch.randn(45, 70, generator=g).half()
    ref = torch.relu(x).half().float() @ w.float().T
    res = validate_sim(k, ctx.lowered, project, ctx, TaskRun([x, w], [ref]), work_dir=tmp_path)
    assert res.ok, res.detail + "\n".join(c.describe() for c in res.comparisons)
