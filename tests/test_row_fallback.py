"""Row fallback (issue 14 item 2, issue 15 item 4; ascend_dsl/row_fallback.py): a matmul split whose epilogue
reduces whole rows is emitted fused (MIX) and cut into launches (autosplit), and the host runs the fused kernel
where its tiling finds a base block and a static estimate says it is not slower, the launches otherwise. Both forms
are validated against the gallery's tasks at its odd shape; a long row picks the launches and passes; the fused
kernel forced at a long row is TILING."""

from __future__ import annotations

import pytest

import lowering
from ascend_dsl import ir, parse_text
from npu_harness.gallery import discover, launch_at
from npu_harness.row_fallback import estimates, form_blocks, pick
from npu_harness.validate import load_task_for, validate_sim

GALLERY = {e.name: e for e in discover() if e.category == "fuse"}
#: the gallery's matmul kernels whose epilogue reduces whole rows
ROWS = ("matmul_softmax", "linear_log_softmax", "linear_logsumexp", "linear_sum_max_logsumexp", "linear_relu_mean",
        "batched_matmul_row_max", "attention_scores")

MATMUL = '''@kernel
def k(x: Tensor[f16, "M, K"], w: Tensor[f16, "N, K"], y: Tensor[f32, "{y}"]):
    for blk in split(M, N, cores=AIC):
        with cube:
            acc = matmul(x[blk], w[blk], transpose_b=True)
        with vector:
            {body}
'''


def _kernel(text: str) -> ir.Kernel:
    return parse_text(text, "row_fallback.adsl")[0].instantiate()


@pytest.mark.parametrize("name", ROWS)
def test_a_row_reduction_epilogue_is_emitted_fused_with_its_launches_beside_it(name):
    ex = GALLERY[name]
    kernel = ex.source.instantiate(ex.dtypes[0])
    assert kernel.fallback is not None, kernel.fallback_miss
    project, ctx = lowering.lower(kernel, source_name=ex.adsl.name)
    assert ctx.lowered.kind is ir.KernelKind.MIX
    assert ctx.fallback.lowered.kind is ir.KernelKind.LAUNCHES
    assert [la.kernel.kind for la in ctx.fallback.lowered.body] == [ir.KernelKind.MIX, ir.KernelKind.VECTOR]
    assert project.manifest["fallback"]["dir"] == "fallback/" and project.fallback.launches


@pytest.mark.parametrize("body,y", [
    ("store(y[blk], relu(acc) * 0.5)", "M, N"),  # element-wise: a fused block of any N
    ("store(y[blk], cumsum(acc, axis=1))", "M, N"),  # a scan: cut into launches whatever N is (autosplit)
])
def test_other_epilogues_have_no_fallback(body, y):
    assert _kernel(MATMUL.format(body=body, y=y)).fallback is None


def test_a_row_that_fits_keeps_the_fused_kernel_and_a_long_one_runs_the_launches():
    kernel = _kernel(MATMUL.format(body="store(y[blk], max(acc, axis=1))", y="M"))
    project, ctx = lowering.lower(kernel)
    assert form_blocks(kernel, project, ctx, {"M": 64, "K": 64, "N": 256}, {}) == ("fused", pytest.approx(1, abs=47))
    form, blocks = form_blocks(kernel, project, ctx, {"M": 4096, "K": 4096, "N": 8192}, {})
    assert form == "fallback" and blocks > 0


def _softmax_project():
    ex = GALLERY["matmul_softmax"]
    kernel = ex.source.instantiate(ex.dtypes[0])
    project, ctx = lowering.lower(kernel, source_name=ex.adsl.name)
    return kernel, project, ctx


def test_a_fused_kernel_that_would_re_read_b_per_few_rows_runs_the_launches():
    """4096 x 4096 x 512: the fused tiling finds a block (16 rows of 512), but B is re-read 256 times; the
    launches' 256 x 128 blocks are faster (docs/cost_model.md, session 32). The old rule (fused whenever its tiling
    launches) kept the fused kernel here."""
    kernel, project, ctx = _softmax_project()
    shape = {"M": 4096, "K": 4096, "N": 512}
    fused_us, launches_us = estimates(ctx.lowered, project, ctx, shape, {})
    assert launches_us < fused_us / 2
    assert form_blocks(kernel, project, ctx, shape, {})[0] == "fallback"
    assert pick(kernel, ctx.lowered, project, ctx, shape, {}).name == "fallback"


