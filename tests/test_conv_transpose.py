"""Transposed convolution (conv_transpose1d/2d/3d on the CONV kind): the front end and its located errors, the
interpreter against PyTorch and against a direct scatter written here (out[o] += w[k] x[i] where
o = i * stride - padding + k * dilation), the gather layout the lowering picks, the launch's channel checks,
and the emitted kernels in the emulator at several (stride, padding, output_padding, dilation, groups), all in
one emulator binary. The gallery kernels (examples/convolution/conv_transpose*) run in tests/test_gallery_e2e.py."""

from __future__ import annotations

import itertools

import pytest
import torch

import ascend_dsl
import lowering
from ascend_dsl import interpreter, ir, printer
from ascend_dsl.diagnostics import DslError

KERNEL = '''@kernel(T=[f16, bf16])
def convt(x: Tensor[T, "N, C, H, W"], w: Tensor[T, "C, K, KH, KW"], y: Tensor[f32, "N, K, OH, OW"]):
    for blk in split(N, K, OH, OW, cores=AIC):  # SPLIT
        with cube:
            acc = conv_transpose2d(x[blk], w[blk], stride=2)  # CONV
        with vector:
            store(y[blk], acc)
'''

GROUPED = '''@kernel(T=[f16])
def convt(x: Tensor[T, "N, C, H, W"], w: Tensor[T, "C, KG, KH, KW"], y: Tensor[f32, "N, K, OH, OW"]):
    for blk in split(N, K, OH, OW, cores=AIC):
        with cube:
            acc = conv_transpose2d(x[blk], w[blk], groups=2)
        with vector:
            store(y[blk], acc)
'''


def _kernel(text: str, **dtypes) -> ir.Kernel:
    return ascend_dsl.parse_text(text, file="convt.adsl")[0].instantiate(dtypes)


def _out_size(i: int, k: int, s: int, p: int, op: int, d: int) -> int:
    return (i - 1) * s - 2 * p + d * (k - 1) + op + 1


def _scatter(x: torch.Tensor, w: torch.Tensor, s: int, p: int, op: int, d: int, g: int) -> torch.Tensor:
    """The definition, one input position and tap at a time (f64): out[n, co, o] += w[ci, co % kg, k] x[n, ci, i],
    o = i * s - p + k * d per spatial axis, for input channels ci of co's group."""
    rank = x.dim() - 2
    n, c, kg = x.shape[0], x.shape[1], w.shape[1]
    out_sp = [_out_size(i, k, s, p, op, d) for i, k in zip(x.shape[2:], w.shape[2:], strict=True)]
    out = torch.zeros(n, kg * g, *out_sp, dtype=torch.float64)
    cg = c // g
    x64, w64 = x.double(), w.double()
    for i in itertools.product(*(range(v) for v in x.shape[2:])):
        for k in itertools.product(*(range(v) for v in w.shape[2:])):
            o = [ii * s - p + kk * d for ii, kk in zip(i, k, strict=True)]
            if not all(0 <= oo < size for oo, size in zip(o, out_sp, strict=True)):
                continue
            for grp in range(g):
                xs = x64[(slice(None), slice(grp * cg, (grp + 1) * cg), *i)]            # [n, cg]
                ws = w64[(slice(grp * cg, (grp + 1) * cg), slice(None), *k)]            # [cg, kg]
                out[(slice(None), slice(grp * kg, (grp + 1) * kg), *o)] += xs @ ws
    assert rank == len(out_sp)
    return out


def _text(rank: int, opts: str, groups: str = "") -> str:
    axes = ("D", "H", "W")[3 - rank:]
    wch = "KG" if groups else "K"
    return (f'@kernel(T=[f16])\ndef convt(x: Tensor[T, "N, C, {", ".join(axes)}"], '
            f'w: Tensor[T, "C, {wch}, {", ".join("K" + a for a in axes)}"], '
            f'y: Tensor[f32, "N, K, {", ".join("O" + a for a in axes)}"]):\n'
            f'    for blk in split(N, K, {", ".join("O" + a for a in axes)}, cores=AIC):\n'
            f'        with cube:\n'
            f'            acc = conv_transpose{rank}d(x[blk], w[blk]{opts}{groups})\n'
            f'        with vector:\n'
            f'            store(y[blk], acc)\n')


