"""Autosplit (issue 14 item 2; ascend_dsl/autosplit.py): a conv or matmul split whose `with vector:` block its cube
kernel cannot run is cut by the compiler into the launches a user would write. The single-block forms of the
gallery's two-launch kernels (tests/autosplit/conv_*.adsl, beside examples/fuse/conv_*) lower to the same launches,
file for file up to names and source lines, and validate against the gallery's tasks at its two shapes; the gallery
kernels written as one split (examples/fuse/gemm_cumsum: a scan, which a matmul epilogue's base block of part of a
row cannot run; conv_instance_norm) run in the interpreter here; every refusal is a located error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import lowering
from ascend_dsl import ir, load_file, parse_text
from ascend_dsl.diagnostics import DslError
from npu_harness.gallery import Example, discover, validate

REPO = Path(__file__).resolve().parents[1]
HERE = REPO / "tests" / "autosplit"
GALLERY = {e.name: e for e in discover() if e.category == "fuse"}
SINGLE = sorted(p.stem for p in HERE.glob("conv_*.adsl") if p.stem in GALLERY)
#: gallery kernels written as one split (examples/fuse: their emulator runs are in tests/test_gallery_e2e.py)
OWN = ("gemm_cumsum", "conv_instance_norm", "conv_hardswish_max_pool_mish", "conv_avg_pool_sigmoid_sum")


def _project(path: Path) -> dict[str, str]:
    """The emitted files, with what differs between a hand-written and a compiler-cut kernel made equal: source
    lines, the workspace tensor's name (the gallery's `c`, the compiler's `acc_gm`) and temporaries' numbers."""
    kernel = load_file(path)[0].instantiate()
    project, _ = lowering.lower(kernel, source_name=path.name)
    out = {}
    for name, text in project.files.items():
        text = re.sub(r"\.adsl:\d+(:\d+)?", ".adsl", text)
        text = text.replace("acc_gm", "c").replace("Acc_gm", "C")
        out[name] = re.sub(r"_t\d+", "_t", text)
    return out


def test_the_single_block_forms_cover_the_gallerys_conv_launches():
    assert len(SINGLE) == 6, SINGLE


@pytest.mark.parametrize("name", SINGLE)
def test_a_single_block_lowers_to_the_gallerys_launches(name):
    one, two = _project(HERE / f"{name}.adsl"), _project(GALLERY[name].adsl)
    assert sorted(one) == sorted(two)
    assert [f for f in one if one[f] != two[f]] == []


@pytest.mark.parametrize("name, kinds", [
    ("conv_hardswish_max_pool_mish", ["CONV", "VECTOR", "WINDOW", "VECTOR"]),  # the work before the pool, after it
    ("conv_avg_pool_sigmoid_sum", ["CONV", "WINDOW", "BOX"]),  # a sum over the pooled channels
    ("conv_instance_norm", ["CONV", "VECTOR"]),
])
def test_a_pool_with_work_around_it_is_cut_at_every_workspace(name, kinds):
    """Vector loops reading a workspace tensor an earlier vector loop wrote run as launches of their own."""
    k = _lowered(GALLERY[name].adsl.read_text())
    assert [la.kernel.kind.name for la in k.body] == kinds
    for a, b in zip(k.body, k.body[1:], strict=False):
        assert set(a.writes) & set(b.reads), (a.writes, b.reads)


def _lowered(text: str, **options) -> ir.Kernel:
    _, ctx = lowering.lower(parse_text(text, "autosplit.adsl")[0].instantiate(), **options)
    return ctx.lowered


def test_a_scan_in_a_matmul_epilogue_becomes_a_row_launch_and_a_fixpipe_store_stays_one_kernel():
    k = _lowered(GALLERY["gemm_cumsum"].adsl.read_text())
    assert k.kind is ir.KernelKind.LAUNCHES
    assert [la.kernel.kind for la in k.body] == [ir.KernelKind.MIX, ir.KernelKind.VECTOR]
    assert k.body[0].writes == ("acc_gm",) and k.body[1].reads == ("acc_gm",)
    plain = CONV.format(body="store(y[blk], cast(relu(acc), f16))", out="f16", y="N, K, OH, OW")
    assert _lowered(plain, allow_conv5hd=False).kind is ir.KernelKind.CONV  # the NC1HWC0 route would cut it (its own)
    assert not any(p.name == "acc_gm" for p in _lowered(plain).tensors)  # but not autosplit
    row_max = MATMUL.format(body="store(y[blk], acc - max(acc, axis=1))")  # a row reduction: the MIX kernel runs it
    assert _lowered(row_max).kind is ir.KernelKind.MIX


def _cases():
    for name in SINGLE:
        ex = GALLERY[name]
        yield Example("fuse", name, HERE / f"{name}.adsl", ex.task), ex.shapes()


CASES = [(ex, dts, shape) for ex, shapes in _cases() for dts in ex.dtypes for shape in shapes]


def _id(case) -> str:
    ex, dts, shape = case
    return "-".join([ex.name, *(str(v) for v in dts.values()), *(f"{k}{v}" for k, v in shape.items())])


@pytest.mark.parametrize("ex", [c[0] for c in CASES if not c[2]] + [GALLERY[n] for n in OWN], ids=lambda e: e.name)
def test_a_single_block_kernel_in_the_interpreter(ex):
    for dts in ex.dtypes:
        result = validate(ex, dts, {}, level="interp")
        assert result.ok, result.summary()


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_a_single_block_kernel_in_the_emulator(case):
    ex, dts, shape = case
    result = validate(ex, dts, shape)
    assert result.ok, "\n".join([result.summary(), *(c.describe() for c in result.comparisons), result.detail])


# ----------------------------------------------------------------------------- located errors

CONV = '''@kernel
def k(x: Tensor[f16, "N, C, H, W"], w: Tensor[f16, "K, C, KH, KW"], g: Tensor[f32, "K"], r: Tensor[f32, "N, K, OH, OW"],
      z: Tensor[f32, "OH, OW"], y: Tensor[{out}, "{y}"]):
    for blk in split(N, K, OH, OW, cores=AIC):
        with cube:
            acc = conv2d(x[blk], w[blk], padding=1)
        with vector:
            {body}
'''
MATMUL = '''@kernel
def k(x: Tensor[f16, "M, K"], w: Tensor[f16, "N, K"], s: Tensor[f32, "M"], y: Tensor[f32, "M, N"]):
    for blk in split(M, N, cores=AIC):
        with cube:
            acc = matmul(x[blk], w[blk], transpose_b=True)
        with vector:
            {body}
'''


def _error(text: str):
    with pytest.raises(DslError) as e:
        lowering.lower(parse_text(text, "autosplit.adsl")[0].instantiate())
    return e.value.diagnostics[0]


def _col(text: str, needle: str) -> tuple[int, int]:
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return i, line.index(needle) + 1
    raise AssertionError(needle)


@pytest.mark.parametrize("body, y, code, needle, words", [
    ("store(y[blk], sum(acc, axis=2))", "N, K, OW", "UNSUPPORTED", "2)", "reduces the channels (axis=1) or every spatial"),
    ("m = mean(acc, axis=1)\n            store(y[blk], acc - m - mean(acc, axis=(2, 3)))", "N, K, OH, OW",
     "UNSUPPORTED", "mean(acc, axis=(2", "both over the channels and over the planes"),
    ("store(y[blk], max_pool(acc, kernel=2) + avg_pool(acc, kernel=2))", "N, K, PH, PW", "UNSUPPORTED", "avg_pool",
     "one pool per vector block"),
    ("s = load(g[blk])\n            store(y[blk], max_pool(acc * s, kernel=2) * s)", "N, K, PH, PW", "UNSUPPORTED",
     "s)", "'s' is computed before the pool and used after it"),
    ("store(y[blk], mean(max_pool(acc, kernel=2), axis=(2, 3)))", "N, K", "UNSUPPORTED", "max_pool",
     "after a pool, store into a tensor of the pooled planes' shape"),
    ("store(y[blk], acc + load(z[blk]))", "N, K, OH, OW", "INDEX", "z[blk]", "'z[blk]' here is a tensor of shape"),
    ("store(y[blk], acc / sum(acc, axis=1) * load(g[blk]))", "N, K, OH, OW", "INDEX", "g[blk]", "boxes over the channels"),
    ("acc = relu(acc)\n            store(y[blk], acc + 1.0)", "N, K, OH, OW", "DUPLICATE-NAME", "acc = relu",
     "is the accumulator"),
    ("store(y[blk], load(r[blk]) + 1.0)", "N, K, OH, OW", "KERNEL-STRUCTURE", "store(y", "never reads the accumulator"),
    ("y[blk] += acc", "N, K, OH, OW", "UNSUPPORTED", "y[blk] +=", "holds assignments and stores"),
    ("store(y[blk, 0], acc + 1.0)", "N, K, OH, OW", "INDEX", "y[blk, 0]", "indexed by the block"),
    ("store(y[blk], acc + (1.0, 2.0))", "N, K, OH, OW", "TYPE", "(1.0, 2.0)", "a tuple is not a value"),
    ("store(y[blk], cumsum(acc, axis=3))", "N, K, OH, OW", "UNSUPPORTED", "cumsum", "cumsum(..., axis=) is not cut"),
    ("store(y[blk], cast(argmax(acc, axis=1), f32))", "N, OH, OW", "UNSUPPORTED", "argmax", "argmax(..., axis=) is not"),
])
def test_what_the_compiler_cannot_cut_is_a_located_error(body, y, code, needle, words):
    text = CONV.format(body=body, out="f32", y=y)
    d = _error(text)
    assert d.code == code and words in d.message, d.render()
    assert (d.span.line, d.span.col) == _col(text, needle), d.render()


def test_the_workspace_needs_the_output_dims_as_symbols():
    text = CONV.format(body="store(y[blk], mean(acc, axis=(2, 3)))", out="f32", y="N, K").replace(
        'r: Tensor[f32, "N, K, OH, OW"],\n      z: Tensor[f32, "OH, OW"], ', "")
    d = _error(text)
    assert d.code == "ARGS" and "'OH' is no shape symbol of a tensor parameter" in d.message, d.render()
    assert (d.span.line, d.span.col) == _col(text, "OH, OW, cores")


def test_a_matmul_epilogue_that_cannot_be_cut_is_a_located_error():
    text = MATMUL.format(body="store(y[blk], cumsum(acc, axis=1) + load(x[blk]))")
    d = _error(text)
    assert d.code == "INDEX" and "'x[blk]' here is a tensor of shape [M, N] or [M]" in d.message, d.render()
    assert (d.span.line, d.span.col) == _col(text, "x[blk])")


@pytest.mark.parametrize("opts, needle, words", [
    ("stride=(2, 1, 1)", "(2, 1, 1)", "a tuple of 2 (one per spatial dim); this one has 3"),
    ("padding=(1, -1)", "-1", "an integer literal >= 0"),
    ("dilation=(0, 1)", "0, 1)", "an integer literal >= 1"),
    ("stride=(1, 2.5)", "2.5", "an integer literal >= 1"),
])
def test_per_dim_options_are_checked(opts, needle, words):
    text = CONV.format(body="store(y[blk], acc)", out="f32", y="N, K, OH, OW").replace("padding=1", opts)
    d = _error(text)
    assert d.code == "ARGS" and words in d.message, d.render()
    assert (d.span.line, d.span.col) == _col(text, needle), d.render()


def test_a_transposed_convolutions_output_padding_is_checked_per_dim():
    text = '''@kernel
def k(x: Tensor[f16, "N, C, H, W"], w: Tensor[f16, "C, K, KH, KW"], y: Tensor[f32, "N, K, OH, OW"]):
    for blk in split(N, K, OH, OW, cores=AIC):
        with cube:
            acc = conv_transpose2d(x[blk], w[blk], stride=(2, 1), output_padding=(1, 1))
        with vector:
            store(y[blk], acc)
'''
    d = _error(text)
    assert d.code == "ARGS" and "output_padding=1 must be smaller than the stride or the dilation (of spatial dim 1" in d.message, d.render()


def test_per_dim_options_print_as_written():
    text = CONV.format(body="store(y[blk], acc)", out="f32", y="N, K, OH, OW").replace(
        "padding=1", "stride=(2, 1), padding=(1, 0), dilation=2")
    from ascend_dsl import printer
    k = parse_text(text, "autosplit.adsl")[0].instantiate()
    assert "stride=(2, 1), padding=(1, 0), dilation=2" in printer.kernel(k)
