"""Multi-stage kernels (issue 15): workspace tensors between cube stages, the stage graph's errors, the
interpreter, and the CHAIN kernel in the emulator (a planted missing SyncAll; examples/attention/sdpa runs at two sizes in
tests/test_gallery_e2e.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

import lowering
from ascend_dsl import interpreter, ir, parse_text, printer
from ascend_dsl.diagnostics import DslError

REPO = Path(__file__).resolve().parents[1]

HEAD = '''from ascend_dsl import kernel, Tensor, f32, f16

@kernel
def k(a: Tensor[f16, "M, K"], b: Tensor[f16, "K, N"], c: Tensor[f16, "N, L"], y: Tensor[f32, "M, L"]):
'''
STAGE1 = '''    for blk in split(M, N, cores=AIC):
        with cube:
            s = matmul(a[blk], b[blk])
        with vector:
            store(h[blk], cast(relu(s), f16))
'''
STAGE2 = '''    for blk in split(M, L, cores=AIC):
        with cube:
            acc = matmul(h[blk], c[blk])
        with vector:
            store(y[blk], acc)
'''
DECL = "    h = workspace(f16, M, N)\n"


def _kernel(text: str) -> ir.Kernel:
    return parse_text(text, "stages.adsl")[0].instantiate()


def _error(text: str):
    """The first diagnostic of lowering `text` (code, message, span)."""
    with pytest.raises(DslError) as e:
        lowering.lower(_kernel(text))
    return e.value.diagnostics[0]


def _lower_chain(k: ir.Kernel):
    """Lower `k` with the flash-attention fusion off (plan_flash.py): the unfused CHAIN kernel of its stages."""
    from lowering.context import PassContext
    from lowering.pipeline import run_pipeline
    from lowering.targets import get_target

    ctx = PassContext(get_target("ascend910b1"), "sdpa.adsl")
    ctx.allow_flash = False
    ctx.lowered = run_pipeline(k, ctx)
    return ctx.project, ctx


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_workspace_tensor_is_neither_input_nor_output_and_prints_as_declared():
    k = _kernel(HEAD + DECL + STAGE1 + STAGE2)
    assert [p.name for p in k.inputs] == ["a", "b", "c"] and [p.name for p in k.outputs] == ["y"]
    assert [(p.name, p.dtype.value, p.shape) for p in k.workspaces] == [("h", "f16", ("M", "N"))]
    assert "    h = workspace(f16, M, N)\n" in printer.kernel(k)


def test_two_stages_lower_to_one_chain_kernel_with_a_syncall_between():
    proj, ctx = lowering.lower(_kernel(HEAD + DECL + STAGE1 + STAGE2))
    assert ctx.lowered.kind is ir.KernelKind.CHAIN
    stages = ctx.lowered.body
    assert [(s.index, s.sync, s.reads, s.writes) for s in stages] == [(0, "", (), ("h",)), (1, "SyncAll", ("h",), ())]
    code = proj.files["k_kernel.cpp"]
    assert code.count("SyncAll();") == 1
    assert "REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm0, &tiling.s0.cubeTiling, mm1, &tiling.s1.cubeTiling);" in code
    body = code[code.index("REGIST_MATMUL_OBJ(&pipe"):]
    assert body.index("op.Process(tiling.s0") < body.index("SyncAll();") < body.index("op.Process(tiling.s1")
    assert {"k_s0_tiling.h", "k_s1_tiling.h"} <= set(proj.files)
    assert [t["name"] for t in proj.manifest["tensors"]] == ["a", "b", "c", "y"]


def test_stages_run_in_dependency_order_not_source_order_when_independent():
    """An independent stage keeps its place; the graph orders the rest (source order among equals)."""
    text = (HEAD.replace('y: Tensor[f32, "M, L"]', 'y: Tensor[f32, "M, L"], z: Tensor[f32, "M, N"]') + DECL + STAGE1
            + '''    for blk in split(M, N, cores=AIC):
        with cube:
            t = matmul(a[blk], b[blk])
        with vector:
            store(z[blk], t)
''' + STAGE2)
    _, ctx = lowering.lower(_kernel(text))
    assert [(s.index, s.sync) for s in ctx.lowered.body] == [(0, ""), (1, ""), (2, "SyncAll")]


def test_workspace_read_before_any_stage_writes_it_is_located():
    text = HEAD + DECL + STAGE2
    err = _error(text)
    assert err.code == "KERNEL-STRUCTURE" and "read before any stage writes it" in err.message
    assert err.span.line == _line(text, "acc = matmul(h[blk]")


def test_workspace_written_by_two_stages_or_never_read():
    err = _error(HEAD + DECL + STAGE1 + STAGE1.replace("s = ", "s2 = ").replace("(s)", "(s2)") + STAGE2)
    assert err.code == "KERNEL-STRUCTURE" and "written by 2 stages" in err.message
    text = HEAD.replace('c: Tensor[f16, "N, L"], y: Tensor[f32, "M, L"]', 'y: Tensor[f32, "M, N"]') + DECL + STAGE1 \
        + STAGE1.replace("store(h[blk], cast(relu(s), f16))", "store(y[blk], s)")
    err = _error(text)
    assert err.code == "KERNEL-STRUCTURE" and "written but never read" in err.message
    assert err.span.line == _line(text, "h = workspace")


def test_stages_in_a_cycle_are_reported():
    text = '''from ascend_dsl import kernel, Tensor, f32, f16

@kernel
def k(b: Tensor[f16, "N, N"], y: Tensor[f32, "N, N"]):
    h = workspace(f16, N, N)
    g = workspace(f16, N, N)
    for blk in split(N, N, cores=AIC):
        with cube:
            s = matmul(g[blk], b[blk])
        with vector:
            store(h[blk], cast(s, f16))
    for blk in split(N, N, cores=AIC):
        with cube:
            t = matmul(h[blk], b[blk])
        with vector:
            store(g[blk], cast(t, f16))
'''
    err = _error(text)
    assert err.code == "KERNEL-STRUCTURE" and "cycle" in err.message


def test_vector_split_after_a_cube_split_is_a_second_launch():
    """A vector split loop reading a stage's workspace tensor: a kernel of two launches (tests/test_launches.py)."""
    text = HEAD + DECL + STAGE1 + '''    for blk2 in split(M, cores=AIV):
        for r in tile(blk2, size=auto, buffers=2):
            store(y[r, :], cast(load(h[r, :]), f32))
'''
    _, ctx = lowering.lower(_kernel(text.replace('"N, L"', '"N, N"').replace('"M, L"', '"M, N"')))
    assert ctx.lowered.kind is ir.KernelKind.LAUNCHES
    assert [la.kernel.kind for la in ctx.lowered.body] == [ir.KernelKind.MIX, ir.KernelKind.VECTOR]


