"""Convolution on the cube (CONV kernels): front end, located errors for what is not lowered yet, the
interpreter against torch, the emitted project's shape, and the emulator's burst-exact race records that
the image-to-column gather relies on (a real overlap is still a race). The gallery kernels run in the
emulator in tests/test_gallery_e2e.py."""

from __future__ import annotations

import pytest
import torch

import ascend_dsl
import lowering
from ascend_dsl import interpreter, ir, printer
from ascend_dsl.diagnostics import DslError

KERNEL = '''@kernel(T=[f16, bf16])
def conv(x: Tensor[T, "N, C, H, W"], w: Tensor[T, "K, C, KH, KW"], y: Tensor[f32, "N, K, OH, OW"]):
    for blk in split(N, K, OH, OW, cores=AIC):
        with cube:
            acc = conv2d(x[blk], w[blk])  # CONV
        with vector:
            store(y[blk], acc)  # STORE
'''


def _kernel(text: str, **dtypes) -> ir.Kernel:
    return ascend_dsl.parse_text(text, file="conv.adsl")[0].instantiate(dtypes)


def _error(text: str, target: str = "ascend910b1") -> DslError:
    with pytest.raises(DslError) as ei:
        lowering.lower(_kernel(text), target, "conv.adsl")
    assert "Traceback" not in ei.value.render()
    return ei.value


def _at(err: DslError, code: str, text: str, mark: str, needle: str, msg: str) -> None:
    d = next((d for d in err.diagnostics if d.code == code), None)
    assert d is not None, err.render()
    line = next(i for i, s in enumerate(text.splitlines(), 1) if f"# {mark}" in s)
    col = text.splitlines()[line - 1].index(needle) + 1
    assert (d.span.file, d.span.line, d.span.col) == ("conv.adsl", line, col), err.render()
    assert msg in d.message, err.render()


def test_conv_kernel_parses_prints_and_is_a_conv_kind():
    k = _kernel(KERNEL)
    loop = ir.conv_loop(k)
    assert loop.conv == ir.Conv("acc", "x", "w", 2, (1, 1), (0, 0), (1, 1))
    assert (loop.out, loop.out_dtype, loop.relu, loop.dims) == ("y", ascend_dsl.dtypes.DType.F32, False,
                                                                ("N", "K", "OH", "OW"))
    assert [p.name for p in k.outputs] == ["y"]
    text = printer.kernel(k)
    assert "acc = conv2d(x[blk], w[blk], stride=1, padding=0, dilation=1)" in text
    project, ctx = lowering.lower(k, "ascend910b1", "conv.adsl", allow_conv5hd=False)
    assert ctx.lowered.kind is ir.KernelKind.CONV
    src = project.files["conv_kernel.cpp"]
    for api in ("Nd2NzParams", "LoadData2DParams", "Mmad(", "Fixpipe(", "KERNEL_TYPE_AIC_ONLY"):
        assert api in src, api
    assert "conv.adsl:5" in src  # the conv's line leads back to the DSL
    assert project.manifest["kernel_type"] == "AIC_ONLY"


@pytest.mark.parametrize("value, relu, dtype", [("acc", False, "f32"), ("relu(acc)", True, "f32"),
                                                ("cast(acc, f16)", False, "f16"), ("cast(relu(acc), f16)", True, "f16")])
def test_store_forms_map_to_fixpipe_relu_and_quant(value, relu, dtype):
    text = KERNEL.replace("store(y[blk], acc)", f"store(y[blk], {value})").replace('Tensor[f32, "N, K', f'Tensor[{dtype}, "N, K')
    k = _kernel(text)
    assert ir.conv_loop(k).relu is relu and str(ir.conv_loop(k).out_dtype) == dtype
    src = lowering.lower(k, "ascend910b1", "conv.adsl", allow_conv5hd=False)[0].files["conv_kernel.cpp"]
    assert ("fp.quantPre = QuantMode_t::F322F16;" in src) is (dtype == "f16")
    assert ", true);" in src.split("FixpipeParamsV220 fp(")[1].split("\n")[1] if relu else True