def test_parses_prints_and_lowers_as_a_conv_kind():
    k = _kernel(KERNEL.replace("stride=2)", "stride=2, padding=1, output_padding=1)"), T="f16")
    c = ir.conv_loop(k).conv
    assert (c.transposed, c.stride, c.padding, c.output_padding, c.dilation) == (True, (2, 2), (1, 1), (1, 1), (1, 1))
    assert "acc = conv_transpose2d(x[blk], w[blk], stride=2, padding=1, dilation=1, output_padding=1)" \
        in printer.kernel(k)
    project, ctx = lowering.lower(k, "ascend910b1", "convt.adsl")
    assert ctx.lowered.kind is ir.KernelKind.CONV
    src = project.files["convt_kernel.cpp"]
    assert "Scatter(" in src and "tapsPad" in src and "KERNEL_TYPE_AIC_ONLY" in src
    # the launch checks PyTorch's output size rule, output_padding included
    assert "OH + 2 == (H - 1) * 2 + 1 * (KH - 1) + 1 + 1" in project.files["convt_main.cpp"]


# (rank, stride, padding, output_padding, dilation, groups): every option alone and together, odd sizes
CASES = [(2, 1, 0, 0, 1, 1), (2, 2, 0, 0, 1, 1), (2, 2, 1, 1, 1, 1), (2, 3, 2, 2, 1, 1), (2, 1, 1, 0, 2, 1),
         (2, 2, 1, 1, 2, 2), (2, 1, 3, 0, 3, 3), (1, 2, 1, 1, 1, 1), (1, 3, 0, 1, 2, 2), (3, 2, 1, 1, 1, 1),
         (3, 1, 0, 0, 2, 2)]


@pytest.mark.parametrize("rank, s, p, op, d, g", CASES)
def test_interpreter_matches_the_definition_and_torch(rank, s, p, op, d, g):
    torch.manual_seed(rank * 100 + s * 10 + p)
    spatial = {1: (11,), 2: (5, 7), 3: (3, 4, 5)}[rank]
    kernel = {1: (4,), 2: (3, 2), 3: (2, 3, 2)}[rank]
    c, kg = 2 * g, 3
    x, w = torch.randn(2, c, *spatial).half(), torch.randn(c, kg, *kernel).half()
    ref = _scatter(x, w, s, p, op, d, g)
    fn = {1: torch.nn.functional.conv_transpose1d, 2: torch.nn.functional.conv_transpose2d,
          3: torch.nn.functional.conv_transpose3d}[rank]
    torch.testing.assert_close(fn(x.double(), w.double(), stride=s, padding=p, output_padding=op, dilation=d,
                                  groups=g), ref)
    opts = f", stride={s}, padding={p}, output_padding={op}, dilation={d}"
    k = _kernel(_text(rank, opts, f", groups={g}" if g > 1 else ""), T="f16")
    out = interpreter.run(k, {"x": x, "w": w, "y": torch.empty(ref.shape)})["y"]
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-5)


def test_interpreter_reports_a_wrong_output_size():
    with pytest.raises(DslError) as ei:
        interpreter.run(_kernel(KERNEL, T="f16"), {"x": torch.randn(1, 3, 4, 4).half(),
                                                   "w": torch.randn(3, 5, 3, 3).half(), "y": torch.empty(1, 5, 8, 8)})
    assert ei.value.diagnostics[0].code == "BINDING" and "output_padding + 1" in ei.value.render()


@pytest.mark.parametrize("old, new, code, needle, msg", [
    ("stride=2)", "stride=2, output_padding=2)", "ARGS", "2)", "output_padding=2 must be smaller than the stride"),
    ("stride=2)", "stride=2, output_padding=-1)", "ARGS", "-1", "output_padding= takes an integer literal >= 0"),
    ("stride=2)", "stride=2, out_padding=1)", "ARGS", "conv_transpose2d", "unknown argument out_padding"),
    ('"C, K, KH, KW"', '"K, C, KH, KW"', "INDEX", "w[blk]", "its first dim is the input's channels"),
    ('"N, K, OH, OW"]):', '"N, KO, OH, OW"]):', "ARGS", "split(N, KO, OH, OW", "the output channels of "
     "conv_transpose2d are the weight's dim 1"),
    ("stride=2)", "stride=2, groups=2)", "ARGS", "split(N, K, OH, OW", "with groups= the output of conv_transpose2d "
     "has K x groups channels"),
])
def test_located_errors(old, new, code, needle, msg):
    text = KERNEL.replace(old, new)
    if "KO" in new:
        text = text.replace("split(N, K, OH, OW", "split(N, KO, OH, OW")
    with pytest.raises(DslError) as ei:
        lowering.lower(_kernel(text, T="f16"), "ascend910b1", "convt.adsl")
    err = ei.value
    assert "Traceback" not in err.render()
    d = next((d for d in err.diagnostics if d.code == code), None)
    assert d is not None, err.render()
    line = next(i for i, s in enumerate(text.splitlines(), 1) if needle in s)
    col = text.splitlines()[line - 1].index(needle) + 1
    assert (d.span.file, d.span.line, d.span.col) == ("convt.adsl", line, col), err.render()
    assert msg in d.message, err.render()


