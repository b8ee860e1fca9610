"""The NC1HWC0 route of forward conv2d (lowering/passes/route_conv5hd.py): which forms take it (a conversion launch
on the vector cores, then the conv launch loading each tap's 16 pixels as one Zn fractal), which keep the old
paths, and the two launches against torch in the emulator at odd sizes (channel blocks not full, channel and
column tiles, dilation, bias, a narrow output); the conv launch alone, on workspaces no launch wrote, fails."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import ascend_dsl
import lowering
from ascend_dsl import ir

FUSED = Path(__file__).resolve().parents[1] / "examples" / "fuse" / "conv_max_pool.adsl"

KERNEL = '''@kernel(T=[f16, bf16])
def conv(x: Tensor[T, "N, C, H, W"], w: Tensor[T, "K, C, KH, KW"], y: Tensor[OUT, "N, K, OH, OW"]):
    for blk in split(N, K, OH, OW, cores=AIC):
        with cube:
            acc = conv2d(x[blk], w[blk], padding=1)
        with vector:
            store(y[blk], acc)
'''


def _kernel(text: str, dtype=ir.DType.F16, out: str = "f32") -> ir.Kernel:
    return ascend_dsl.parse_text(text.replace("OUT", out), file="conv.adsl")[0].instantiate({"T": dtype})


def _kinds(text: str, **kw) -> list[str]:
    project, ctx = lowering.lower(_kernel(text), "ascend910b1", "conv.adsl", **kw)
    if ctx.lowered.kind is ir.KernelKind.LAUNCHES:
        return [la.kernel.kind.value for la in ctx.lowered.body]
    return [ctx.lowered.kind.value]


def test_a_padded_conv2d_takes_the_route():
    project, ctx = lowering.lower(_kernel(KERNEL), "ascend910b1", "conv.adsl")
    assert [la.kernel.kind for la in ctx.lowered.body] == [ir.KernelKind.CONVERT5HD, ir.KernelKind.CONV]
    assert [w.name for w in ctx.lowered.workspaces] == ["x_5hd", "w_5hd"]
    assert [la["kernel_type"] for la in project.manifest["launches"]] == ["AIV_ONLY", "AIC_ONLY"]
    convert = project.files["conv_l0/conv_l0_kernel.cpp"]
    assert "TransDataTo5HD(" in convert and "conv.adsl:5" in convert
    src = project.files["conv_l1/conv_l1_kernel.cpp"]
    assert "x_5hdGm[" in src and "LoadData2DParams(0, static_cast<uint8_t>(nRow), 1, 0, 0, false, 0)" in src
    assert "xGm[" not in src.split("void Tile(")[1]  # no image-to-column gather from x


def test_the_workspaces_hold_ceil_c_over_16_channel_blocks_exactly():
    """x_5hd [N, C1, H, W, 16] and w_5hd [K, C1, KH, KW, 16] with C1 = ceil(C / 16), a symbol the x workspace defines
    (not [N, C, H, W, 16]: 16x too large when 16 divides C); a literal C gives a literal C1; a kernel that already has
    a symbol C1 gets a fresh name."""
    from ascend_dsl import views

    lowered = lowering.lower(_kernel(KERNEL), "ascend910b1", "conv.adsl")[1].lowered
    x5, w5 = lowered.workspaces
    assert (x5.shape, w5.shape) == (("N", "C1", "H", "W", 16), ("K", "C1", "KH", "KW", 16))
    for c, c1 in ((5, 1), (16, 1), (64, 4), (65, 5)):
        assert views.workspace_dims(lowered, {"C": c}, {}) == {"C1": c1}
    literal = lowering.lower(_kernel(KERNEL.replace('"N, C, H, W"', '"N, 40, H, W"').replace('"K, C, KH, KW"', '"K, 40, KH, KW"')),
                             "ascend910b1", "conv.adsl")[1].lowered
    assert [p.shape[1] for p in literal.workspaces] == [3, 3] and views.workspace_dims(literal, {}, {}) == {}
    clash = KERNEL.replace("def conv(", "def conv(z: Tensor[f32, \"C1\"], ")
    assert lowering.lower(_kernel(clash), "ascend910b1", "conv.adsl")[1].lowered.workspaces[0].shape[1] == "C11"


@pytest.mark.parametrize("old, new", [
    ("padding=1", "padding=1, stride=2"),  # a W stride breaks the run of 16 pixels
    ("padding=1", "padding=0"),  # a window of symbols may be 1 x 1: the flat path
    ("padding=1", "padding=1, groups=2"),
    ("conv2d(x[blk], w[blk], padding=1)", "conv1d(x[blk], w[blk], padding=1)"),
])
def test_other_forms_keep_the_old_paths(old, new):
    text = KERNEL.replace(old, new)
    if "conv1d" in new:
        text = text.replace('"N, C, H, W"', '"N, C, W"').replace('"K, C, KH, KW"', '"K, C, KW"').replace(
            "OH, OW", "OW").replace("split(N, K, OW, OW", "split(N, K, OW")
    if "groups" in new:
        text = text.replace('"K, C, KH, KW"', '"K, CG, KH, KW"')
    assert _kinds(text) == ["conv"]
    assert _kinds(KERNEL, allow_conv5hd=False) == ["conv"]


def test_a_literal_window_takes_the_route_without_padding():
    text = KERNEL.replace("padding=1", "padding=0").replace('"K, C, KH, KW"', '"K, C, 3, 3"')
    assert _kinds(text) == ["convert5hd", "conv"]
    assert _kinds(text.replace('"K, C, 3, 3"', '"K, C, 1, 1"')) == ["conv"]


@pytest.mark.parametrize("call", ["conv1d(x[blk], w[blk], padding=0)", "conv_transpose1d(x[blk], w[blk], padding=4, dilation=2)"])
def test_a_literal_1d_window_keeps_the_old_paths(call):
    """A 1-D window has one dim: the route's window test read a second one (fuzz seed 3131: INTERNAL IndexError
    in route_conv5hd for a bf16 conv_transpose1d with a literal window of 3)."""
    transposed = "transpose" in call
    text = KERNEL.replace("conv2d(x[blk], w[blk], padding=1)", call).replace('"N, C, H, W"', '"N, C, W"').replace(
        '"K, C, KH, KW"', '"C, K, 3"' if transposed else '"K, C, 3"').replace("OH, OW", "OW").replace(
        "split(N, K, OW, OW", "split(N, K, OW")
    assert _kinds(text) == ["conv"]


def test_a_fused_conv_keeps_the_old_paths():
    """A conv that is one launch of several (conv, then vector loops) is not routed: launches do not nest."""
    fused = ascend_dsl.parse_text(FUSED.read_text(), file="f.adsl")[0]
    ctx = lowering.lower(fused.instantiate(fused.dtype_variants[0]), "ascend910b1", "f.adsl")[1]
    assert ir.KernelKind.CONVERT5HD not in [la.kernel.kind for la in ctx.lowered.body]


def _validate(tmp_path, text, x, w, ref, dtype, out="f32", order=None):
    from npu_harness.task import TaskRun
    from npu_harness.validate import validate_sim

    k = _kernel(text, dtype, out)
    project, ctx = lowering.lower(k, "ascend910b1", "conv.adsl")
    assert ctx.lowered.kind is ir.KernelKind.LAUNCHES
    tensors = [x, w] if len(k.inputs) == 2 else [x, w, ref[1]]
    return validate_sim(k, ctx.lowered, project, ctx, TaskRun(tensors, [ref[0]]), work_dir=tmp_path, launch_order=order)


def test_the_route_matches_torch_at_odd_sizes(tmp_path):
    """f16, 5 channels (one block, 11 of it zero), 20 output channels, 13 x 19 pixels (tiles of 8 rows of 32 columns)."""
    x, w = torch.randn(2, 5, 13, 19).half(), torch.randn(20, 5, 3, 3).half()
    ref = torch.nn.functional.conv2d(x.float(), w.float(), padding=1)
    res = _validate(tmp_path, KERNEL, x, w, [ref], ir.DType.F16)
    assert res.ok, res.detail + str(res.comparisons)
    assert res.report is not None and "2 launches" in res.report.note


@pytest.mark.slow
def test_the_route_matches_torch_with_channel_and_column_tiles_dilation_and_bias(tmp_path):
    """bf16, 37 channels (3 blocks, the last of 5), 150 output channels (tiles of 128 and 22), rows of 300 pixels
    (column tiles of 256 and 44), a 2 x 3 window with dilation 2 and padding 2, an f32 bias and relu, f16 out."""
    text = KERNEL.replace("padding=1", "padding=2, dilation=2, bias=b").replace(
        'y: Tensor[OUT', 'b: Tensor[f32, "K"], y: Tensor[OUT').replace("store(y[blk], acc)", "store(y[blk], cast(relu(acc), f16))")
    x, w, b = torch.randn(1, 37, 5, 300).bfloat16(), torch.randn(150, 37, 2, 3).bfloat16(), torch.randn(150)
    ref = torch.relu(torch.nn.functional.conv2d(x.float(), w.float(), b, padding=2, dilation=2)).half()
    res = _validate(tmp_path, text, x, w, [ref, b], ir.DType.BF16, out="f16")
    assert res.ok, res.detail + str(res.comparisons)


def _validate_planted(tmp_path, drop: str):
    """The route at a shape where each core meets several tiles (so both L1 buffers and both L0 halves are reused),
    with one line of the conv launch's ping-pong protocol removed."""
    from npu_harness.task import TaskRun
    from npu_harness.validate import validate_sim

    k = _kernel(KERNEL, ir.DType.F16)
    project, ctx = lowering.lower(k, "ascend910b1", "conv.adsl")
    conv = project.launches[1]
    name = next(f for f in conv.files if f.endswith("_kernel.cpp"))
    src = conv.files[name]
    if drop:
        assert src.count(drop) == 1, drop
        conv.files[name] = src.replace(drop, "")
    x, w = torch.randn(1, 20, 50, 250).half(), torch.randn(24, 20, 3, 3).half()
    ref = torch.nn.functional.conv2d(x.float(), w.float(), padding=1)
    return validate_sim(k, ctx.lowered, project, ctx, TaskRun([x, w], [ref]), work_dir=tmp_path)


