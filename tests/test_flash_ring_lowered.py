"""Flash attention as the AIC-driven ring (session 35: lowering/passes/plan_flash_ring.py, lowering/emit/flash_ring.py):
which FLASH kernels the plan gives the ring and why the others keep the Matmul-API form (printed by --dump-after);
the host tiling takes the ring at head dims that are multiples of 16 up to 128 and the Matmul-API form at the others;
the emulator validates both against torch (tails of query and key blocks, the causal mask, the lazy rescale, a scale
too large for Q, a cast output), and its cross-core and GM-race checks fire on planted bugs in the emitted ring."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import lowering
from ascend_dsl import ir, load_file, parse_text
from lowering.context import PassContext
from lowering.pipeline import run_pipeline
from lowering.targets import get_target

REPO = Path(__file__).resolve().parents[1]

SDPA = '''from ascend_dsl import kernel, Tensor, f32, f16, bf16

@kernel
def k(q: Tensor[T, "Bt, M, Dk"], k: Tensor[T, "Bt, N, Dk"], v: Tensor[T, "Bt, N, Dv"], o: Tensor[OUT, "Bt, M, Dv"],
      scale: f32 = 0.125):
    p = workspace(T, Bt, M, N)
    for blk in split(Bt, M, N, cores=AIC):
        with cube:
            s = matmul(q[blk], k[blk], transpose_b=True)
        with vector:
            x = X
            e = exp(x - max(x, axis=1))
            store(p[blk], cast(e / sum(e, axis=1), T))
    for blk in split(Bt, M, Dv, cores=AIC):
        with cube:
            acc = matmul(p[blk], v[blk])
        with vector:
            store(o[blk], STORE)
'''


def _text(t: str = "f16", x: str = "s * scale", out: str = "f32") -> ir.Kernel:
    text = SDPA.replace("Tensor[T,", f"Tensor[{t},").replace("workspace(T,", f"workspace({t},").replace(
        "cast(e / sum(e, axis=1), T)", f"cast(e / sum(e, axis=1), {t})").replace("X", x).replace("OUT", out).replace(
        "STORE", "acc" if out == "f32" else f"cast(acc, {out})")
    return parse_text(text, "ring.adsl")[0].instantiate()


def _plan(k: ir.Kernel, **flags) -> ir.FlashAttention:
    ctx = PassContext(get_target("ascend910b1"), "ring.adsl", **flags)
    lowered = run_pipeline(k, ctx)
    assert lowered.kind is ir.KernelKind.FLASH
    return lowered.body[0]


def _example(name: str) -> ir.Kernel:
    return load_file(REPO / f"examples/attention/{name}.adsl")[0].instantiate()


@pytest.mark.parametrize("name, taken, why", [
    ("causal_sdpa", True, "multiples of 16 up to 128"),
    ("sdpa", True, "Dk and Dv are multiples of 16"),
    ("cross_attention", True, "when Dh is a multiple of 16"),
    ("gqa", False, "grouped or shared heads"),
    ("mqa", False, "grouped or shared heads"),
    ("causal_attention", False, "a mask tensor"),
    ("sliding_window", False, "a band other than the causal one"),
])
def test_the_plan_gives_the_ring_f16_causal_and_unmasked_attention_only(name, taken, why):
    fa = _plan(_example(name))
    assert fa.ring is not None and fa.ring.taken is taken and why in fa.ring.why, fa.ring


@pytest.mark.parametrize("kernel, why", [
    (lambda: _text(t="bf16"), "the ring is written for f16"),
    (lambda: _text(x="select(col_index() <= row_index(), s * scale, -10000.0)"), "does not make the masked keys weigh 0"),
    (lambda: _text(x="select(col_index() <= row_index() + 3, s * scale, -3.0e38)"), "a band other than the causal one"),
])
def test_what_the_ring_cannot_do_keeps_the_matmul_api_form(kernel, why):
    fa = _plan(kernel())
    assert not fa.ring.taken and why in fa.ring.why, fa.ring
    project, _ = lowering.lower(kernel())
    assert "_ring::" not in project.files["k_kernel.cpp"]


def test_the_switch_and_the_dump_show_the_decision():
    fa = _plan(_example("causal_sdpa"), allow_flash_ring=False)
    assert not fa.ring.taken and "turned off" in fa.ring.why
    _, ctx = lowering.lower(_example("causal_sdpa"), dump_after=frozenset({"plan_flash"}))
    assert "# ring: the AIC drives the cube" in ctx.dumps["plan_flash"]
    _, ctx = lowering.lower(_example("gqa"), dump_after=frozenset({"plan_flash"}))
    assert "# no ring: k is not [B, H, N, Dk]" in ctx.dumps["plan_flash"]


def test_the_host_tiling_takes_the_ring_at_its_head_dims_only():
    from npu_harness.tiling_probe import run_tiling

    project, _ = lowering.lower(_example("sdpa"))
    fields = ("ring", "ringCores", "workspaceBytes")
    sym = {"Bt": 30, "M": 600, "N": 300, "Dk": 128, "Dv": 64}
    t = run_tiling(project, "ascend910b1", sym, {"scale": 0.125}, 48, fields)
    # a unit per head (3 pairs of 128-row blocks: pairs 2 and 0, then pair 1 alone): 2 x 30 units over 24 AI Cores
    assert t["ring"] == 1 and t["blocks"] == 24 and t["ringCores"] == 24, t
    t = run_tiling(project, "ascend910b1", {**sym, "Bt": 2}, {"scale": 0.125}, 48, fields)
    assert t["ring"] == 1 and t["blocks"] == 4, t
    for dk, dv in ((40, 64), (64, 136), (144, 64)):
        t = run_tiling(project, "ascend910b1", {**sym, "Dk": dk, "Dv": dv}, {"scale": 0.125}, 48, fields)
        assert t["ring"] == 0 and t["blocks"] > 0, (dk, dv, t)


def _validate(name: str, overrides: dict, task: Path | None = None, project=None, tmp_path=None):
    from npu_harness.validate import load_task_for, validate_sim

    k = _example(name)
    proj, ctx = lowering.lower(k)
    run = load_task_for(k, task or REPO / f"examples/attention/{name}.py", overrides=overrides)
    return validate_sim(k, ctx.lowered, project or proj, ctx, run, work_dir=tmp_path)


def _task(tmp_path: Path, scale: float, growing: bool) -> Path:
    """examples/attention/sdpa's task with another scale and, `growing`, key j scaled by 1 + j / 8 (every later key
    block's scores exceed the earlier blocks' by far more than the lazy-rescale gap: the running max moves)."""
    text = (REPO / "examples/attention/sdpa.py").read_text()
    old = "return [torch.randn(Bt, M, Dk), torch.randn(Bt, N, Dk), torch.randn(Bt, N, Dv)]"
    assert text.count(old) == 1 and text.count("return [0.125]") == 1
    if growing:
        text = text.replace(old, "k = torch.randn(Bt, N, Dk) * (1.0 + torch.arange(N).view(1, N, 1) / 8.0)\n"
                                 "    return [torch.randn(Bt, M, Dk), k, torch.randn(Bt, N, Dv)]")
    path = tmp_path / "sdpa_task.py"
    path.write_text(text.replace("return [0.125]", f"return [{scale!r}]"))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("overrides", [{"B": 1, "H": 3, "S": 300, "D": 64}, {"B": 2, "H": 1, "S": 77, "D": 40}],
                         ids=["ring-S300", "matmul-api-D40"])
def test_causal_sdpa_matches_torch_in_either_form(overrides, tmp_path):
    """S = 300: a pair of query blocks (one a tail) and three key blocks (one a tail), the diagonal masked; D = 40:
    the ring's project takes the Matmul-API form at run time."""
    res = _validate("causal_sdpa", overrides, tmp_path=tmp_path)
    assert res.ok, res.detail