def test_bias_is_the_output_channels():
    text = KERNEL.replace('y: Tensor[f32', 'b: Tensor[f32, "C"], y: Tensor[f32').replace("stride=2)", "stride=2, bias=b)")
    with pytest.raises(DslError) as ei:
        lowering.lower(_kernel(text, T="f16"), "ascend910b1", "convt.adsl")
    assert "the bias of a convolution is [K]" in ei.value.render()


@pytest.mark.parametrize("wshape, opts, sparse", [
    ("C, K, KH, KW", ", stride=1", True),              # a symbolic kernel width: a tap may start mid-row
    ("C, K, KH, 1", ", stride=1", False),              # 1 x 1 along W, stride 1: whole rows
    ("C, K, KH, 3", ", stride=1, padding=2", False),   # padding >= dilation x (KW - 1): every tap starts at column 0
    ("C, K, KH, 3", ", stride=1, padding=1", True),
    ("C, K, KH, 1", ", stride=2", True),               # stride 2 along W: every other output pixel
])
def test_the_gather_layout(wshape, opts, sparse):
    from lowering.emit.conv import build_view

    text = KERNEL.replace('"C, K, KH, KW"', f'"{wshape}"').replace(", stride=2)", f"{opts})")
    _, ctx = lowering.lower(_kernel(text, T="f16"), "ascend910b1", "convt.adsl")
    view = build_view(ctx.lowered, ctx)
    assert (view.sparse, view.zero_fill, view.transposed) == (sparse, True, True)


def test_groups_that_do_not_split_the_channels_do_not_launch():
    from npu_harness.tiling_probe import launch_blocks

    project, _ = lowering.lower(_kernel(GROUPED), "ascend910b1", "convt.adsl")
    assert "C % 2 == 0 && K == KG * 2" in project.files["convt_main.cpp"]  # the launch's BINDING check
    sizes = {"N": 1, "C": 6, "H": 5, "W": 5, "K": 8, "KG": 4, "KH": 3, "KW": 3, "OH": 7, "OW": 7}
    assert launch_blocks(project, "ascend910b1", sizes, {}, 48) > 0
    assert launch_blocks(project, "ascend910b1", {**sizes, "C": 7}, {}, 48) == 0  # 7 inputs, 2 groups
    assert launch_blocks(project, "ascend910b1", {**sizes, "K": 6}, {}, 48) == 0  # 6 != 4 x 2


def test_a_stride_beyond_the_copy_strides_does_not_launch():
    """The gather places a tap's rows 16 x woPad x stride elements apart (a 16-bit Nd2NzParams field): larger
    strides get narrower tiles (stride 20: 12 pixels), and from stride 256 no tile fits, so the host tiling launches
    nothing (the launch reports the tiling error) rather than wrap."""
    from npu_harness.tiling_probe import launch_blocks

    sizes = {"N": 1, "C": 2, "H": 2, "W": 2, "K": 3, "KH": 1, "KW": 1}
    for stride, launches in ((2, True), (20, True), (255, True), (256, False)):
        text = KERNEL.replace("stride=2", f"stride={stride}")
        project, _ = lowering.lower(_kernel(text, T="f16"), "ascend910b1", "convt.adsl")
        out = {"OH": stride + 1, "OW": stride + 1}
        assert (launch_blocks(project, "ascend910b1", {**sizes, **out}, {}, 48) > 0) is launches, stride


def test_grouped_interpreter_reports_channels_that_do_not_split():
    with pytest.raises(DslError) as ei:
        interpreter.run(_kernel(GROUPED), {"x": torch.randn(1, 6, 4, 4).half(), "w": torch.randn(6, 4, 3, 3).half(),
                                           "y": torch.empty(1, 6, 6, 6)})
    assert ei.value.diagnostics[0].code == "BINDING" and "x groups" in ei.value.render()


def _job_text(rank: int, opts: str, groups: str, wch: str, out: str, value: str, bias: bool, lit_w: int | None) -> str:
    axes = ("D", "H", "W")[3 - rank:]
    kshape = ", ".join(str(lit_w) if a == "W" and lit_w else "K" + a for a in axes)
    b = 'b: Tensor[f32, "K"], ' if bias else ""
    return (f'@kernel(T=[f16])\ndef convt(x: Tensor[T, "N, C, {", ".join(axes)}"], w: Tensor[T, "C, {wch}, {kshape}"], '
            f'{b}y: Tensor[{out}, "N, K, {", ".join("O" + a for a in axes)}"]):\n'
            f'    for blk in split(N, K, {", ".join("O" + a for a in axes)}, cores=AIC):\n'
            f'        with cube:\n'
            f'            acc = conv_transpose{rank}d(x[blk], w[blk]{opts}{groups}{", bias=b" if bias else ""})\n'
            f'        with vector:\n'
            f'            store(y[blk], {value})\n')