@pytest.mark.parametrize("drop", [
    "WaitFlag<HardEvent::MTE1_MTE2>(static_cast<int32_t>(i));",  # MTE2 refills an L1 buffer MTE1 may still read
    "WaitFlag<HardEvent::M_MTE1>(static_cast<int32_t>(j));",  # MTE1 refills an L0 half the Mmad may still read
    "WaitFlag<HardEvent::FIX_M>(EVENT_ID0);  // the previous tile's Fixpipe left L0C",  # Mmad overwrites L0C being stored
])
def test_a_missing_ping_pong_event_is_a_pipe_race(tmp_path, drop):
    """Planted: each of the hand-offs the ping-pong buffers need, removed, is reported by the emulator's race check
    (the results themselves are still right: the emulator runs instructions in program order)."""
    res = _validate_planted(tmp_path, drop)
    assert not res.ok and "PIPE-RACE" in {e.code for e in res.sim_errors}, res.detail


def test_the_ping_pong_route_is_race_free_over_several_tiles_per_core(tmp_path):
    """The twin of the planted runs: the protocol as emitted, 50 one-row tiles on 24 cube cores, every buffer reused."""
    res = _validate_planted(tmp_path, "")
    assert res.ok, res.detail + str(res.comparisons)


@pytest.mark.parametrize("opts, shape, cores, plant", [
    ("padding=1", (2, 5, 23, 40), 3, ""),  # tiles of 5 rows (the last of 3), runs crossing an image, bottom padding
    ("padding=2, dilation=2", (1, 19, 30, 17), 2, ""),  # tiles of 8 rows, hin 12 of a 20-row ring, 2 blocks
    ("padding=1", (2, 5, 23, 40), 3, "const uint64_t lo = cont ? ringEnd_ + 1 : h0"),  # planted: a new row skipped
])
def test_the_l1_ring_keeps_the_halo_rows_between_consecutive_row_tiles(tmp_path, opts, shape, cores, plant):
    """Few cube cores (`core_num`), so each walks several consecutive row tiles: a continuing tile loads only its new
    rows into the ring (slot = padded row % ringRows); exact against torch, and a continuing tile that skips one new
    row (reading a stale slot) is caught."""
    from npu_harness.task import TaskRun
    from npu_harness.validate import validate_sim

    k = _kernel(KERNEL.replace("padding=1", opts), ir.DType.F16)
    project, ctx = lowering.lower(k, "ascend910b1", "conv.adsl")
    conv = project.launches[1]
    name = next(f for f in conv.files if f.endswith("_kernel.cpp"))
    if plant:
        conv.files[name] = conv.files[name].replace("const uint64_t lo = cont ? ringEnd_ : h0", plant)
    x, w = torch.randn(*shape).half(), torch.randn(20, shape[1], 3, 3).half()
    ref = torch.nn.functional.conv2d(x.float(), w.float(), padding=int(opts[8]), dilation=2 if "dilation" in opts else 1)
    res = validate_sim(k, ctx.lowered, project, ctx, TaskRun([x, w], [ref]), work_dir=tmp_path, core_num=cores)
    assert res.ok != bool(plant), res.detail + str(res.comparisons)