def test_workspace_dims_must_be_shape_symbols():
    with pytest.raises(DslError) as e:
        _kernel(HEAD + "    h = workspace(f16, M, Q)\n" + STAGE1 + STAGE2)
    assert e.value.codes == ["UNDEFINED-NAME"]


def test_interpreter_runs_stages_in_order_against_sdpa():
    from ascend_dsl import load_file

    k = load_file(REPO / "examples/attention/sdpa.adsl")[0].instantiate()
    g = torch.Generator().manual_seed(0)
    q, kk, v = (torch.randn(2, *s, generator=g).half() for s in ((9, 16), (13, 16), (13, 24)))
    o = torch.empty(2, 9, 24)
    interpreter.run(k, {"q": q, "k": kk, "v": v, "o": o}, {"scale": 0.25})
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), kk.float(), v.float(), scale=0.25)
    assert torch.allclose(o, ref, atol=2e-3)


@pytest.mark.slow
def test_emulator_catches_stages_without_syncall(tmp_path):
    """Planted bug: stage 1 reads the probabilities without waiting for every core's stage 0. At 2 x 130 x 200
    the stages split the work differently (stage 0: whole rows of N per block; stage 1: blocks of M x Dv), so a
    core reads rows of p another core wrote (with equal splits each core would read only its own rows)."""
    from ascend_dsl import load_file
    from npu_harness.validate import load_task_for, validate_sim

    k = load_file(REPO / "examples/attention/sdpa.adsl")[0].instantiate()
    proj, ctx = _lower_chain(k)  # the chained form (sdpa lowers to FLASH by default)
    name = "sdpa_kernel.cpp"
    assert proj.files[name].count("    SyncAll();") == 1
    bad = dataclasses.replace(proj, files={**proj.files, name: proj.files[name].replace("    SyncAll();", "    //", 1)})
    run = load_task_for(k, REPO / "examples/attention/sdpa.py", overrides={"Bt": 2, "M": 130, "N": 200})
    res = validate_sim(k, ctx.lowered, bad, ctx, run, work_dir=tmp_path)
    assert not res.ok and "GM-RACE" in {e.code for e in res.sim_errors}, res.detail


@pytest.mark.slow
def test_emulator_catches_a_workspace_read_before_any_write(tmp_path):
    """Planted bug: stage 0 does no work, so stage 1 multiplies probabilities nothing wrote: GM-UNINIT at the read
    (the workspace region is tracked byte by byte from launch; writes define it)."""
    from ascend_dsl import load_file
    from npu_harness.validate import load_task_for, validate_sim

    k = load_file(REPO / "examples/attention/sdpa.adsl")[0].instantiate()
    proj, ctx = _lower_chain(k)  # the chained form (sdpa lowers to FLASH by default)
    name = "sdpa_kernel.cpp"
    old = "        op.Process(tiling.s0.cubeTiling);\n"
    assert proj.files[name].count(old) == 1
    bad = dataclasses.replace(proj, files={**proj.files, name: proj.files[name].replace(old, "")})
    run = load_task_for(k, REPO / "examples/attention/sdpa.py", overrides={"Bt": 2, "M": 20, "N": 24})
    res = validate_sim(k, ctx.lowered, bad, ctx, run, work_dir=tmp_path)
    errs = [e for e in res.sim_errors if e.code == "GM-UNINIT"]
    assert not res.ok and errs and "workspace" in errs[0].message, res.detail


