"""Cube / vector split (MIX kernels): front end, plan_cube checks, emitted kernel and host tiling
(golden), interpreter, emulator TILING report and the cost model's cube time."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

import ascend_dsl
import lowering
from ascend_dsl import interpreter, ir, printer
from ascend_dsl.diagnostics import DslError
from lowering.passes import plan_cube

REPO = Path(__file__).resolve().parent.parent

KERNEL = '''@kernel(T=[f16, bf16])
def mm(a: Tensor[T, "M, K"], b: Tensor[T, "K, N"], bias: Tensor[f32, "N"], c: Tensor[f32, "M, N"]):
    for blk in split(M, N, cores=AIC):
        with cube:
            acc = matmul(a[blk], b[blk], bias=bias)  # MATMUL
        with vector:
            store(c[blk], relu(acc))  # STORE
'''


def _marker_line(text: str, mark: str) -> int:
    hits = [i for i, line in enumerate(text.splitlines(), 1) if f"# {mark}" in line]
    assert len(hits) == 1, (mark, hits)
    return hits[0]


def _col(text: str, needle: str, mark: str) -> int:
    return text.splitlines()[_marker_line(text, mark) - 1].index(needle) + 1


def _kernel(text: str, **dtypes) -> ir.Kernel:
    return ascend_dsl.parse_text(text, file="cube.adsl")[0].instantiate(dtypes)


def _error(text: str, target: str = "ascend910b1", lower: bool = True) -> DslError:
    with pytest.raises(DslError) as ei:
        k = _kernel(text)
        if lower:
            lowering.lower(k, target, "cube.adsl")
    assert "Traceback" not in ei.value.render()
    return ei.value


def _expect(err: DslError, code: str, mark: str, needle: str, text: str, msg: str):
    d = next((d for d in err.diagnostics if d.code == code), None)  # errors are collected: find ours
    assert d is not None, err.render()
    assert (d.span.file, d.span.line, d.span.col) == ("cube.adsl", _marker_line(text, mark), _col(text, needle, mark)), \
        err.render()
    assert msg in d.message, err.render()
    return d


# ----------------------------------------------------------------------------- front end


def test_cube_kernel_parses_and_round_trips():
    k = _kernel(KERNEL)
    loop = ir.cube_loop(k)
    assert (loop.m, loop.n, loop.k, loop.batch) == ("M", "N", "K", ())
    assert loop.matmul == ir.Matmul("acc", "a", "b", "bias")
    assert [p.name for p in k.inputs] == ["a", "b", "bias"] and [p.name for p in k.outputs] == ["c"]
    k2 = _kernel(printer.kernel(k))
    assert k2.body == k.body and k2.params == k.params


@pytest.mark.parametrize("old,new,code,mark,needle,msg", [
    ('a: Tensor[T, "M, K"]', 'a: Tensor[f32, "M, K"]', "DTYPE-UNSUPPORTED", "MATMUL", "a[blk]",
     "the cube unit multiplies f16 or bf16 operands"),
    ('bias: Tensor[f32, "N"]', 'bias: Tensor[f16, "N"]', "DTYPE-UNSUPPORTED", "MATMUL", "bias)",
     "the bias is added to the f32 accumulator"),
    ('b: Tensor[T, "K, N"]', 'b: Tensor[T, "N, K"]', "INDEX", "MATMUL", "b[blk]", "it must be [K, N]"),
    ("store(c[blk], relu(acc))", "store(c[blk], cast(relu(acc), f16))", "DTYPE-MISMATCH", "STORE", "cast(",
     "storing f16 into 'c' of dtype f32"),
    ("matmul(a[blk], b[blk], bias=bias)", "matmul(a[blk], b[blk], bias=bias, trans_a=True)", "ARGS", "MATMUL",
     "matmul(", "unknown argument trans_a"),
    ("store(c[blk], relu(acc))", "store(bias[blk], relu(acc))", "INDEX", "STORE", "bias[blk]",
     "needs a tensor shaped like the output [M, N]"),
])
def test_front_end_errors(old, new, code, mark, needle, msg):
    text = KERNEL.replace(old, new)
    d = _expect(_error(text, lower=False), code, mark, needle, text, msg)
    if code == "INDEX" and "[K, N]" in msg:
        assert "transpose_b=True" in d.hint


def test_vector_block_is_required():
    text = KERNEL.replace("        with vector:\n            store(c[blk], relu(acc))  # STORE\n", "")
    err = _error(text.replace("for blk in split", "for blk in split"), lower=False)
    assert err.diagnostics[0].code == "KERNEL-STRUCTURE" and "with vector:" in err.diagnostics[0].message


def test_vector_block_must_read_the_accumulator():
    text = KERNEL.replace("store(c[blk], relu(acc))", "store(c[blk], relu(load(c[blk])))")
    err = _error(text, lower=False)
    assert err.diagnostics[0].code == "KERNEL-STRUCTURE" and "never reads the accumulator 'acc'" in err.diagnostics[0].message


def test_matmul_outside_a_cube_block():
    text = """@kernel
