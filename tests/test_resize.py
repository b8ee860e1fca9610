"""Resampling planes and volumes (resize_nearest / resize_nearest_exact / resize_linear): PyTorch's F.interpolate at
the stored size, kind RESIZE (lowering/emit/resize.py); the gallery's examples/resize/ run in the emulator (test_gallery_e2e)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from dsl_snippets import first_tile, tile_error, tile_kernel

from ascend_dsl import DslError, interpreter, ir, load_file, printer
from lowering import lower
from npu_harness.tiling_probe import run_tiling

REPO = Path(__file__).resolve().parent.parent

HEAD = '''@kernel
def k(x: Tensor[f32, "N, C, H, W"], y: Tensor[f32, "N, C, OH, OW"], b: Tensor[bf16, "N, C, H, W"],
      yb: Tensor[bf16, "N, C, OH, OW"]):
    for blk in split(N * C, cores=AIV):
        for p in tile(blk, size=auto, buffers=2):
'''


def _k(body: str) -> ir.Kernel:
    return tile_kernel(HEAD, body, "rs.adsl")


@pytest.mark.parametrize("call,mode,align", [
    ("resize_nearest", "nearest", None), ("resize_nearest_exact", "nearest-exact", None),
    ("resize_linear", "bilinear", False), ("resize_linear(XX, align_corners=True)", "bilinear", True),
    ("resize_cubic", "bicubic", False), ("resize_cubic(XX, align_corners=True)", "bicubic", True)])
def test_interpreter_resamples_to_the_stored_size_as_pytorch(call, mode, align):
    text = call.replace("XX", "load(x[p])") if "XX" in call else f"{call}(load(x[p]))"
    k = _k(f"store(y[p], {text})")
    assert printer.kernel(k).count(text) == 1  # prints back as written
    x = torch.randn(2, 3, 7, 9)
    y = torch.zeros(2, 3, 11, 4)
    interpreter.run(k, {"x": x, "y": y, "b": x.bfloat16(), "yb": y.bfloat16()}, num_cores=2, tile=1)
    kw = {} if align is None else {"align_corners": align}
    assert torch.equal(y, torch.nn.functional.interpolate(x, size=(11, 4), mode=mode, **kw))


@pytest.mark.parametrize("body,code,msg", [
    ("store(y[p], resize_nearest(load(x[p]), scale=2))", "ARGS", "resize_nearest takes one loaded plane"),
    ("store(y[p], resize_nearest(load(x[p]), align_corners=True))", "ARGS", "takes one loaded plane"),
    ("store(y[p], resize_linear(load(x[p]), align_corners=1))", "ARGS", "expected True or False"),
    ("store(yb[p], resize_linear(load(b[p])))", "DTYPE-UNSUPPORTED", "'resize_linear' does not support bf16"),
    ("store(yb[p], resize_cubic(load(b[p])))", "DTYPE-UNSUPPORTED", "'resize_cubic' does not support bf16"),
    ("store(y[p], resize_cubic(load(x[p]), a=-0.5))", "ARGS", "optionally align_corners=True"),
    ("store(y[p], resize_nearest(load(x[p]), antialias=True))", "ARGS", "resize_nearest has no antialias="),
    ("store(yb[p], resize_linear(load(b[p]), antialias=True))", "DTYPE-UNSUPPORTED", "does not support bf16"),
    ("store(y[p], resize_linear(load(x[p]), antialias=1))", "ARGS", "expected True or False"),
    ("t = resize_nearest(load(x[p]))\nstore(y[p], t)", "UNSUPPORTED", "a resized plane is stored directly"),
    ("store(y[p], resize_nearest(load(x[p])) * 2.0)", "UNSUPPORTED", "resized planes are only stored"),
    ("store(y[p], resize_nearest(load(x[p]) * 2.0))", "UNSUPPORTED", "plane tiles only feed"),
])
def test_resize_errors_are_located(body, code, msg):
    e = tile_error(HEAD, body, "rs.adsl")
    d = e.diagnostics[0]
    assert d.code == code and msg in d.message, e.render()
    assert d.span.file == "rs.adsl" and d.span.line == 6


def test_antialias_of_a_volume_is_unsupported():
    e = tile_error(HEAD_3D, "store(y[p], resize_linear(load(x[p]), antialias=True))", "rs.adsl")
    assert e.diagnostics[0].code == "UNSUPPORTED" and "antialias=True resamples 2 spatial dims" in e.diagnostics[0].message


def test_resize_needs_a_plane():
    head = '''@kernel
def k(x: Tensor[f32, "N"], y: Tensor[f32, "N"]):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
'''
    e = tile_error(head, "store(y[t], resize_nearest(load(x[t])))", "rs.adsl")
    assert e.diagnostics[0].code == "TYPE" and "needs a loaded plane" in e.diagnostics[0].message, e.render()


HEAD_3D = '''@kernel
def k(x: Tensor[f32, "N, C, D, H, W"], y: Tensor[f32, "N, C, OD, OH, OW"], b: Tensor[f16, "N, C, D, H, W"],
      yb: Tensor[f16, "N, C, OD, OH, OW"]):
    for blk in split(N * C, cores=AIV):
        for p in tile(blk, size=auto, buffers=2):
'''


@pytest.mark.parametrize("call,mode,align", [
    ("resize_nearest", "nearest", None), ("resize_nearest_exact", "nearest-exact", None),
    ("resize_linear", "trilinear", False), ("resize_linear(XX, align_corners=True)", "trilinear", True)])
def test_interpreter_resamples_volumes_as_pytorch(call, mode, align):
    text = call.replace("XX", "load(x[p])") if "XX" in call else f"{call}(load(x[p]))"
    k = tile_kernel(HEAD_3D, f"store(y[p], {text})", "rs.adsl")
    x = torch.randn(2, 3, 5, 7, 9)
    y = torch.zeros(2, 3, 3, 11, 4)
    interpreter.run(k, {"x": x, "y": y, "b": x.half(), "yb": y.half()}, num_cores=2, tile=1)
    kw = {} if align is None else {"align_corners": align}
    assert torch.equal(y, torch.nn.functional.interpolate(x, size=(3, 11, 4), mode=mode, **kw))


@pytest.mark.parametrize("x_shape,y_shape,rank", [("N, C, L", "N, C, OL", 1), ("N, C, D, H, W", "N, C, OD, OH, OW", 3)])
def test_bicubic_is_2d_only_and_the_error_names_what_works(x_shape, y_shape, rank):
    head = f'''@kernel
def k(x: Tensor[f32, "{x_shape}"], y: Tensor[f32, "{y_shape}"]):
    for blk in split(N * C, cores=AIV):
        for p in tile(blk, size=auto, buffers=2):
'''
    e = tile_error(head, "store(y[p], resize_cubic(load(x[p])))", "rs.adsl")
    d = e.diagnostics[0]
    assert d.code == "UNSUPPORTED" and f"2 spatial dims (PyTorch's bicubic); this plane has {rank}" in d.message, \
        e.render()
    assert "resize_linear" in d.hint and d.span.line == 5


def test_bicubic_gathers_four_columns_of_four_rows():
    project, _ = lower(_k("store(y[p], resize_cubic(load(x[p]), align_corners=True))"), "ascend910b1", "rs.adsl")
    code = project.files["k_kernel.cpp"]
    assert "Cubic(o, W_, sw, idx, w);" in code and "const float src = scale.s * static_cast<float>(o);" in code
    assert "Gather(a, xLocal, colOff[j], base, n);" in code and "Add(k == 3 ? dst : u, u, t, n);" in code
    half, _ = lower(_k("store(y[p], resize_cubic(load(x[p])))"), "ascend910b1", "rs.adsl")
    assert "SignedHalfPixel(o, scale, q, negative)" in half.files["k_kernel.cpp"]


@pytest.mark.parametrize("call,linear", [("resize_linear", True), ("resize_nearest", False)])
def test_volumes_gather_from_depth_tables(call, linear):
    project, ctx = lower(tile_kernel(HEAD_3D, f"store(yb[p], {call}(load(b[p])))", "rs.adsl"), "ascend910b1", "rs.adsl")
    assert ctx.lowered.kind is ir.KernelKind.RESIZE and first_tile(ctx.lowered).shape.rank == 3
    code = project.files["k_kernel.cpp"]
    assert "const AxisScale sd = Scale(D_, OD_);" in code and "CopyInBand(p0, d0, d1, lo, hi)" in code
    assert code.count("Gather(ga, bLocal, colOff0, base") == (4 if linear else 0)
    assert ("Muls(u, u, dw0, n);" in code) == linear and ("Cast(dst, t, RoundMode::CAST_RINT, n);" in code) == linear
    assert "uint32_t depthBands;" in project.files["k_tiling.h"]


@pytest.mark.parametrize("body,msg", [
    ("store(y[p], resize_nearest(load(x[p])))\nstore(yb[p], resize_nearest(load(b[p])))",
     "a resize loop stores one resize of one loaded plane"),
    ("store(y[p], resize_nearest(load(x[p])))\nstore(y[p], max_pool(load(x[p]), kernel=2))",
     "either pools or resizes"),
])
def test_resize_loop_structure_is_checked_when_lowering(body, msg):
    with pytest.raises(DslError) as e:
        lower(_k(body), "ascend910b1", "rs.adsl")
    assert any(d.code == "UNSUPPORTED" and msg in d.message for d in e.value.diagnostics), e.value.render()


def test_resize_on_310p_is_refused_naming_the_target():
    head = HEAD.replace('b: Tensor[bf16, "N, C, H, W"],\n      yb: Tensor[bf16, "N, C, OH, OW"]', "")
    with pytest.raises(DslError) as e:
        lower(tile_kernel(head, "store(y[p], resize_linear(load(x[p])))", "rs.adsl"), "ascend310p", "rs.adsl")
    d = e.value.diagnostics[0]
    assert d.code == "UNSUPPORTED" and "ascend310p does not have" in d.message and d.span.line == 5, e.value.render()


def test_resize_is_its_own_kind_with_gathers_from_per_core_tables():
    project, ctx = lower(_k("store(y[p], resize_linear(load(x[p])))"), "ascend910b1", "rs.adsl")
    assert ctx.lowered.kind is ir.KernelKind.RESIZE
    assert first_tile(ctx.lowered).kind is ir.LoopKind.PLANES
    code = project.files["k_kernel.cpp"]
    assert code.count("Gather(a, xLocal, colOff0, base") == 2 and "Add(dst, t, a, n);" in code
    assert "FillTables();" in code and "SetFlag<HardEvent::S_V>" in code
    nearest, _ = lower(_k("store(y[p], resize_nearest(load(x[p])))"), "ascend910b1", "rs.adsl")
    assert "Gather(dst, xLocal, colOff0, base, n);" in nearest.files["k_kernel.cpp"]


_FIELDS = ("blockLength", "tileLength", "bandRows", "inTileElems", "outTileElems", "bufferNum")


@pytest.mark.parametrize("example,dims,expect", [
    # benchmark scale, 2x up: 1024 x 1024 output planes (4 MB) run as bands of output rows
    ("upsample_bilinear2d", "32 64 512 512 1024 1024", lambda b: b[0] == 48 and b[2] == 1 and 0 < b[3] < 1024),
    ("upsample_nearest2d", "32 64 512 512 1024 1024", lambda b: b[0] == 48 and b[2] == 1 and 0 < b[3] < 1024),
    # small planes: several whole planes per tile
    ("upsample_nearest2d", "16 32 16 16 32 32", lambda b: b[0] == 47 and b[2] > 1 and b[3] == 32),
    # an output row of 100,000 (linear: 4 tables of it plus 3 f32 scratch rows) does not fit UB: refused (TILING)
    ("upsample_bilinear2d", "1 1 2 50000 4 100000", lambda b: b[0] == 0),
    # a 1-D plane is one row: at the benchmark's 65,536 it does not fit UB with its output row (SCALE_LIMITED)
    ("interpolate_linear1d", "64 128 65536 1600", lambda b: b[0] == 0),
    ("interpolate_linear1d", "64 128 8192 1600", lambda b: b[0] == 48 and b[2] == 1),
    # an empty spatial size: refused as PyTorch does
    ("upsample_nearest2d", "1 1 0 5 3 3", lambda b: b[0] == 0),
    # bicubic at benchmark scale (512^2 -> 1024^2): bands of output rows; small planes whole
    ("upsample_bicubic2d", "32 64 512 512 1024 1024", lambda b: b[0] == 48 and b[2] == 1 and 0 < b[3] < 1024),
    ("upsample_bicubic2d", "16 32 16 16 32 32", lambda b: b[0] == 47 and b[2] > 1 and b[3] == 32),
    # volumes (fields + depthBands): small ones whole, several per tile
    ("upsample_trilinear3d", "2 3 5 7 9 10 14 18", lambda b: b[0] == 6 and b[2] == 1 and b[7] == 0),
    ("upsample_nearest3d", "16 32 4 8 8 8 16 16", lambda b: b[0] == 47 and b[2] > 1 and b[7] == 0),
    # benchmark scale, 2x up (64^3 -> 128^3): per output depth slice, bands of rows (linear: of two source depth
    # slices; 96 of the 128 rows fit double-buffered) or the whole slice (nearest)
    ("upsample_trilinear3d", "16 32 64 64 64 128 128 128", lambda b: b[0] == 47 and b[7] == 1 and b[3] == 96
     and b[4] == 2 * 51 * 64),
    ("upsample_nearest3d", "16 32 64 64 64 128 128 128", lambda b: b[0] == 47 and b[7] == 1 and b[3] == 128),
    # a band smaller than an output depth slice: 2 x 1000 rows of 1000 -> 3 x 2001 x 1999
    ("upsample_trilinear3d", "1 1 2 1000 1000 3 2001 1999", lambda b: b[7] == 1 and 0 < b[3] < 2001),
    # an output row of 100,000 does not fit UB; an empty depth is refused as PyTorch does
    ("upsample_trilinear3d", "1 1 2 2 50000 2 4 100000", lambda b: b[0] == 0),
    ("upsample_nearest3d", "1 1 0 5 3 3 3 3", lambda b: b[0] == 0),
])
def test_host_tiling(example, dims, expect):
    adsl = REPO / f"examples/resize/{example}.adsl"
    project, _ = lower(load_file(adsl)[0].instantiate(), "ascend910b1", adsl.name)
    symbols = dict(zip(project.manifest["symbols"], (int(v) for v in dims.split()), strict=True))
    fields = _FIELDS + (("depthBands",) if "3d" in example else ())
    t = run_tiling(project, "ascend910b1", symbols, {}, 48, fields)
    got = [t["blocks"], *(t[f] for f in fields)]
    assert expect(got), got


@pytest.mark.slow
@pytest.mark.parametrize("sizes", [
    # (in, out) pairs where floor((o + 0.5f) * scale) rounds down across a tie and PyTorch's CPU kernel (one
    # rounding of scale * (o + 0.5f) - 0.5f, a fused multiply-add) does not: both axes at once
    {"height": 2, "out_height": 41, "width": 6, "out_width": 123},
    {"height": 2, "out_height": 2033, "width": 4, "out_width": 94},  # the fuzzer's 1-D finding, as rows
    {"height": 4, "out_height": 82, "width": 18, "out_width": 2763},
])
def test_nearest_exact_takes_pytorchs_source_at_ties_in_the_emulator(sizes):
    """One compile (the gallery example's, shared with test_gallery_e2e through the compile cache), three runs.
    tests/test_resize_index.py checks the same index arithmetic against PyTorch over 1000 random sizes."""
    from npu_harness.gallery import Example, validate

    stem = REPO / "examples/resize/resize_nearest_exact2d"
    ex = Example("resize", "resize_nearest_exact2d", stem.with_suffix(".adsl"), stem.with_suffix(".py"))
    res = validate(ex, {}, {"batch_size": 1, "channels": 2, **sizes})
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])


@pytest.mark.slow
@pytest.mark.parametrize("align", [True, False])
def test_f16_linear_weights_are_fp32_as_pytorchs(align):
    """Fuzz seed 3217's finding (tests/fuzz_cases/mismatch-f16-linear-resize-weights-in-f32.adsl): f16 weights
    (w1 = half(l), w0 = half(1 - w1)) put a tap next to -937.5 off by 1e-4 and the output by 0.034; torch 2.13's f16
    bilinear keeps the weights in fp32 (bit for bit), as the kernel now does, for both alignments."""
    from npu_harness.fuzz.program import from_case
    from npu_harness.fuzz.runner import Job, run_jobs

    text, setup = from_case((REPO / "tests/fuzz_cases/mismatch-f16-linear-resize-weights-in-f32.adsl").read_text())
    if not align:
        text = text.replace("align_corners=True", "align_corners=False")
    (o,) = run_jobs([Job(text, setup["sizes"], setup["seed"], setup["target"], setup["cores"], "resize-f16")])
    assert o.status == "pass", f"{o.status} {o.signature}\n{o.detail[:800]}"