def test_several_reduction_steps_ping_pong_the_weights_too(tmp_path):
    """256 input channels: 16 blocks of weights (37 KB each for 128 output channels) and windows do not fit L1 in one
    step, so each step's weights and window alternate two L1 buffers (no resident weights, no ring); with a bias
    (its column per L1 buffer) on 2 cores, 3 tiles each (two channel tiles); exact against torch."""
    from npu_harness.task import TaskRun
    from npu_harness.validate import validate_sim

    text = KERNEL.replace("padding=1", "padding=1, bias=b").replace('y: Tensor[OUT', 'b: Tensor[f32, "K"], y: Tensor[OUT')
    k = _kernel(text, ir.DType.F16)
    project, ctx = lowering.lower(k, "ascend910b1", "conv.adsl")
    from npu_harness.tiling_probe import run_tiling
    sizes = {"N": 1, "C": 256, "H": 20, "W": 20, "K": 130, "OH": 20, "OW": 20, "KH": 3, "KW": 3, "C1": 16}
    t = run_tiling(project.launches[1], "ascend910b1", sizes, {}, 6, ("tileC1", "ringRows"))
    assert 0 < t["tileC1"] < 16 and t["ringRows"] == 0, t
    x, w, b = torch.randn(1, 256, 20, 20).half(), torch.randn(130, 256, 3, 3).half(), torch.randn(130)
    ref = torch.nn.functional.conv2d(x.float(), w.float(), b, padding=1)
    res = validate_sim(k, ctx.lowered, project, ctx, TaskRun([x, w, b], [ref]), work_dir=tmp_path, core_num=2)
    assert res.ok, res.detail + str(res.comparisons)