@pytest.mark.slow
@pytest.mark.parametrize("scale, growing", [(0.125, True), (1.5, False), (0.0884, False)],
                         ids=["rescale", "scale-in-S", "inexact-scale-in-S"])
def test_unmasked_ring_matches_torch_with_moving_maxima_and_a_large_scale(scale, growing, tmp_path):
    """Keys whose scores grow block after block (the running max moves: l and the O slot rescaled), M > 256 (two
    query pairs per head), N not a multiple of 128 (the tail keys masked); a scale > 1, or one Q * scale would round
    (not +-2^-k), goes into S, not into Q."""
    res = _validate("sdpa", {"Bt": 2, "M": 300, "N": 290, "Dk": 32, "Dv": 48}, task=_task(tmp_path, scale, growing),
                    tmp_path=tmp_path)
    assert res.ok, res.detail


@pytest.mark.slow
@pytest.mark.parametrize("plant, old, expect", [
    ("no final O wait", "WaitO(t.n);  // the AIC's last P V added into O", "GM-RACE"),
    ("no P wait on the AIC", "                CrossCoreWaitFlag(kFlagP);\n", "GM-RACE"),
])
def test_planted_bugs_in_the_emitted_ring_are_caught(plant, old, expect, tmp_path):
    """The AIV reads its O slot before the AIC's last atomic add landed; the AIC reads P before the AIVs wrote it.
    The kernel as generated passes the same run (test_causal_sdpa_matches_torch_in_either_form)."""
    proj, _ = lowering.lower(_example("causal_sdpa"))
    name = "causal_sdpa_kernel.cpp"
    assert proj.files[name].count(old) == 1
    bad = dataclasses.replace(proj, files={**proj.files, name: proj.files[name].replace(old, "\n" if old.endswith("\n") else "")})
    res = _validate("causal_sdpa", {"B": 1, "H": 3, "S": 300, "D": 64}, project=bad, tmp_path=tmp_path)
    assert not res.ok and expect in res.detail, res.detail