@pytest.mark.parametrize("stride, padding, dilation", [(1, 0, 1), (2, 1, 1), (1, 2, 2), (3, 0, 2)])
def test_interpreter_matches_torch(stride, padding, dilation):
    text = KERNEL.replace("conv2d(x[blk], w[blk])", f"conv2d(x[blk], w[blk], stride={stride}, padding={padding}, "
                          f"dilation={dilation})")
    k = _kernel(text)
    x, w = torch.randn(2, 3, 17, 13).half(), torch.randn(4, 3, 3, 3).half()
    ref = torch.nn.functional.conv2d(x.float(), w.float(), stride=stride, padding=padding, dilation=dilation)
    out = interpreter.run(k, {"x": x, "w": w, "y": torch.empty(ref.shape)})["y"]
    torch.testing.assert_close(out, ref)


def test_interpreter_reports_a_wrong_output_size():
    with pytest.raises(DslError) as ei:
        interpreter.run(_kernel(KERNEL), {"x": torch.randn(1, 3, 8, 8).half(), "w": torch.randn(4, 3, 3, 3).half(),
                                          "y": torch.empty(1, 4, 8, 8)})
    assert ei.value.diagnostics[0].code == "BINDING"


@pytest.mark.parametrize("old, new, code, mark, needle, msg", [
    ("conv2d(x[blk], w[blk])", "conv2d(x[blk], w[blk], padding=-1)", "ARGS", "CONV", "-1",
     "padding= takes an integer literal >= 0"),
    ("conv2d(x[blk], w[blk])", "conv2d(x[blk], w[blk], stride=1.5)", "ARGS", "CONV", "1.5",
     "stride= takes an integer literal >= 1"),
    ("store(y[blk], acc)", "store(y[blk], acc * max(acc, axis=3))", "UNSUPPORTED", "STORE", "3)",
     "reduces the channels (axis=1) or every spatial dim"),  # other epilogues: launches (tests/test_autosplit.py)
    ("store(y[blk], acc)", "store(y[blk], cast(acc, f16))", "DTYPE-MISMATCH", "STORE", "cast",
     "'y' is f32 but the stored value is f16"),
    ("conv2d(x[blk], w[blk])", "conv2d(x[blk], w[blk], stride=0)", "ARGS", "CONV", "0", "stride= takes an integer"),
    ("conv2d(x[blk], w[blk])", "conv2d(x[blk], w[blk], output_padding=1)", "ARGS", "CONV", "conv2d",
     "unknown argument output_padding"),
    ("conv2d(x[blk], w[blk])", "conv2d(x[blk], w[blk], groups=0)", "ARGS", "CONV", "0", "groups= takes an integer"),
    ("conv2d(x[blk], w[blk])", "conv2d(x[blk], w[blk], groups=G)", "ARGS", "CONV", "G", "groups= takes an integer"),
    ("conv2d(x[blk], w[blk])", "conv2d(x[blk], w[blk], groups=2)", "INDEX", "CONV", "w[blk]",
     "with groups= the weight of conv2d is [K, CG"),
    ("conv2d(x[blk], w[blk])", "conv2d(x[0], w[blk])", "INDEX", "CONV", "x[0]", "indexed by the block"),
])
def test_located_errors(old, new, code, mark, needle, msg):
    text = KERNEL.replace(old, new)
    _at(_error(text), code, text, mark, needle, msg)


@pytest.mark.parametrize("opts, sparse, zero_fill", [("", False, False), (", stride=2", True, False),
                                                     (", padding=1", True, True), (", padding=0, dilation=2", False, False)])