def test_the_conv_launch_alone_reads_unwritten_workspaces(tmp_path):
    """Planted: skip the conversion launch; the conv launch then reads the 0xFF-filled (NaN) workspaces."""
    x, w = torch.randn(1, 5, 4, 9).half(), torch.randn(3, 5, 3, 3).half()
    ref = torch.nn.functional.conv2d(x.float(), w.float(), padding=1)
    res = _validate(tmp_path, KERNEL, x, w, [ref], ir.DType.F16, order=[1])
    assert not res.ok


def test_the_route_tiling_fits_l0_and_l1_and_rejects_what_its_copies_cannot_address():
    """The conv launch's host tiling at the issue's shape: one 256-pixel row per tile, half of L0B holds kStep k blocks
    of it, the L1 window is 3 rows x 258 pixels per channel block; the conversion's weight tasks take every channel
    block of an output channel. 8192 channels x 9 taps overflow the weight copy's 16-bit row stride: TILING."""
    from lowering.targets import get_target
    from npu_harness.tiling_probe import run_tiling

    t910 = get_target("ascend910b1")
    project, _ = lowering.lower(_kernel(KERNEL.replace('"K, C, KH, KW"', '"K, C, 3, 3"')), "ascend910b1", "conv.adsl")
    convert, conv = project.launches
    sizes = {"N": 16, "C": 64, "H": 256, "W": 256, "K": 128, "OH": 256, "OW": 256, "C1": 4}
    t = run_tiling(conv, "ascend910b1", sizes, {}, 48, ("tileLength", "tileM", "kStep", "tileC1", "pitch", "hin"))
    assert (t["tileLength"], t["tileM"], t["pitch"], t["hin"]) == (256, 128, 256 + 2, 3), t
    assert 2 * t["kStep"] * 16 * 256 * 2 <= t910.l0b_bytes < 2 * (t["kStep"] + 1) * 16 * 256 * 2, t  # two halves (ping-pong)
    # resident weights (one buffer) and two window buffers
    assert t["tileC1"] == 4 and (128 * 4 * 9 * 16 + 2 * 4 * 3 * 258 * 16) * 2 <= t910.l1_bytes, t
    # whole rows and one step: the L1 ring of hin + 1 rows per block keeps the halo rows for the next row tile
    assert run_tiling(conv, "ascend910b1", sizes, {}, 48, ("ringRows",))["ringRows"] == 4
    assert t["blocks"] == t910.aic
    c = run_tiling(convert, "ascend910b1", sizes, {}, 48, ("wGroup", "wGroups", "xTasks"))
    assert (c["wGroup"], c["wGroups"], c["xTasks"], c["blocks"]) == (4, 1, 16 * 4 * 64, 48), c
    assert run_tiling(conv, "ascend910b1", {**sizes, "C": 8192}, {}, 48)["blocks"] == 0
    # the whole kernel's probe (the CLI's --validate tiling) derives C1 from C itself (manifest workspace_symbols)
    from npu_harness.tiling_probe import launch_blocks
    assert launch_blocks(project, "ascend910b1", {k: v for k, v in sizes.items() if k != "C1"}, {}, 48) == t910.aic