def test_a_small_gemm_whose_rows_fit_stays_fused():
    """512 x 256 x 512: B re-read 32 times from L2 costs less than the second launch and the workspace."""
    kernel, project, ctx = _softmax_project()
    shape = {"M": 512, "K": 256, "N": 512}
    fused_us, launches_us = estimates(ctx.lowered, project, ctx, shape, {})
    assert fused_us < launches_us
    assert form_blocks(kernel, project, ctx, shape, {})[0] == "fused"


def test_the_estimate_is_none_where_the_fused_tiling_finds_no_block():
    kernel, project, ctx = _softmax_project()
    assert estimates(ctx.lowered, project, ctx, {"M": 512, "K": 256, "N": 2048}, {}) is None


@pytest.mark.parametrize("name", ["batched_matmul_row_max", "attention_scores"])
def test_a_batched_row_reduction_launches_at_4096_cubed(name):
    """(The 2-D kernels launch at 4096^3 through the gallery's SCALE_SHAPES: tests/test_benchmark_shapes.py.)"""
    ex = GALLERY[name]
    blocks, symbols = launch_at(ex, ex.dtypes[0], {"Bt": 8, "M": 4096, "K": 4096, "N": 4096})
    assert blocks > 0 and symbols["N"] == 4096


def _run(name: str, shape: dict, form: str | None):
    ex = GALLERY[name]
    kernel = ex.source.instantiate(ex.dtypes[0])
    run = load_task_for(kernel, ex.task, overrides=shape)
    project, ctx = lowering.lower(kernel, source_name=ex.adsl.name)
    return validate_sim(kernel, ctx.lowered, project, ctx, run, form=form)


@pytest.mark.slow
@pytest.mark.parametrize("name", ROWS)
def test_the_launches_form_passes_at_the_gallerys_odd_shape(name):
    shape = next((s for s in GALLERY[name].shapes() if s), {})
    result = _run(name, shape, "fallback")
    assert result.ok, "\n".join([result.summary(), *(c.describe() for c in result.comparisons), result.detail])


SOFTMAX_LONG = {"M": 37, "K": 45, "N": 1301}  # a row of 1301: no fused base block holds it


@pytest.mark.slow
def test_a_long_row_runs_the_launches_and_passes():
    ex = GALLERY["matmul_softmax"]
    kernel = ex.source.instantiate(ex.dtypes[0])
    project, ctx = lowering.lower(kernel, source_name=ex.adsl.name)
    assert pick(kernel, ctx.lowered, project, ctx, SOFTMAX_LONG, {}).name == "fallback"
    result = _run("matmul_softmax", SOFTMAX_LONG, None)
    assert result.ok, "\n".join([result.summary(), *(c.describe() for c in result.comparisons), result.detail])


def test_the_fused_kernel_forced_at_a_long_row_is_a_tiling_error_not_a_result():
    result = _run("matmul_softmax", SOFTMAX_LONG, "fused")
    assert not result.ok and "error[TILING]" in result.detail


def _drawn(n: int):
    import random

    from npu_harness.fuzz.gen import _row_fallback

    return [_row_fallback(random.Random(i), f"s{i}", "ascend910b1") for i in range(n)]


def test_the_fuzzer_draws_row_reductions_above_and_below_the_fused_limit():
    drawn = _drawn(12)
    for k, sizes in drawn:
        p = k.program("row_fallback", sizes, 0, "ascend910b1", 48)
        assert parse_text(p.text(), "s.adsl")[0].instantiate().fallback is not None, p.text()
    assert {sizes["N"] > 1024 for _, sizes in drawn} == {True, False}


@pytest.mark.slow
def test_fuzzer_row_reductions_pass_in_the_emulator_in_both_forms():
    from npu_harness.fuzz.runner import Job, run_jobs

    progs = [k.program("row_fallback", sizes, i, "ascend910b1", 48) for i, (k, sizes) in enumerate(_drawn(6))]
    jobs = [Job(p.text(), p.sizes, p.seed) for p in progs]
    outcomes = run_jobs(jobs)
    assert [o.status for o in outcomes] == ["pass"] * len(jobs), [o.detail[:300] for o in outcomes]