def test_stride_and_padding_pick_the_gather_layout(opts, sparse, zero_fill):
    """Row stride 1 without padding along W gathers whole rows (dense); stride or W padding gives every output
    pixel its own fractal column (sparse); any padding zero-fills the L1 tile before the copies."""
    text = KERNEL.replace("conv2d(x[blk], w[blk])", f"conv2d(x[blk], w[blk]{opts})")
    project, _ = lowering.lower(_kernel(text), "ascend910b1", "conv.adsl", allow_conv5hd=False)
    src = project.files["conv_kernel.cpp"]
    assert ("one fractal column per output pixel" in src) is sparse
    assert ("InitConstValue(bL1" in src) is zero_fill
    assert "error[" not in src


CONV1D = KERNEL.replace('"N, C, H, W"', '"N, C, L"').replace('"K, C, KH, KW"', '"K, C, KL"') \
    .replace('"N, K, OH, OW"', '"N, K, OL"').replace("split(N, K, OH, OW", "split(N, K, OL").replace("conv2d(", "conv1d(")
CONV3D = KERNEL.replace('"N, C, H, W"', '"N, C, D, H, W"').replace('"K, C, KH, KW"', '"K, C, KD, KH, KW"') \
    .replace('"N, K, OH, OW"', '"N, K, OD, OH, OW"').replace("split(N, K, OH, OW", "split(N, K, OD, OH, OW") \
    .replace("conv2d(", "conv3d(")


@pytest.mark.parametrize("opts", ["", ", stride=3, padding=2, dilation=2"])
def test_conv1d_runs_in_the_interpreter_and_lowers_as_one_row(opts):
    text = CONV1D.replace("conv1d(x[blk], w[blk])", f"conv1d(x[blk], w[blk]{opts})")
    k = _kernel(text)
    x, w = torch.randn(2, 3, 20).half(), torch.randn(4, 3, 5).half()
    ref = torch.nn.functional.conv1d(x.float(), w.float(), **({"stride": 3, "padding": 2, "dilation": 2} if opts else {}))
    out = interpreter.run(k, {"x": x, "w": w, "y": torch.empty(ref.shape)})["y"]
    torch.testing.assert_close(out, ref)
    src = lowering.lower(k, "ascend910b1", "conv.adsl", allow_conv5hd=False)[0].files["conv_kernel.cpp"]
    assert "conv1d as an implicit GEMM" in src and "for (uint32_t ky = 0; ky < 1; ++ky)" in src
    assert ("one fractal column per output pixel" in src) is bool(opts)


@pytest.mark.parametrize("opts", ["", ", stride=2, padding=1, dilation=2"])
def test_conv3d_runs_in_the_interpreter_and_lowers_with_depth_taps(opts):
    text = CONV3D.replace("conv3d(x[blk], w[blk])", f"conv3d(x[blk], w[blk]{opts})")
    k = _kernel(text)
    x, w = torch.randn(1, 2, 7, 6, 9).half(), torch.randn(3, 2, 3, 2, 3).half()
    ref = torch.nn.functional.conv3d(x.float(), w.float(), **({"stride": 2, "padding": 1, "dilation": 2} if opts else {}))
    out = interpreter.run(k, {"x": x, "w": w, "y": torch.empty(ref.shape)})["y"]
    torch.testing.assert_close(out, ref)
    project, _ = lowering.lower(k, "ascend910b1", "conv.adsl", allow_conv5hd=False)
    src = project.files["conv_kernel.cpp"]
    assert "for (uint32_t kz = 0; kz < KD_; ++kz)" in src  # depth taps: one more factor of the reduction
    assert ("a depth tap in the padding" in src) is bool(opts)
    assert "KD * KH * KW" in project.files["conv_tiling.h"]