#: (label, rank, stride, padding, output_padding, dilation, groups, inputs per group, outputs per group,
#:  spatial input, kernel (None: literal width), output dtype, relu, bias)
EMULATED = [
    ("s2_p1_op1", 2, 2, 1, 1, 1, "", 5, 19, (7, 9), (3, 3), "f32", False, False),
    ("s1_sparse", 2, 1, 0, 0, 1, "", 20, 33, (6, 11), (2, 3), "f32", False, True),
    ("s1_dense_rows", 2, 1, 2, 0, 1, "", 7, 17, (5, 21), (3, None), "f32", True, False),
    ("s3_dil2_op2", 2, 3, 2, 2, 2, "", 4, 9, (4, 5), (2, 3), "T", False, True),
    ("groups3", 2, 2, 1, 0, 1, ", groups=3", 2, 5, (5, 6), (3, 3), "f32", False, True),
    ("depthwise_x2", 2, 2, 0, 1, 1, ", groups=C", 1, 2, (4, 7), (3, 3), "T", True, False),
    ("1d_k4_s2", 1, 2, 1, 0, 1, "", 9, 40, (300,), (4,), "f32", False, True),
    ("3d_s2", 3, 2, 1, 1, 1, "", 3, 7, (2, 3, 4), (3, 2, 3), "f32", False, False),
    ("s20_narrow_tiles", 2, 20, 1, 0, 1, "", 5, 21, (3, 4), (3, 3), "f32", False, True),  # 12 pixels per tile
]


@pytest.mark.slow
def test_the_emulated_kernels_match_the_interpreter():
    """Each case lowered, compiled into one emulator binary (npu_harness.fuzz.runner) and compared with the
    interpreter (which matches the definition above)."""
    from npu_harness.fuzz.runner import Job, run_jobs

    jobs = []
    for label, rank, s, p, op, d, groups, cg, kg, spatial, kernel, out, relu, bias in EMULATED:
        axes = ("D", "H", "W")[3 - rank:]
        g = 3 if groups == ", groups=3" else 4 if groups else 1
        c = cg * g
        lit_w = 3 if kernel[-1] is None else None
        ksizes = (*kernel[:-1], lit_w) if lit_w else kernel
        sizes = {"N": 2, "C": c, "K": kg * g}
        for a, i, k in zip(axes, spatial, ksizes, strict=True):
            sizes.update({a: i, "O" + a: _out_size(i, k, s, p, op, d)})
            if not (a == "W" and lit_w):
                sizes["K" + a] = k
        wch = "K" if not groups else ("KG" if g == 3 else str(kg))
        if wch == "KG":
            sizes["KG"] = kg
        value = "relu(acc)" if relu else "acc"
        value = value if out == "f32" else f"cast({value}, T)"
        opts = f", stride={s}, padding={p}, output_padding={op}, dilation={d}"
        jobs.append(Job(_job_text(rank, opts, groups, wch, out, value, bias, lit_w), sizes, seed=5, label=label))
    outcomes = run_jobs(jobs)
    bad = [f"{o.job.label}: {o.status}\n{o.detail[:600]}\n{o.job.text}" for o in outcomes if o.status != "pass"]
    assert not bad, "\n".join(bad)


def test_fuzzer_draws_every_transposed_form():
    """npu_harness/fuzz/gen.py `_conv_transpose`: 1-D/2-D/3-D, stride 1-3, output_padding, dilation, groups (a literal
    and groups=C), bias, the dense layout (a literal kernel width); every program parses and is transposed."""
    import random

    from npu_harness.fuzz.gen import _conv_transpose

    rng, seen = random.Random(11), set()
    for i in range(300):
        k, sizes = _conv_transpose(rng, f"k{i}", "ascend910b1")
        src = ascend_dsl.parse_text(k.program("conv_t", sizes, i, "ascend910b1", 48).text(), file="g.adsl")[0]
        c = ir.conv_loop(src.instantiate(src.dtype_variants[0])).conv
        assert c.transposed
        seen |= {f"{c.rank}d", f"stride {c.stride[0]}", "bias" if c.bias else "no bias",
                 "groups=C" if c.groups == "C" else "groups" if c.groups != 1 else "dense",
                 "output_padding" if c.output_padding[0] else "", "dilation" if c.dilation[0] > 1 else "",
                 "literal KW" if "KW" not in sizes and c.rank > 0 and "W" in sizes else ""}
    assert seen >= {"1d", "2d", "3d", "stride 1", "stride 2", "stride 3", "bias", "no bias", "groups=C", "groups",
                    "dense", "output_padding", "dilation", "literal KW"}