def k(x: Tensor[f16, "N"], y: Tensor[f16, "N"]):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], matmul(x[t], x[t]))  # MARK
"""
    d = _expect(_error(text, lower=False), "KERNEL-STRUCTURE", "MARK", "matmul(", text, "goes into a `with cube:` block")
    assert "cores=AIC" in d.hint


def test_cube_block_holds_only_the_matmul():
    text = KERNEL.replace("            acc = matmul(a[blk], b[blk], bias=bias)  # MATMUL\n",
                          "            acc = matmul(a[blk], b[blk], bias=bias)\n            d = relu(acc)  # MATMUL\n")
    err = _error(text, lower=False)
    assert err.diagnostics[0].code == "KERNEL-STRUCTURE" and "one assignment" in err.diagnostics[0].message
    assert err.diagnostics[0].hint.startswith("the epilogue")


# ----------------------------------------------------------------------------- hardware checks (plan_cube)


@pytest.mark.parametrize("base,code,msg,hint", [
    ("base_m=40", "CUBE-FRACTAL", "base_m=40 is not a multiple of 16", "use base_m=32"),
    ("base_m=256, base_k=128, base_n=16", "L0A-CAPACITY", "needs 131072 B of L0A; ascend910b1 has 65536 B",
     "base_m x base_k <= 16384"),
    ("base_m=16, base_k=256, base_n=128", "L0B-CAPACITY", "needs 131072 B of L0B", "base_k x base_n <= 16384"),
    ("base_m=256, base_n=256, base_k=16", "L0C-CAPACITY", "needs 262144 B of L0C", "base_m x base_n <= 32768"),
    ("base_m=128, base_n=256", "UB-CAPACITY", "the epilogue needs 524288 B of Unified Buffer", "smaller base_m"),
])
def test_capacity_and_fractal_errors_point_at_the_matmul(base, code, msg, hint):
    text = KERNEL.replace("bias=bias)", f"bias=bias, {base})")
    d = _expect(_error(text), code, "MATMUL", "acc = matmul", text, msg)
    assert hint in d.hint


def test_l1_capacity_error():
    """L1 only binds when L0A/L0B fit with a small L1 (planted: a target with 64 KB of L1)."""
    k = _kernel(KERNEL.replace("bias=bias)", "bias=bias, base_m=64, base_n=64, base_k=64)"))
    small = dataclasses.replace(lowering.get_target("ascend910b1"), l1_bytes=65536)
    ctx = lowering.PassContext(small, "cube.adsl")
    for p in lowering.PIPELINE:
        if p.name == "plan_cube":
            break
        k = p.run(k, ctx)
    with pytest.raises(DslError) as ei:
        plan_cube.run(k, ctx)
    d = ei.value.diagnostics[0]
    assert d.code == "L1-CAPACITY" and "needs 65792 B of L1" in d.message and "L1 use = 4 x" in d.notes[0]


def test_whole_row_epilogue_cannot_set_base_n():
    text = KERNEL.replace("bias=bias)", "bias=bias, base_n=64)").replace(
        "store(c[blk], relu(acc))", "store(c[blk], acc - max(acc, axis=1))")
    _expect(_error(text), "UNSUPPORTED", "MATMUL", "acc = matmul", text, "a base block spans all N columns")


def test_mix_kernels_are_rejected_on_coupled_310p():
    err = _error(KERNEL.replace("T=[f16, bf16]", "T=[f16]"), target="ascend310p")
    d = err.diagnostics[0]
    assert d.code == "MIX-UNSUPPORTED" and "coupled mode" in d.message and "ascend910b1" in d.hint
    assert d.span.line == 3


def test_auto_base_block_fits_every_budget():
    for example in ("fuse/matmul_gelu", "fuse/matmul_scale_residual", "matmul/matmul_square"):
        k = ascend_dsl.load_file(REPO / f"examples/{example}.adsl")[0].instantiate()
        for name, target in lowering.all_targets().items():
            if target.soc_family == "ascend310p":
                continue
            lowered = lowering.run_pipeline(k, lowering.PassContext(target))
            loop = ir.cube_loop(lowered)
            p = loop.plan
            assert p.base_m % 16 == 0 and p.base_n % 16 == 0 and p.base_k % 16 == 0
            assert plan_cube.l0a_bytes(p.base_m, p.base_k, 2) <= target.l0a_bytes
            assert plan_cube.l0c_bytes(p.base_m, p.base_n) <= target.l0c_bytes
            # epilogue bands (passes/epilogue_bands.py): the UB holds one band of band_rows rows of the block
            rows = p.band_rows or p.base_m
            assert p.band_rows < p.base_m and p.band_rows % 16 == 0
            assert p.direct or plan_cube.ub_bytes(loop.epilogue.buffers_decl, rows, p.base_n) <= target.ub_budget, name
    gelu_k = ascend_dsl.load_file(REPO / "examples/fuse/matmul_gelu.adsl")[0].instantiate()
    gelu = lowering.run_pipeline(gelu_k, lowering.PassContext(lowering.get_target("ascend910b1")))
    # f32 buffers of 0.5 KB per row: the cube keeps 256 x 128; the epilogue runs on double-buffered bands of 48 rows
    # from a GM slot (UB budget less 16 rows kept free for split-K's partial rows)
    plan = ir.cube_loop(gelu).plan
    assert (plan.base_m, plan.base_n, plan.band_rows) == (256, 128, 48)
    assert {b.num for b in ir.cube_loop(gelu).epilogue.buffers_decl if b.position is not ir.Position.VECCALC} == {2}
    # without the workspace region (chain stages: no split-K, no bands) the UB caps the block: double-buffered queues
    # would leave a 64 x 64 block; single buffers give the cube 128 x 64
    gelu = lowering.run_pipeline(gelu_k, lowering.PassContext(lowering.get_target("ascend910b1"), allow_split_k=False))
    assert (ir.cube_loop(gelu).plan.base_m, ir.cube_loop(gelu).plan.base_n, ir.cube_loop(gelu).plan.band_rows) == (128, 64, 0)
    assert {b.num for b in ir.cube_loop(gelu).epilogue.buffers_decl} == {1}


def test_single_buffered_epilogue_only_when_it_gives_the_cube_a_larger_block(tmp_path):
    """plan_cube trades the epilogue's double buffers for a base block of at least 128 x 128 (fewer GM -> L1 bytes
    per MAC), never when the double-buffered block is already that large or the sizes are given."""
    def loop(epilogue: str, base: str = "", bands: bool = False):
        src = tmp_path / "k.adsl"
        src.write_text(f'''from ascend_dsl import kernel, Tensor, f32, f16
@kernel
def k(a: Tensor[f16, "M, K"], b: Tensor[f16, "K, N"], c: Tensor[f16, "M, N"]):
    for blk in split(M, N, cores=AIC):
        with cube:
            acc = matmul(a[blk], b[blk]{base})
        with vector:
            {epilogue}
''')
        k = ascend_dsl.load_file(src)[0].instantiate()
        # bands off (allow_split_k=False, as in chain stages): the UB-capped path this test is about
        low = ir.cube_loop(lowering.run_pipeline(k, lowering.PassContext(lowering.get_target("ascend910b1"),
                                                                         allow_split_k=bands)))
        return (low.plan.base_m, low.plan.base_n), {b.name: b.num for b in low.epilogue.buffers_decl}

    # f32 acc (64 KB at 128 x 128) + f16 out (32 KB), double-buffered 192 KB > UB budget: single buffers, 128 x 128
    block, nums = loop("store(c[blk], cast(relu(acc), f16))")
    assert block == (128, 128) and set(nums.values()) == {1}, nums
    # sizes given: the buffers stay double
    block, nums = loop("store(c[blk], cast(relu(acc), f16))", ", base_m=64, base_n=64")
    assert block == (64, 64) and 2 in nums.values(), nums
    # with epilogue bands the cube keeps 256 x 128 and the queues stay double-buffered
    block, nums = loop("store(c[blk], cast(relu(acc), f16))", bands=True)
    assert block == (256, 128) and nums["accLocal"] == nums["cLocal"] == 2, nums


# ----------------------------------------------------------------------------- emitted code


GOLDEN = [("fuse/matmul_bias_relu", {}), ("matmul/matmul_transposed_b", {"T": "bf16"}), ("fuse/matmul_softmax", {}),
          ("matmul/matmul_batched", {})]


@pytest.mark.parametrize("example,dtypes", GOLDEN, ids=lambda c: str(c).replace("/", "_"))
def test_emitted_mix_kernel_and_host_tiling(example, dtypes, golden):
    adsl = REPO / "examples" / f"{example}.adsl"
    k = ascend_dsl.load_file(adsl)[0].instantiate(dtypes)
    project, _ = lowering.lower(k, "ascend910b1", adsl.name)
    assert project.manifest["kernel_type"] == "MIX_AIC_1_2"
    suffix = "_".join(f"{a}{b}" for a, b in dtypes.items())
    for fname in (f"{k.name}_kernel.cpp", f"{k.name}_tiling.h"):
        golden.check(f"{k.name}{'_' + suffix if suffix else ''}/{fname}", project.files[fname])


def test_direct_store_uses_iterate_all_and_epilogues_use_get_tensor_c():
    def kernel_text(example):
        adsl = REPO / "examples" / f"{example}.adsl"
        project, _ = lowering.lower(ascend_dsl.load_file(adsl)[0].instantiate(), "ascend910b1", adsl.name)
        return project.files[f"{adsl.stem}_kernel.cpp"]

    direct, fused = kernel_text("matmul/matmul_bias"), kernel_text("fuse/matmul_bias_relu")
    assert "mm.IterateAll(cGm[cBase]);" in direct and "GetTensorC<true>(accLocal" not in direct
    # UB only on the split-K path (plan_split_k): its partial and sum buffers
    assert {line.strip() for line in direct.splitlines() if "InitBuffer" in line} == {
        "pipe.InitBuffer(sumBuf_, partRows_ * rowPitch_ * sizeof(float));",
        "pipe.InitBuffer(partBuf_, partRows_ * tiling.cubeTiling.baseN * sizeof(float));"}
    # epilogue bands: the block goes to this AIV's GM slot, each band is copied in like an input
    assert "mm.template Iterate<true>()" in fused and "mm.template GetTensorC<true>(slotGm_, false, true);" in fused
    assert "CopyBlockGmToUb(accLocal, slotGm_[bandOff_], count, rowLen_, rowPitch_, rowPitch_);" in fused
    for text in (direct, fused):
        assert "KERNEL_TYPE_MIX_AIC_1_2" in text and "REGIST_MATMUL_OBJ(" in text and "mm.SetBias(biasGm[n0]);" in text
        assert '#include "lib/matmul_intf.h"' in text


# ----------------------------------------------------------------------------- interpreter, emulator, cost


def test_interpreter_batched_transposed_matmul():
    text = '''@kernel
def bmm(a: Tensor[f16, "Bt, K, M"], b: Tensor[f16, "N, K"], r: Tensor[f32, "Bt, M, N"], c: Tensor[f32, "Bt, M, N"]):
    for blk in split(Bt, M, N, cores=AIC):
        with cube:
            acc = matmul(a[blk], b[blk], transpose_a=True, transpose_b=True)
        with vector:
            e = exp(acc - max(acc, axis=1))
            store(c[blk], e / sum(e, axis=1) + load(r[blk]))
'''
    k = _kernel(text)
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(3, 7, 5, generator=g).half(), torch.randn(6, 7, generator=g).half()
    r, c = torch.randn(3, 5, 6, generator=g), torch.empty(3, 5, 6)
    interpreter.run(k, {"a": a, "b": b, "r": r, "c": c})
    ref = torch.softmax(a.float().transpose(1, 2) @ b.float().T, dim=-1) + r
    assert torch.allclose(c, ref, atol=1e-5)


def _validate(example: str, overrides: dict):
    from npu_harness.gallery import Example, validate

    ex = Example(example.split("/")[0], example.split("/")[1], REPO / f"examples/{example}.adsl",
                 REPO / f"examples/{example}.py")
    return validate(ex, {}, overrides)


def test_whole_rows_too_long_run_the_launches_form_and_the_fused_kernel_alone_is_a_tiling_error():
    res = _validate("fuse/matmul_softmax", {"M": 16, "K": 16, "N": 4000})  # the host's pick: the row fallback
    assert res.ok and "2 launches in order" in res.report.note, res.detail
    from lowering import lower
    from npu_harness.gallery import discover
    from npu_harness.validate import load_task_for, validate_sim

    ex = next(e for e in discover() if e.name == "matmul_softmax")
    kernel = ex.source.instantiate(ex.dtypes[0])
    project, ctx = lower(kernel)
    run = load_task_for(kernel, ex.task, overrides={"M": 16, "K": 16, "N": 4000})
    res = validate_sim(kernel, ctx.lowered, project, ctx, run, form="fused")
    assert not res.ok and [e.code for e in res.sim_errors] == ["TILING"], res.detail
    assert "whole rows of N" in res.sim_errors[0].message


def test_report_gives_cube_time_for_matmul():
    res = _validate("matmul/matmul_square", {"M": 256, "N": 256, "K": 256})
    assert res.ok, res.detail
    est = res.report
    assert est.bottleneck == "M" and est.roofline_kind in ("cube", "memory")
    # HBM reads: each operand once (the re-reads of A / B panels hit L2: 1 MB of operands and output fit its 192 MB)
    assert est.gm_write_bytes == 256 * 256 * 4 and est.gm_read_bytes == 2 * 256 * 256 * 2
    assert res.counters["cube_operand_bytes"] == 2 * 256 * 256 * 2
    assert sum(b["gm2l1"] for b in res.counters["blocks"]) > 2 * 256 * 256 * 2  # L1 loads: panels re-read
    assert sum(b["cube_macs"] for b in res.counters["blocks"]) == 256 ** 3


def test_wide_base_block_only_when_every_core_gets_a_block():
    """plan_cube's 256-row base block halves the blocks of a small output; the host falls back to 128 rows then."""
    res = _validate("matmul/matvec", {"M": 2048, "K": 256})  # 2048 / 256 = 8 blocks < 48 cores: 128 rows, 16 blocks
    assert res.ok, res.detail
    assert sum(1 for b in res.counters["blocks"] if b.get("cube_macs")) == 16
    res = _validate("matmul/matmul_square", {"M": 4096, "N": 2048, "K": 64})  # 16 x 16 blocks of 256 x 128 >= 48
    assert res.ok, res.detail
    assert sum(b["cube_macs"] for b in res.counters["blocks"]) == 4096 * 2048 * 64
    # 256 blocks over 48 AIVs round-robin: 6 at most (a 128-row block would give 11)
    assert max(b["cube_macs"] for b in res.counters["blocks"]) == 6 * 256 * 128 * 64


def test_more_matrices_in_the_batch_than_cores():
    """60 batches of one base block each on 48 vector cores: cores take several blocks round-robin."""
    res = _validate("matmul/matmul_batched", {"Bt": 60, "M": 20, "N": 24, "K": 40})
    assert res.ok, res.detail
    assert len(res.counters["blocks"]) == 48
