"""Flash attention (issue 15): the chained SDPA text lowers to a FLASH kernel (lowering/passes/plan_flash.py,
lowering/emit/flash.py); anything else stays a CHAIN; the emulator validates it against torch's
scaled_dot_product_attention at two sizes (odd lengths, keys far beyond the chained form's ~580), a planted
bug in the online softmax is caught, and the interpreter (which runs the chained text) agrees with torch."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

import lowering
from ascend_dsl import interpreter, ir, load_file, parse_text, printer
from ascend_dsl.diagnostics import DslError
from lowering.context import PassContext
from lowering.pipeline import run_pipeline
from lowering.targets import get_target

REPO = Path(__file__).resolve().parents[1]
ATTENTION = ("sdpa", "gqa", "mqa", "causal_attention", "causal_sdpa", "cross_attention", "decode_gqa", "sdpa_dropout", "long_context",
             "sliding_window")

SDPA = '''from ascend_dsl import kernel, Tensor, f32, f16

@kernel
def k(q: Tensor[f16, "Bt, M, Dk"], k: Tensor[f16, "Bt, N, Dk"], v: Tensor[f16, "Bt, N, Dv"], o: Tensor[f32, "Bt, M, Dv"],
      scale: f32 = 0.125):
    p = workspace(f16, Bt, M, N)
    for blk in split(Bt, M, N, cores=AIC):
        with cube:
            s = matmul(q[blk], k[blk], transpose_b=True)
        with vector:
            e = exp((s - max(s, axis=1)) * scale)
            store(p[blk], cast(e / sum(e, axis=1), f16))
    for blk in split(Bt, M, Dv, cores=AIC):
        with cube:
            acc = matmul(p[blk], v[blk])
        with vector:
            store(o[blk], acc)
'''


def _example(name: str) -> ir.Kernel:
    return load_file(REPO / f"examples/attention/{name}.adsl")[0].instantiate()


def _lower(k: ir.Kernel, flash: bool = True, target: str = "ascend910b1"):
    ctx = PassContext(get_target(target), "flash.adsl")
    ctx.allow_flash = flash
    ctx.lowered = run_pipeline(k, ctx)
    return ctx.project, ctx


@pytest.mark.parametrize("name", ATTENTION)
def test_every_gallery_attention_kernel_lowers_to_flash(name):
    _, ctx = _lower(_example(name))
    fa = ctx.lowered.body[0]
    assert ctx.lowered.kind is ir.KernelKind.FLASH and isinstance(fa, ir.FlashAttention)
    assert "# flash attention (the two stages below, fused)" in printer.kernel(ctx.lowered)  # --dump-after
    assert (fa.mask is not None) == name.startswith(("causal", "sliding"))
    if name == "sliding_window":  # i - window < j <= i
        assert (fa.mask.lo, fa.mask.hi) == ((ir.FlashBound(1, ((-1, "window"),)),), (ir.FlashBound(0),))
    elif fa.mask:
        tensor = "mask" if name == "causal_attention" else None  # causal_sdpa: from positions (blocks skipped)
        expected = (tensor, "gt", 0.5, -3e38, (), ()) if tensor else (None, "", 0.0, -3e38, (), (ir.FlashBound(0),))
        assert (fa.mask.tensor, fa.mask.compare, fa.mask.threshold, fa.mask.fill, fa.mask.lo, fa.mask.hi) == expected


def test_the_switch_keeps_the_chained_form():
    _, ctx = _lower(_example("sdpa"), flash=False)
    assert ctx.lowered.kind is ir.KernelKind.CHAIN


@pytest.mark.parametrize("old, new", [
    ("e = exp((s - max(s, axis=1)) * scale)", "e = exp((s - max(s, axis=1)) * scale) + 1.0"),  # not a softmax
    ("e = exp((s - max(s, axis=1)) * scale)", "e = exp((s - min(s, axis=1)) * scale)"),
    ("store(p[blk], cast(e / sum(e, axis=1), f16))", "store(p[blk], cast(e / max(e, axis=1), f16))"),
    ("store(o[blk], acc)", "store(o[blk], relu(acc))"),  # an epilogue after P V
    ("matmul(q[blk], k[blk], transpose_b=True)", "matmul(q[blk], k[blk], transpose_b=True, base_k=32)"),
], ids=["plus-one", "min", "max-normalised", "relu-after", "explicit-base"])
def test_text_that_is_not_exactly_sdpa_stays_a_chain(old, new):
    assert old in SDPA
    project, ctx = _lower(parse_text(SDPA.replace(old, new), "flash.adsl")[0].instantiate())
    assert ctx.lowered.kind is ir.KernelKind.CHAIN
    # a long key length then fails at launch (whole rows in UB), and the error says why it was not fused
    assert "; not fused into flash attention: the " in project.view.tiling_error, project.view.tiling_error


def test_a_coupled_chip_is_a_located_error_not_a_flash_kernel():
    with pytest.raises(DslError) as e:
        lowering.lower(parse_text(SDPA, "flash.adsl")[0].instantiate(), "ascend310p")
    d = e.value.diagnostics[0]
    assert d.code == "MIX-UNSUPPORTED" and d.span.line == 7  # the first split loop


def test_positions_in_a_plain_matmul_epilogue_are_a_located_error():
    text = SDPA.replace("e = exp((s - max(s, axis=1)) * scale)",
                        "e = exp(select(col_index() <= row_index(), s, 0.0) - max(s, axis=1))")
    with pytest.raises(DslError) as e:
        lowering.lower(parse_text(text, "flash.adsl")[0].instantiate())
    d = e.value.diagnostics[0]
    assert d.code == "UNSUPPORTED" and "col_index() or row_index() in a matmul epilogue" in d.message and d.span.line == 11


def test_host_tiling_shrinks_blocks_and_refuses_a_value_head_too_wide_for_l0c():
    from npu_harness.tiling_probe import launch_blocks, run_tiling

    project, _ = lowering.lower(_example("sdpa"))
    sym = {"Bt": 2, "M": 200, "N": 8192, "Dk": 64, "Dv": 64}
    t = run_tiling(project, "ascend910b1", sym, {"scale": 0.125}, 48)
    assert t["blocks"] > 0
    assert launch_blocks(project, "ascend910b1", {**sym, "Dv": 4096}, {"scale": 0.125}, 48) == 0
    assert "value head dim Dv is too large" in project.view.tiling_error


def test_long_context_launches_at_its_tasks_8k_keys():
    from npu_harness.gallery import discover, launch_at

    ex = next(e for e in discover() if e.name == "long_context")
    blocks, symbols = launch_at(ex, ex.dtypes[0], {})
    assert blocks > 0 and symbols["S"] == 8192, (blocks, symbols)


def test_interpreter_runs_the_chained_text_as_torch_at_a_long_odd_length():
    k = _example("long_context")
    g = torch.Generator().manual_seed(3)
    q, kk, v = (torch.randn(1, 2, 301, 16, generator=g).half() for _ in range(3))
    o = torch.empty(1, 2, 301, 16)
    interpreter.run(k, {"q": q, "k": kk, "v": v, "o": o}, {"scale": 0.25})
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), kk.float(), v.float(), scale=0.25)
    assert torch.allclose(o, ref, atol=2e-3)


def test_interpreter_runs_the_causal_text_as_torch_is_causal():
    k = _example("causal_sdpa")
    g = torch.Generator().manual_seed(4)
    q = torch.randn(2, 3, 37, 16, generator=g).half()
    kk, v = torch.randn(2, 3, 45, 16, generator=g).half(), torch.randn(2, 3, 45, 8, generator=g).half()
    o = torch.empty(2, 3, 37, 8)
    interpreter.run(k, {"q": q, "k": kk, "v": v, "o": o}, {"scale": 0.25})
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), kk.float(), v.float(), scale=0.25,
                                                            is_causal=True)
    assert torch.allclose(o, ref, atol=2e-3)


def _validate(name: str, overrides: dict, project=None, tmp_path=None):
    from npu_harness.validate import load_task_for, validate_sim

    k = _example(name)
    proj, ctx = lowering.lower(k)
    run = load_task_for(k, REPO / f"examples/attention/{name}.py", overrides=overrides)
    return validate_sim(k, ctx.lowered, project or proj, ctx, run, work_dir=tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["causal_attention", "causal_sdpa"])
@pytest.mark.parametrize("overrides", [{"S": 200}, {"B": 1, "H": 2, "S": 1000}], ids=["S200", "S1000"])
def test_causal_flash_attention_matches_torch_at_two_odd_lengths(name, overrides, tmp_path):
    """S=1000: 8 key blocks per query block (the online softmax rescales up to 7 times), past the chained form's
    limit. causal_attention reads its mask tensor's blocks; causal_sdpa masks from positions and skips blocks."""
    res = _validate(name, overrides, tmp_path=tmp_path)
    assert res.ok, res.detail