def test_wrong_split_weight_shape_and_f32_operands_are_errors():
    bad_split = KERNEL.replace("split(N, K, OH, OW", "split(N, OH, OW")
    with pytest.raises(DslError) as ei:
        _kernel(bad_split)
    assert ei.value.diagnostics[0].code == "ARGS" and "lists the output's dims" in ei.value.render()
    bad_w = KERNEL.replace('"K, C, KH, KW"', '"K, D, KH, KW"')
    with pytest.raises(DslError) as ei:
        _kernel(bad_w)
    assert ei.value.diagnostics[0].code == "INDEX" and "its second dim is the input's channels" in ei.value.render()
    with pytest.raises(DslError) as ei:
        _kernel(KERNEL.replace("T=[f16, bf16]", "T=[f32]"))
    assert ei.value.diagnostics[0].code == "DTYPE-UNSUPPORTED"


def test_conv_outside_a_cube_block_and_extra_statements():
    text = '''@kernel
def k(x: Tensor[f16, "N"], y: Tensor[f16, "N"]):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto):
            store(y[t], conv2d(load(x[t]), load(x[t])))
'''
    with pytest.raises(DslError) as ei:
        _kernel(text)
    assert ei.value.diagnostics[0].code == "KERNEL-STRUCTURE" and "`with cube:`" in ei.value.render()
    two = KERNEL.replace("            store(y[blk], acc)  # STORE", "            store(y[blk], acc)\n            y[blk] += acc")
    with pytest.raises(DslError) as ei:
        _kernel(two)
    assert ei.value.diagnostics[0].code == "UNSUPPORTED" and "holds assignments and stores" in ei.value.render()


def test_coupled_310p_is_rejected():
    err = _error(KERNEL, "ascend310p")
    assert err.diagnostics[0].code == "MIX-UNSUPPORTED" and "no Fixpipe" in err.render()


BIAS = KERNEL.replace('y: Tensor[f32, "N, K, OH, OW"]', 'b: Tensor[f32, "K"], y: Tensor[f32, "N, K, OH, OW"]') \
    .replace("conv2d(x[blk], w[blk])", "conv2d(x[blk], w[blk], padding=1, bias=b)")


def test_bias_is_added_in_f32_before_relu():
    """The interpreter adds the f32 bias before ReLU; the emitted kernel starts L0C from a float Mmad of the bias
    column by ones, and every main step accumulates onto it."""
    text = BIAS.replace("store(y[blk], acc)", "store(y[blk], relu(acc))")
    k = _kernel(text)
    assert ir.conv_loop(k).conv.bias == "b" and "bias=b)" in printer.kernel(k)
    x, w, b = torch.randn(2, 3, 9, 11).half(), torch.randn(4, 3, 3, 3).half(), torch.randn(4) * 10
    ref = torch.relu(torch.nn.functional.conv2d(x.float(), w.float(), b, padding=1))
    torch.testing.assert_close(interpreter.run(k, {"x": x, "w": w, "b": b, "y": torch.empty(ref.shape)})["y"], ref)
    src = lowering.lower(k, "ascend910b1", "conv.adsl", allow_conv5hd=False)[0].files["conv_kernel.cpp"]
    assert "Mmad(cL0, aL0f, bL0f, MmadParams(mRows, static_cast<uint16_t>(nCols), 1, 0, false, true));" in src
    assert "static_cast<uint16_t>(kDepth), 0, false, false));" in src and "ci0 == 0));" not in src


@pytest.mark.parametrize("old, new, code, needle, msg", [
    ('b: Tensor[f32, "K"]', 'b: Tensor[f16, "K"]', "DTYPE-UNSUPPORTED", "b)", "bias is added in f32"),
    ('b: Tensor[f32, "K"]', 'b: Tensor[f32, "C"]', "INDEX", "b)", "the bias of a convolution is [K]"),
    ("bias=b)", "bias=w)", "ARGS", "w)", "its own [K] tensor"),
    ("bias=b)", "bias=b[blk])", "ARGS", "b[blk]", "bias= takes a tensor parameter"),
])
def test_bad_bias_is_a_located_error(old, new, code, needle, msg):
    text = BIAS.replace(old, new)
    with pytest.raises(DslError) as ei:
        _kernel(text)
    d = ei.value.diagnostics[0]
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "# CONV" in s)
    assert (d.code, d.span.line, d.span.col) == (code, line, text.splitlines()[line - 1].index(needle) + 1), ei.value.render()
    assert msg in d.message, ei.value.render()