def test_interpreter_gqa_and_mqa_index_key_value_heads_as_torch():
    from ascend_dsl import load_file

    g = torch.Generator().manual_seed(1)
    for name, hkv in (("gqa", 2), ("mqa", 1)):
        k = load_file(REPO / f"examples/attention/{name}.adsl")[0].instantiate()
        q = torch.randn(2, 6, 5, 16, generator=g).half()
        kk, v = torch.randn(2, hkv, 7, 16, generator=g).half(), torch.randn(2, hkv, 7, 8, generator=g).half()
        o = torch.empty(2, 6, 5, 8)
        interpreter.run(k, {"q": q, "k": kk, "v": v, "o": o}, {"scale": 0.25})
        ref = torch.nn.functional.scaled_dot_product_attention(q.float(), kk.float(), v.float(), scale=0.25,
                                                                enable_gqa=hkv > 1)
        assert torch.allclose(o, ref, atol=2e-3), name


def test_batch_over_a_product_of_dims_prints_and_offsets_key_value_heads():
    from ascend_dsl import load_file

    k = load_file(REPO / "examples/attention/gqa.adsl")[0].instantiate()
    assert k.body[0].batch == ("B", "H") and "split(B * H, M, N, cores=AIC)" in printer.kernel(k)
    proj, _ = lowering.lower(k)
    code = proj.files["gqa_kernel.cpp"]
    assert "kGm[(bi / (H_)) * Hkv_ * N_ * Dk_ + (bi % H_) / (H_ / Hkv_) * N_ * Dk_ + n0 * Dk_]" in code
    assert "Hkv != 0 && H % Hkv == 0" in proj.files["gqa_main.cpp"]


@pytest.mark.slow
def test_grouped_heads_that_do_not_divide_are_a_launch_error(tmp_path):
    from ascend_dsl import load_file
    from npu_harness.task import TaskRun
    from npu_harness.validate import validate_sim

    k = load_file(REPO / "examples/attention/gqa.adsl")[0].instantiate()
    proj, ctx = lowering.lower(k)
    q, kk, v = torch.randn(1, 6, 8, 16).half(), torch.randn(1, 4, 8, 16).half(), torch.randn(1, 4, 8, 16).half()
    res = validate_sim(k, ctx.lowered, proj, ctx, TaskRun([q, kk, v], [torch.zeros(1, 6, 8, 16)]), work_dir=tmp_path)
    assert not res.ok and "SHAPE" in {e.code for e in res.sim_errors}, res.detail


CONV = '''    for blk3 in split(N, K, OH, OW, cores=AIC):
        with cube:
            acc3 = conv2d(x[blk3], w[blk3])
        with vector:
            store(z[blk3], acc3)
'''
CONV_HEAD = HEAD.replace('y: Tensor[f32, "M, L"]):', 'y: Tensor[f32, "M, L"], x: Tensor[f16, "N, C, H, W"],\n'
                         '      w: Tensor[f16, "K, C, KH, KW"], z: Tensor[f32, "N, K, OH, OW"], y2: Tensor[f16, "M, N"]):')


@pytest.mark.parametrize("body, kinds", [(DECL + STAGE1 + STAGE2 + CONV, ["chain", "conv"]),
                                         (DECL + CONV + STAGE1 + STAGE2, ["conv", "chain"])],
                         ids=["conv-after-stages", "stages-after-conv"])
def test_a_convolution_beside_stages_is_a_launch_of_its_own(body, kinds):
    _, ctx = lowering.lower(_kernel(CONV_HEAD + body))
    assert [la.kernel.kind.value for la in ctx.lowered.body] == kinds


def test_a_workspace_beside_a_lone_convolution_is_unused_and_located():
    text = CONV_HEAD + DECL + CONV
    err = _error(text)
    assert err.code == "KERNEL-STRUCTURE" and "never written or read" in err.message
    assert err.span.line == _line(text, "h = workspace")


@pytest.mark.parametrize("body", [STAGE1.replace("h[blk]", "y2[blk]") + CONV], ids=["conv-after-matmul"])
def test_a_convolution_is_not_a_stage_and_is_rejected_at_its_line(body):
    text = CONV_HEAD + body
    with pytest.raises(DslError) as e:
        _kernel(text)
    d = e.value.diagnostics[0]
    assert d.code == "UNSUPPORTED" and "convolution split is the only loop" in d.message
    assert d.span.line == _line(text, "split(N, K, OH, OW, cores=AIC)")