def _growing_keys_task(tmp_path: Path) -> Path:
    """examples/attention/sdpa's task with key j scaled by 1 + j / 8: every later key block's scores exceed the
    earlier blocks' by far more than the kernel's lazy-rescale gap (8), so the running max moves."""
    text = (REPO / "examples/attention/sdpa.py").read_text()
    old = "return [torch.randn(Bt, M, Dk), torch.randn(Bt, N, Dk), torch.randn(Bt, N, Dv)]"
    assert text.count(old) == 1
    new = ("k = torch.randn(Bt, N, Dk) * (1.0 + torch.arange(N).view(1, N, 1) / 8.0)\n"
           "    return [torch.randn(Bt, M, Dk), k, torch.randn(Bt, N, Dv)]")
    path = tmp_path / "sdpa_growing_keys.py"
    path.write_text(text.replace(old, new))
    return path


def _validate_task(name: str, task: Path, overrides: dict, project=None, tmp_path=None):
    from npu_harness.validate import load_task_for, validate_sim

    k = _example(name)
    proj, ctx = lowering.lower(k)
    run = load_task_for(k, task, overrides=overrides)
    return validate_sim(k, ctx.lowered, project or proj, ctx, run, work_dir=tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("plant", ["no O rescale", "never rescale"])
def test_planted_bug_in_the_rescale_is_caught(plant, tmp_path):
    """Planted bugs: O is not rescaled by e^(m - m') when a later key block raises a row's max (l is); the running
    max never moves after the first block (the lazy-rescale test always says no). With one key block, or scores
    that never grow past the gap, either kernel still passes; with keys whose scores grow by far more than the gap
    (N = 300: five key blocks) the result is wrong, and the kernel as generated is right."""
    k = _example("sdpa")
    proj, _ = lowering.lower(k, allow_flash_ring=False)  # the Matmul-API form (tests/test_flash_ring_lowered.py: the ring)
    name = "sdpa_kernel.cpp"
    old, new = {"no O rescale": ("RowBroadcast<1>(o, o, cRow, rows, dv, dvp_);", ""),
                "never rescale": ("gapBuf_.Get<float>().GetValue(0) <= kRescaleSum", "true")}[plant]
    assert proj.files[name].count(old) == 1
    bad = dataclasses.replace(proj, files={**proj.files, name: proj.files[name].replace(old, new)})
    task = _growing_keys_task(tmp_path)
    shape = {"Bt": 2, "M": 37, "N": 300}
    res = _validate_task("sdpa", task, shape, project=bad, tmp_path=tmp_path)
    assert not res.ok and not res.sim_errors, res.detail
    good = _validate_task("sdpa", task, shape, tmp_path=tmp_path)
    assert good.ok, good.detail


@pytest.mark.slow
def test_planted_bug_without_the_diagonal_mask_is_caught(tmp_path):
    """Planted bug: the key blocks above the diagonal are skipped but the diagonal block is not masked."""
    k = _example("causal_sdpa")
    proj, _ = lowering.lower(k, allow_flash_ring=False)  # the Matmul-API form (tests/test_flash_ring_lowered.py: the ring)
    name = "causal_sdpa_kernel.cpp"
    old = "Select(s, cmp, s, -3e+38f, SELMODE::VSEL_TENSOR_SCALAR_MODE, rows * bk_);"
    assert proj.files[name].count(old) == 1
    bad = dataclasses.replace(proj, files={**proj.files, name: proj.files[name].replace(old, "")})
    res = _validate("causal_sdpa", {"B": 1, "H": 2, "S": 150}, project=bad, tmp_path=tmp_path)
    assert not res.ok and not res.sim_errors, res.detail


BAND = SDPA.replace("scale: f32 = 0.125):", "scale: f32 = 0.125, w: i32 = 8):").replace(
    "e = exp((s - max(s, axis=1)) * scale)", "x = select(COND, s * scale, -3.0e38)\n            e = exp(x - max(x, axis=1))")


@pytest.mark.parametrize("cond, lo, hi", [
    ("col_index() <= row_index()", (), (ir.FlashBound(0),)),
    ("row_index() >= col_index()", (), (ir.FlashBound(0),)),
    ("col_index() - row_index() < 3", (), (ir.FlashBound(2),)),
    ("col_index() > row_index() - w", (ir.FlashBound(1, ((-1, "w"),)),), ()),
    ("row_index() - col_index() < w", (ir.FlashBound(1, ((-1, "w"),)),), ()),
    ("abs(col_index() - row_index()) <= w", (ir.FlashBound(0, ((-1, "w"),)),), (ir.FlashBound(0, ((1, "w"),)),)),
    ("abs(row_index() - col_index() + 2) < 5", (ir.FlashBound(-2),), (ir.FlashBound(6),)),
    ("w >= abs(col_index() - row_index())", (ir.FlashBound(0, ((-1, "w"),)),), (ir.FlashBound(0, ((1, "w"),)),)),
    ("col_index() == row_index()", (ir.FlashBound(0),), (ir.FlashBound(0),)),
])
def test_position_comparisons_become_a_band_of_key_offsets(cond, lo, hi):
    """Any comparison linear in the positions (integer literals, i32 scalars) or |col - row + c| <= t is a band
    lo <= key - query <= hi (inclusive bounds)."""
    k = parse_text(BAND.replace("COND", cond), "band.adsl")[0].instantiate()
    _, ctx = _lower(k)
    fa = ctx.lowered.body[0]
    assert ctx.lowered.kind is ir.KernelKind.FLASH and fa.mask.tensor is None
    assert (fa.mask.lo, fa.mask.hi) == (lo, hi)


def test_nested_position_selects_intersect_and_other_conditions_stay_chained():
    nested = BAND.replace("select(COND, s * scale, -3.0e38)",
                          "select(col_index() <= row_index() + 2, select(col_index() >= row_index() - w, s * scale, -3.0e38), -3.0e38)")
    fa = _lower(parse_text(nested, "band.adsl")[0].instantiate())[1].lowered.body[0]
    assert (fa.mask.lo, fa.mask.hi) == ((ir.FlashBound(0, ((-1, "w"),)),), (ir.FlashBound(2),))
    for cond in ("col_index() * 2 <= row_index()", "col_index() <= 5", "abs(col_index()) <= w"):  # not a band
        with pytest.raises(DslError) as err:
            _lower(parse_text(BAND.replace("COND", cond), "band.adsl")[0].instantiate())
        assert "error[UNSUPPORTED]" in str(err.value) and "band.adsl:11:" in str(err.value), cond


@pytest.mark.slow
@pytest.mark.parametrize("overrides", [{}, {"B": 1, "H": 2, "S": 1001}], ids=["S333", "S1001"])
def test_sliding_window_matches_torch_at_two_odd_lengths(overrides, tmp_path):
    """Window 64 (a parameter, from the model): the key blocks outside each query block's band are skipped, the
    blocks on either edge masked; at S=1001 most key blocks are skipped."""
    res = _validate("sliding_window", overrides, tmp_path=tmp_path)
    assert res.ok, res.detail


@pytest.mark.slow
def test_planted_bug_without_the_window_edge_mask_is_caught(tmp_path):
    """Planted bug: the key blocks before the window are skipped but the block on the window's lower edge is not
    masked (keys older than the window leak in)."""
    k = _example("sliding_window")
    proj, _ = lowering.lower(k, allow_flash_ring=False)  # the Matmul-API form (tests/test_flash_ring_lowered.py: the ring)
    name = "sliding_window_kernel.cpp"
    old = "Compares(cmp, diag, static_cast<half>(Clamp4096(lo - shift)), CMPMODE::GE, (rows * bk_ + 127) / 128 * 128);"
    assert proj.files[name].count(old) == 1
    bad = dataclasses.replace(proj, files={**proj.files, name: proj.files[name].replace(
        old, "Compares(cmp, diag, static_cast<half>(-4096.0f), CMPMODE::GE, (rows * bk_ + 127) / 128 * 128);")})
    res = _validate("sliding_window", {}, project=bad, tmp_path=tmp_path)
    assert not res.ok and not res.sim_errors, res.detail


def test_blocks_outside_the_band_are_skipped_only_under_an_inf_like_fill():
    """With fill -3e38 the keys outside the band weigh exactly 0, so their blocks are not computed; with -10000.0
    (or 0.0) they may not, so every key block is computed and masked."""
    for fill, skipped in (("-3.0e38", True), ("-1.0e30", True), ("-10000.0", False), ("0.0", False)):
        text = BAND.replace("COND", "col_index() <= row_index()").replace("-3.0e38", fill)
        project, _ = _lower(parse_text(text, "band.adsl")[0].instantiate())
        code = next(v for n, v in project.files.items() if n.endswith("_kernel.cpp"))
        assert ("rowWithoutKeys" in code) == skipped, fill
        assert "CMPMODE::LE" in code  # the upper edge is masked either way


@pytest.mark.slow
def test_the_emulator_counts_the_p_slot_traffic_as_workspace_traffic(tmp_path):
    """The P, O and Q slots live in the launch's workspace: the emulator counts their bytes apart (ws_ub2gm: the AIV's
    writes of P, of the scaled Q block and of O when a later block rescales it; ws_gm2l1: the cube's reads of P and Q
    as the left operands; ws_l0c2gm: the cube's P V blocks added into O; ws_gm2ub: the AIV's reads of O), so that the
    cost model can keep them in L2. K, V, the first read of Q and the output stay HBM traffic."""
    shape = {"Bt": 2, "M": 37, "N": 300}
    project, _ = lowering.lower(_example("sdpa"), allow_flash_ring=False)  # the Matmul-API form's slots
    res = _validate("sdpa", shape, project=project, tmp_path=tmp_path)
    assert res.ok, res.detail
    c = res.counters
    assert 0 < c["workspace_bytes"] < 16 << 20
    pq_bytes = sum(b.get("ws_gm2l1", 0) for b in c["blocks"])  # the P and Q blocks, read by the cube for every key block
    ws_out = sum(b.get("ws_ub2gm", 0) for b in c["blocks"])
    q_bytes = 2 * 37 * 64 * 2  # the scaled Q blocks (f16), written once per task
    assert pq_bytes > ws_out - q_bytes > 0  # ... the P blocks the AIV wrote (+ O rescaled in its slot) read once, Q twice or more
    o_bytes = sum(b.get("ws_l0c2gm", 0) for b in c["blocks"])
    out = 2 * 37 * 64 * 4  # o: Bt x M x Dv fp32
    assert o_bytes % out == 0 and o_bytes >= 2 * out  # O += P V_j into the slot: every key block (N = 300 > bk: two or more)
    o_reads = sum(b.get("ws_gm2ub", 0) for b in c["blocks"])
    assert o_reads >= out  # O read once per task (and once per rescale after its first block)
    assert sum(b["ub2gm"]["bytes"] for b in c["blocks"]) == ws_out + out
    assert sum(b["gm2ub"]["bytes"] for b in c["blocks"]) == o_reads + q_bytes  # Q read once from the input
    qkv = sum(b["gm2l1"] for b in c["blocks"]) - pq_bytes  # K and V
    # L2 serves the slots both ways, and the cube's re-reads of K, V beyond their first load (the operand rules:
    # the launch's union, or each panel's re-loads within the L2's reach by stack distance, whichever credits more)
    union = c["cube_operand_bytes"] - pq_bytes  # the slots are cube operands too
    reloads = sum(n for b in c["blocks"] for u, n in b.get("panel_reload", []) if u <= (192 << 20) - c["workspace_bytes"])
    assert 0 < reloads < qkv
    first = min(1.0, c["cube_operand_bytes"] / qkv, 1 - reloads / qkv)
    assert qkv > 0 and res.report.l2_bytes == ws_out + pq_bytes + o_bytes + o_reads + round(qkv * (1 - first))
    assert union > 0


@pytest.mark.slow
@pytest.mark.parametrize("plant", ["overwrite", "add into the unwritten slot"])
def test_planted_bug_in_the_o_accumulation_is_caught(plant, tmp_path):
    """Planted bugs in O += P V_j (the cube's atomic add into the AIV's O slot): every key block overwrites O (only the
    last block's P V survives: a wrong result), or the first block adds into the slot as well (into the launch's
    poison on an AIV's first task: ATOMIC-UNINIT; into the previous task's O after that)."""
    k = _example("sdpa")
    proj, _ = lowering.lower(k, allow_flash_ring=False)  # the Matmul-API form (tests/test_flash_ring_lowered.py: the ring)
    name = "sdpa_kernel.cpp"
    old = "GetTensorC<true>(oSlotGm_, first ? 0 : 1, true)"
    new = {"overwrite": "GetTensorC<true>(oSlotGm_, 0, true)", "add into the unwritten slot": "GetTensorC<true>(oSlotGm_, 1, true)"}[plant]
    assert proj.files[name].count(old) == 1
    bad = dataclasses.replace(proj, files={**proj.files, name: proj.files[name].replace(old, new)})
    res = _validate("sdpa", {"Bt": 2, "M": 37, "N": 300}, project=bad, tmp_path=tmp_path)
    assert not res.ok, res.detail
    if plant == "overwrite":
        assert not res.sim_errors, res.detail
    else:
        assert any("ATOMIC-UNINIT" in str(e) for e in res.sim_errors), res.detail


@pytest.mark.slow
@pytest.mark.parametrize("scale", [2.0, -0.3, 1.0])
def test_the_scale_goes_into_q_or_stays_on_s_and_both_match_torch(scale, tmp_path):
    """|scale| <= 1: Q times the scale goes to the Q slot (fp32, one rounding) and S needs no Muls; |scale| > 1 (Q *
    scale might overflow the operands' type): Q as it is, and the Muls on S. A negative scale flips which key is the
    row max. Each against scaled_dot_product_attention."""
    text = (REPO / "examples/attention/sdpa.py").read_text()
    old = "def get_init_inputs():\n    return [0.125]"
    assert text.count(old) == 1
    task = tmp_path / f"sdpa_scale_{scale}.py"
    task.write_text(text.replace(old, f"def get_init_inputs():\n    return [{scale!r}]"))
    res = _validate_task("sdpa", task, {"Bt": 2, "M": 37, "N": 300}, tmp_path=tmp_path)
    assert res.ok and not res.sim_errors, res.detail
    assert f"scale={scale:g} " in (res.scalars or ""), res.scalars  # the task's scale reached the kernel