GROUPED = KERNEL.replace('"K, C, KH, KW"', '"K, CG, KH, KW"')


@pytest.mark.parametrize("groups, c, cg, k", [("3", 6, 2, 9), ("C", 5, 1, 5), ("C", 4, 1, 8)])
def test_groups_match_torch_and_tiles_stay_in_one_group(groups, c, cg, k):
    """groups= a literal or a shape symbol (groups=C: depthwise, also with a channel multiplier)."""
    text = GROUPED.replace("conv2d(x[blk], w[blk])", f"conv2d(x[blk], w[blk], padding=1, groups={groups})")
    kern = _kernel(text)
    assert ir.conv_loop(kern).conv.groups == (int(groups) if groups.isdigit() else groups)
    assert f"groups={groups})" in printer.kernel(kern)
    x, w = torch.randn(2, c, 7, 9).half(), torch.randn(k, cg, 3, 3).half()
    g = int(groups) if groups.isdigit() else c
    ref = torch.nn.functional.conv2d(x.float(), w.float(), padding=1, groups=g)
    torch.testing.assert_close(interpreter.run(kern, {"x": x, "w": w, "y": torch.empty(ref.shape)})["y"], ref)
    project, _ = lowering.lower(kern, "ascend910b1", "conv.adsl", allow_conv5hd=False)
    assert f"const uint64_t group = mTile / t_.groupTiles, kg = K_ / {'3' if groups == '3' else 'C_'};" \
        in project.files["conv_kernel.cpp"]
    assert f"C == CG * {groups}" in project.files["conv_main.cpp"]  # the launch checks the channel split


def test_groups_that_do_not_split_the_channels_are_a_binding_error():
    kern = _kernel(GROUPED.replace("conv2d(x[blk], w[blk])", "conv2d(x[blk], w[blk], groups=3)"))
    with pytest.raises(DslError) as ei:
        interpreter.run(kern, {"x": torch.randn(1, 6, 5, 5).half(), "w": torch.randn(4, 2, 3, 3).half(),
                               "y": torch.empty(1, 4, 3, 3)})
    assert ei.value.diagnostics[0].code == "BINDING" and "divisible by groups" in ei.value.render()


def test_groups_that_do_not_split_the_channels_do_not_launch():
    from npu_harness.tiling_probe import launch_blocks

    kern = _kernel(GROUPED.replace("conv2d(x[blk], w[blk])", "conv2d(x[blk], w[blk], groups=3)"))
    project, _ = lowering.lower(kern, "ascend910b1", "conv.adsl", allow_conv5hd=False)
    sizes = {"N": 1, "C": 6, "H": 9, "W": 9, "K": 6, "CG": 2, "KH": 3, "KW": 3, "OH": 7, "OW": 7}
    assert launch_blocks(project, "ascend910b1", sizes, {}, 48) > 0
    assert launch_blocks(project, "ascend910b1", {**sizes, "C": 7}, {}, 48) == 0  # 7 != 2 x 3
    assert launch_blocks(project, "ascend910b1", {**sizes, "K": 7}, {}, 48) == 0  # 7 output channels, 3 groups