def test_an_export_or_a_device_build_lowers_one_launch():
    """An export / device build takes a kernel of one launch: the CLI lowers those with the route off."""
    from npu_harness.validate_cases import KernelVariants

    src = ascend_dsl.parse_text(KERNEL.replace("OUT", "f32"), file="conv.adsl")[0]
    kinds = [KernelVariants(src, {"T": "f16"}, "ascend910b1", "conv.adsl", one_launch=one).lower(0)[0].kind
             for one in (False, True)]
    assert kinds == [ir.KernelKind.LAUNCHES, ir.KernelKind.CONV]


@pytest.mark.slow
def test_random_route_forms_on_few_cube_cores_match_the_interpreter():
    """The fuzzer's conv5hd forms (npu_harness/fuzz/gen.py) on 2-8 cores, so every core walks several tiles: the
    ping-pong buffers are reused and the L1 ring continues across row tiles (the main stream launches 48 cores 70 %
    of the time, where these small shapes give each cube core one tile)."""
    import random

    from npu_harness.fuzz import gen
    from npu_harness.fuzz.campaign import job_of
    from npu_harness.fuzz.runner import run_jobs

    progs = []
    for i in range(12):
        rng = random.Random(31_000 + i)
        k, sizes = gen._conv5hd(rng, f"k{i}", "ascend910b1")
        progs.append(k.program("conv5hd", sizes, 31_000 + i, "ascend910b1", rng.choice((2, 3, 4, 6, 8))))
    outcomes = run_jobs([job_of(p) for p in progs])
    assert [o.status for o in outcomes] == ["pass"] * len(progs), [(o.status, o.detail[:300]) for o in outcomes]