@pytest.mark.parametrize("sizes", [
    {"N": 1, "C": 3, "D": 8, "H": 9, "W": 30, "K": 150, "KD": 7, "KH": 7, "KW": 7, "OD": 2, "OH": 3, "OW": 24},
    {"N": 1, "C": 64, "D": 9, "H": 9, "W": 600, "K": 64, "KD": 3, "KH": 3, "KW": 3, "OD": 7, "OH": 7, "OW": 598},
])
def test_deep_windows_and_long_rows_get_smaller_tiles_and_launch(sizes):
    """343 taps (depth 352) leave L0B room for 80 GEMM columns: the host tiling narrows the tile instead of
    failing; rows longer than that are cut along W (tests/fuzz_cases/tiling-conv3d-deep-window.adsl runs one)."""
    from npu_harness.tiling_probe import run_tiling

    project, _ = lowering.lower(_kernel(CONV3D), "ascend910b1", "conv.adsl")
    t = run_tiling(project, "ascend910b1", sizes, {}, 48, ("tileLength", "tileW"))
    assert t["blocks"] > 0, t
    if sizes["KD"] == 7:
        assert t["tileLength"] * 352 * 2 <= 65536, t  # depth x columns fit L0B
    else:
        assert t["tileW"] < sizes["OW"] and t["tileLength"] <= 512, t


def test_fuzzer_draws_every_convolution_form():
    """npu_harness/fuzz/gen.py `_conv`: conv1d/2d/3d, groups (a literal and groups=C), bias, deep windows, pointwise
    kernels (the flat path: with 16 input channels or more, and planes over 4095 pixels); every program parses."""
    import random

    from npu_harness.fuzz.gen import _conv

    rng, seen = random.Random(11), set()
    for i in range(300):
        k, sizes = _conv(rng, f"k{i}", "ascend910b1")
        src = ascend_dsl.parse_text(k.program("conv", sizes, i, "ascend910b1", 48).text(), file="g.adsl")[0]
        loop = ir.conv_loop(src.instantiate(src.dtype_variants[0]))
        c = loop.conv
        seen |= {f"conv{c.rank}d", "bias" if c.bias else "no bias", "groups=C" if c.groups == "C" else
                 "groups" if c.groups != 1 else "dense", "deep" if max(v for s, v in sizes.items() if s[:1] == "K"
                                                                      and len(s) == 2) >= 7 else "small"}
        kernel = [v for s, v in sizes.items() if s[:1] == "K" and len(s) == 2]
        if all(v == 1 for v in kernel) and c.stride == (1,) * c.rank and not any(c.padding):
            seen.add("pointwise")  # the flat path
            plane = 1
            for a in ("D", "H", "W"):
                plane *= sizes.get(a, 1)
            seen |= {"pointwise, 16 channels or more" if sizes["C"] >= 16 else "pointwise, few channels",
                     "pointwise, plane over 4095" if plane > 4095 else "pointwise, small plane"}
    assert seen == {"conv1d", "conv2d", "conv3d", "bias", "no bias", "groups=C", "groups", "dense", "deep", "small", "pointwise",
                    "pointwise, 16 channels or more", "pointwise, few channels", "pointwise, plane over 4095",
                    "pointwise, small plane"}


def test_pointwise_kernels_take_the_flat_path_only_with_one_tap():
    """stride 1 and no padding emit the flat branch; the host tiling takes it when the weight is 1 x 1 (KH, KW are
    shape symbols) and the channel stride fits the copy's 16 bits, and tiles the plane as one row of pixels."""
    from npu_harness.tiling_probe import run_tiling

    project, _ = lowering.lower(_kernel(KERNEL), "ascend910b1", "conv.adsl", allow_conv5hd=False)
    assert "if (t_.flat) {" in project.files["conv_kernel.cpp"]
    sizes = {"N": 2, "C": 37, "H": 56, "W": 56, "K": 64, "KH": 1, "KW": 1, "OH": 56, "OW": 56}
    t = run_tiling(project, "ascend910b1", sizes, {}, 48, ("flat", "tileW", "rowLen", "colTiles", "wResident"))
    assert (t["flat"], t["tileW"], t["rowLen"], t["colTiles"], t["wResident"]) == (1, 256, 3136, 13, 1), t
    t = run_tiling(project, "ascend910b1", {**sizes, "C": 4000, "KH": 3, "KW": 3, "OH": 54, "OW": 54}, {}, 48, ("wResident",))
    assert t["wResident"] == 0, t  # 128 channels x 36000 taps of weights do not fit L1: copied per tile and step
    t = run_tiling(project, "ascend910b1", {**sizes, "KH": 3, "KW": 3, "OH": 54, "OW": 54}, {}, 48, ("flat", "rowLen"))
    assert (t["flat"], t["rowLen"]) == (0, 54), t
    t = run_tiling(project, "ascend910b1", {**sizes, "H": 300, "W": 300, "OH": 300, "OW": 300}, {}, 48, ("flat",))
    assert t["flat"] == 0, t  # 90000 pixels: the channel stride does not fit Nd2NzParams' 16 bits
    padded, _ = lowering.lower(_kernel(KERNEL.replace("conv2d(x[blk], w[blk])", "conv2d(x[blk], w[blk], padding=1)")),
                               "ascend910b1", "conv.adsl", allow_conv5hd=False)
    assert "t_.flat" not in padded.files["conv_kernel.cpp"]


@pytest.mark.slow
@pytest.mark.parametrize("c, h, w, k", [(37, 7, 9, 20), (17, 70, 65, 33), (3, 5, 300, 150)])
def test_pointwise_flat_path_matches_torch_in_the_emulator(tmp_path, c, h, w, k):
    """The flat path in the emulator: channel blocks with a remainder (37 = 2 x 16 + 5), a plane over 4095 pixels
    (one copy per channel block), fewer than 16 channels and a plane of several tiles (one binary: sizes are
    runtime)."""
    from npu_harness.task import TaskRun
    from npu_harness.validate import validate_sim

    kern = _kernel(KERNEL, T=ir.DType.F16)
    project, ctx = lowering.lower(kern, "ascend910b1", "conv.adsl", allow_conv5hd=False)
    x, wt = torch.randn(2, c, h, w).half(), torch.randn(k, c, 1, 1).half()
    ref = torch.nn.functional.conv2d(x.float(), wt.float())
    res = validate_sim(kern, ctx.lowered, project, ctx, TaskRun([x, wt], [ref]), work_dir=tmp_path)
    assert res.ok, res.detail


@pytest.mark.slow
def test_the_headline_counts_the_problems_macs_not_the_sparse_columns(tmp_path):
    """Padding 1 takes the sparse layout (16 GEMM columns per output pixel): the emulator's Mmad counters call all
    of them useful, the estimate's cube term is the problem's N x K x OH x OW x C x taps (npu_harness/problem_macs.py)."""
    from npu_harness.cost.model import load_params, target_for
    from npu_harness.task import TaskRun
    from npu_harness.validate import validate_sim

    kern = _kernel(KERNEL.replace("conv2d(x[blk], w[blk])", "conv2d(x[blk], w[blk], padding=1)"), T=ir.DType.F16)
    project, ctx = lowering.lower(kern, "ascend910b1", "conv.adsl", allow_conv5hd=False)
    x, wt = torch.randn(2, 5, 7, 9).half(), torch.randn(20, 5, 3, 3).half()
    ref = torch.nn.functional.conv2d(x.float(), wt.float(), padding=1)
    res = validate_sim(kern, ctx.lowered, project, ctx, TaskRun([x, wt], [ref]), work_dir=tmp_path)
    assert res.ok, res.detail
    p = load_params(target_for("ascend910b1"))
    macs = 2 * 20 * 7 * 9 * 5 * 9
    assert res.report.cube_ideal_us == pytest.approx(macs / (p.cube_macs_per_cycle * p.clock_ghz * 1e3 * p.aic))
    counted = sum(b.get("cube_macs_useful", 0) for b in res.counters["blocks"])
    assert counted >= 16 * macs  # every pixel's 16-column fractal computed
