"""Front end: grammar coverage, .adsl vs .py vs @kernel, spans, printer round trip, interpreter."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest
import torch

import ascend_dsl
from ascend_dsl import DslError, interpreter, ir, printer
from ascend_dsl.api import KernelFunction
from ascend_dsl.dtypes import DType
from ascend_dsl.parser import Origin, parse_tree

ROOT = Path(__file__).resolve().parents[1]
GALLERY = sorted((ROOT / "examples").rglob("*.adsl"))


def _one(text: str, file: str = "t.adsl", dtypes=None) -> ir.Kernel:
    (src,) = ascend_dsl.parse_text(text, file=file)
    return src.instantiate(dtypes or {})


def _stmts(k: ir.Kernel) -> list:
    return list(ir.walk(k.body))


def _tile_body(k: ir.Kernel) -> tuple:
    (split,) = k.body
    (tl,) = split.body
    return tl.body


def _line_of(text: str, needle: str) -> int:
    hits = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def _col_of(text: str, needle: str) -> int:
    return text.splitlines()[_line_of(text, needle) - 1].index(needle) + 1


KERNEL_BODY = '''\
@kernel
def scale(x: Tensor[f32, "N"], y: Tensor[f32, "N"], a: f32 = 2.0):
    """y = x * a + 1"""
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            xt = load(x[t])
            store(y[t], xt * a + 1.0)
'''


# ----------------------------------------------------------------------------- grammar


def test_gallery_is_not_empty():
    assert len(GALLERY) >= 10


@pytest.mark.parametrize("path", GALLERY, ids=lambda p: p.stem)
def test_grammar_accepts_gallery_file(path):
    text = path.read_text()
    tree = parse_tree(text, Origin(str(path)))
    assert [c.data for c in tree.children if hasattr(c, "data")].count("kernel") == 1
    (src,) = ascend_dsl.load_file(path)
    assert src.name == path.stem
    for variant in src.dtype_variants:
        k = src.instantiate(variant)
        assert k.name == path.stem
        assert k.outputs and k.inputs
        assert all(s.span.line > 0 and s.span.file == str(path) for s in _stmts(k))


def test_comments_docstrings_pass_and_continuations():
    text = '''# leading comment
from ascend_dsl import kernel, Tensor, f32, f16
import ascend_dsl


@ascend_dsl.kernel  # decorator comment
def k(
    x: ascend_dsl.Tensor[f32, "N"],   # input
    y: Tensor[f32, "N"],
):
    """Docstring
    spanning lines."""
# a comment at column 0 inside the body
    for blk in split(N, cores=AIV):
        \'\'\'single-quoted docstring\'\'\'
        for t in tile(blk, size=auto, buffers=2):
                # over-indented comment
            pass
            xt = load(x[t])  # trailing comment
            v = xt + \\
                1.0
            store(y[t], v)
'''
    plain = '''@kernel
def k(x: Tensor[f32, "N"], y: Tensor[f32, "N"]):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            xt = load(x[t])
            v = xt + 1.0
            store(y[t], v)
'''
    a, b = _one(text), _one(plain)
    assert (a.params, a.body) == (b.params, b.body)


def test_crlf_line_endings():
    a = _one(KERNEL_BODY.replace("\n", "\r\n"))
    b = _one(KERNEL_BODY)
    assert (a.params, a.body) == (b.params, b.body)


def test_trailing_commas_everywhere():
    text = '''@kernel(T=[f32, f16,],)
def k(x: Tensor[T, "N"], y: Tensor[T, "N"], lo: f32 = -1.0,):
    for blk in split(N, cores=AIV,):
        for t in tile(blk, size=auto, buffers=2,):
            xt = load(x[t],)
            store(y[t], max(xt, lo,),)
'''
    k = _one(text)
    assert [p.name for p in k.params] == ["x", "y", "lo"]
    assert k.scalars[0].default == -1.0
    (store,) = [s for s in _stmts(k) if isinstance(s, ir.Store)]
    assert store.value.op == "max"


def test_generic_kernel_instantiates_per_dtype():
    text = KERNEL_BODY.replace("@kernel", "@kernel(T=[f32, f16])").replace("Tensor[f32", "Tensor[T")
    (src,) = ascend_dsl.parse_text(text)
    assert src.type_options == (("T", (DType.F32, DType.F16)),)
    assert src.dtype_variants == [{"T": DType.F32}, {"T": DType.F16}]
    default = src.instantiate()
    assert default.type_args == (("T", DType.F32),)
    for spelled in ("f16", DType.F16):
        k = src.instantiate({"T": spelled})
        assert k.type_args == (("T", DType.F16),)
        assert [p.dtype for p in k.tensors] == [DType.F16, DType.F16]
        assert k.scalars[0].dtype is DType.F32  # explicit dtypes are not generic
        (store,) = [s for s in _stmts(k) if isinstance(s, ir.Store)]
        assert store.value.type == ir.tile_of(DType.F16)
        # the f32 scalar parameter is cast to the tile dtype
        casts = [e for e in ir.walk_expr(store.value) if isinstance(e, ir.Op) and e.op == "cast"]
        assert casts and casts[0].type == ir.scalar_of(DType.F16)
    f32 = src.instantiate({"T": "f32"})
    assert not [e for s in _stmts(f32) if isinstance(s, ir.Store) for e in ir.walk_expr(s.value)
                if isinstance(e, ir.Op) and e.op == "cast"]


def test_two_dtype_variables():
    text = '''@kernel(A=[f32, f16], B=[f16, f32])
def k(x: Tensor[A, "N"], y: Tensor[B, "N"]):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], cast(load(x[t]), B))
'''
    (src,) = ascend_dsl.parse_text(text)
    assert len(src.dtype_variants) == 4
    k = src.instantiate({"A": "f16", "B": "f32"})
    assert [p.dtype for p in k.tensors] == [DType.F16, DType.F32]


def test_several_kernels_in_one_file():
    text = KERNEL_BODY + "\n\n" + KERNEL_BODY.replace("def scale", "def scale2")
    assert [s.name for s in ascend_dsl.parse_text(text)] == ["scale", "scale2"]


def test_pow_expands_to_primitive_ops():
    text = KERNEL_BODY.replace("xt * a + 1.0", "xt ** 2 + xt ** 0.5 + xt ** -1 + xt ** 1")
    (store,) = [s for s in _stmts(_one(text)) if isinstance(s, ir.Store)]
    ops = [e.op for e in ir.walk_expr(store.value) if isinstance(e, ir.Op)]
    assert sorted(ops) == ["add", "add", "add", "mul", "reciprocal", "sqrt"]


def test_constant_folding_and_literal_typing():
    text = KERNEL_BODY.replace("xt * a + 1.0", "xt * (2.0 * 3.0) + -(1.0)")
    (store,) = [s for s in _stmts(_one(text)) if isinstance(s, ir.Store)]
    consts = [e for e in ir.walk_expr(store.value) if isinstance(e, ir.Const)]
    assert [c.value for c in consts] == [6.0, -1.0]
    assert all(c.type == ir.scalar_of(DType.F32) for c in consts)



@pytest.mark.parametrize("expr,want", [("exp(exp(10.0))", math.inf), ("log(0.0)", -math.inf),
                                       ("sqrt(-1.0)", math.nan), ("1.0 / 0.0", math.inf), ("-1.0 / 0.0", -math.inf)])
def test_constants_fold_to_the_ieee_value_pytorch_gives(expr, want):
    """Python's math raises where PyTorch returns inf / nan; the folded constant is PyTorch's (it was a TYPE
    error, 'cannot evaluate', found by the fuzzer: seed 43000)."""
    text = KERNEL_BODY.replace("xt * a + 1.0", f"xt * ({expr})")
    (store,) = [s for s in _stmts(_one(text)) if isinstance(s, ir.Store)]
    (c,) = [e for e in ir.walk_expr(store.value) if isinstance(e, ir.Const)]
    assert (math.isnan(c.value) and math.isnan(want)) or c.value == want


# ----------------------------------------------------------------------------- .py files and @kernel


PY_MODULE = '''\
"""A module with DSL kernels next to ordinary Python."""
from __future__ import annotations

import math

from ascend_dsl import kernel, Tensor, f32, f16


def helper(v):
    return math.sqrt(v)


class Kernels:
    @kernel
    def scale(x: Tensor[f32, "N"], y: Tensor[f32, "N"], a: f32 = 2.0):
        """y = x * a + 1"""
        for blk in split(N, cores=AIV):
            for t in tile(blk, size=auto, buffers=2):
                xt = load(x[t])
                store(y[t], xt * a + 1.0)
'''


def test_py_file_gives_same_ir_as_adsl(tmp_path):
    py = tmp_path / "mod.py"
    py.write_text(PY_MODULE)
    (src,) = ascend_dsl.load_file(py)
    from_py = src.instantiate()
    from_adsl = _one(KERNEL_BODY)
    assert from_py.params == from_adsl.params
    assert from_py.body == from_adsl.body
    assert from_py.name == "scale"


def test_py_file_spans_are_absolute(tmp_path):
    py = tmp_path / "mod.py"
    py.write_text(PY_MODULE)
    k = ascend_dsl.load_file(py)[0].instantiate()
    assert k.span.file == str(py)
    assert (k.span.line, k.span.col) == (_line_of(PY_MODULE, "@kernel"), 5)
    x = k.param("x")
    assert (x.span.line, x.span.col) == (_line_of(PY_MODULE, "def scale"), _col_of(PY_MODULE, "x: Tensor"))
    split = k.body[0]
    assert (split.span.line, split.span.col) == (_line_of(PY_MODULE, "for blk"), _col_of(PY_MODULE, "for blk"))
    assign, store = _tile_body(k)
    assert (assign.span.line, assign.span.col) == (_line_of(PY_MODULE, "xt = load"), _col_of(PY_MODULE, "xt = load"))
    assert (store.span.line, store.span.col) == (_line_of(PY_MODULE, "store("), _col_of(PY_MODULE, "store("))
    assert (store.value.span.line, store.value.span.col) == (_line_of(PY_MODULE, "store("),
                                                              _col_of(PY_MODULE, "xt * a"))
    ref_a = store.value.args[0].args[1]
    assert isinstance(ref_a, ir.Ref) and ref_a.name == "a"
    assert ref_a.span.col == _col_of(PY_MODULE, "a + 1.0")
    assert ref_a.span.end_col == ref_a.span.col + 1


def test_py_file_errors_point_into_the_py_file(tmp_path):
    py = tmp_path / "mod.py"
    text = PY_MODULE.replace("xt * a + 1.0", "exq(xt)")
    py.write_text(text)
    with pytest.raises(DslError) as ei:
        ascend_dsl.load_file(py)[0].instantiate()
    (d,) = ei.value.diagnostics
    assert d.code == "UNKNOWN-OP"
    assert (d.span.file, d.span.line, d.span.col) == (str(py), _line_of(text, "exq("), _col_of(text, "exq("))
    assert f" --> {py}:{d.span.line}:{d.span.col}" in ei.value.render()
    assert "exq(xt)" in ei.value.render()


def test_py_file_without_kernels_gives_no_sources(tmp_path):
    py = tmp_path / "plain.py"
    py.write_text("def f():\n    return 1\n")
    assert ascend_dsl.load_file(py) == []


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


DECORATED = '''\
from __future__ import annotations

from ascend_dsl import kernel, Tensor, f32, f16


@kernel(T=[f32, f16])
def affine(x: Tensor[T, "N"], y: Tensor[T, "N"], a: f32 = 2.0, b: f32 = 1.0):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            xt = load(x[t])
            store(y[t], xt * a + b)


@kernel
def clamp(x: Tensor[f32, "N"], y: Tensor[f32, "N"]):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], min(max(load(x[t]), -1.0), 1.0))
'''


def test_kernel_decorator_parses_at_definition_and_interprets_on_request(tmp_path, monkeypatch):
    path = tmp_path / "deco_mod.py"
    path.write_text(DECORATED)
    mod = _import(path, "deco_mod_ok")
    assert isinstance(mod.affine, KernelFunction) and mod.affine.__name__ == "affine"
    k16 = mod.affine.ir(T="f16")
    assert [p.dtype for p in k16.tensors] == [DType.F16, DType.F16]
    k = mod.affine.ir()
    assert k.span.file == str(path) and k.span.line == _line_of(DECORATED, "@kernel(T=")
    (store,) = [s for s in _stmts(k) if isinstance(s, ir.Store)]
    assert (store.span.line, store.span.col) == (_line_of(DECORATED, "xt * a + b"), _col_of(DECORATED, "store(y[t], xt * a"))

    calls = []
    real_run = interpreter.run

    def spy(kernel, tensors, scalars=None, **kw):
        calls.append((kernel.name, sorted(tensors), dict(scalars or {})))
        return real_run(kernel, tensors, scalars, **kw)

    monkeypatch.setattr(interpreter, "run", spy)
    x = torch.randn(1000)
    y = torch.empty(1000)
    out = mod.affine.interpret(x, y, a=3.0)  # calling the kernel runs the emitted AscendC (tests/device)
    assert calls == [("affine", ["x", "y"], {"a": 3.0})]
    assert out["y"] is y
    torch.testing.assert_close(y, x * 3.0 + 1.0)

    y2 = torch.empty(1000)
    mod.clamp.interpret(x, y2)
    torch.testing.assert_close(y2, x.clamp(-1.0, 1.0))
    with pytest.raises(TypeError, match="takes 2 tensors"):
        mod.clamp.interpret(x)


def test_kernel_decorator_reports_dsl_syntax_errors_at_import(tmp_path):
    text = DECORATED.replace("            xt = load(x[t])\n", "            while xt:  # BAD\n                pass\n")
    path = tmp_path / "deco_bad.py"
    path.write_text(text)
    with pytest.raises(DslError) as ei:
        _import(path, "deco_mod_bad")
    (d,) = ei.value.diagnostics
    assert d.code == "SYNTAX"
    assert (d.span.file, d.span.line) == (str(path), _line_of(text, "# BAD"))
    assert d.span.col == _col_of(text, "xt:  # BAD")


def test_dsl_builtins_outside_a_kernel_raise():
    with pytest.raises(DslError) as ei:
        ascend_dsl.split(1)
    assert ei.value.codes == ["KERNEL-STRUCTURE"]
    assert "@kernel" in ei.value.diagnostics[0].hint


# ----------------------------------------------------------------------------- printer round trip


def _gallery_kernels():
    for path in GALLERY:
        for src in ascend_dsl.load_file(path):
            for variant in src.dtype_variants:
                tag = "-".join(str(v) for v in variant.values())
                yield pytest.param(src, variant, id=f"{path.stem}-{tag}" if tag else path.stem)


@pytest.mark.parametrize("src,variant", list(_gallery_kernels()))
def test_print_parse_round_trip_gallery(src, variant):
    k = src.instantiate(variant)
    text = printer.kernel(k)
    k2 = _one(text, file="roundtrip.adsl")
    assert k2.params == k.params
    assert k2.body == k.body
    assert printer.kernel(k2) == text


def test_print_parse_round_trip_tricky_expressions():
    text = KERNEL_BODY.replace(
        "xt * a + 1.0",
        "-xt * (xt - (2.0 - xt)) / 3.0 + -1.5 - xt ** 2 + max(xt, a) - abs(-xt) ** 0.5 "
        "+ select(0.0 < xt, xt / (1.0 + xt), -a) + cast(cast(xt, f16), f32)")
    k = _one(text)
    k2 = _one(printer.kernel(k))
    assert (k2.params, k2.body) == (k.params, k.body)


# ----------------------------------------------------------------------------- interpreter


def _run(text, dtype, n=1000, scalars=None, **kw):
    k = _one(text)
    x = (torch.randn(n) * 3).to(dtype.torch)
    y = torch.empty(n, dtype=k.param("y").dtype.torch)
    interpreter.run(k, {"x": x, "y": y}, scalars, **kw)
    return x, y


def _src(expr: str, dtype: str = "f32", out: str | None = None) -> str:
    return f'''@kernel
def k(x: Tensor[{dtype}, "N"], y: Tensor[{out or dtype}, "N"], a: f32 = 0.5):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            xt = load(x[t])
            store(y[t], {expr})
'''


@pytest.mark.parametrize("dtype", [DType.F32, DType.F16], ids=str)
def test_interpreter_affine_matches_torch_in_kernel_dtype(dtype):
    x, y = _run(_src("xt * a + 1.0", dtype.value), dtype, scalars={"a": 1.7})
    tdt = dtype.torch
    expected = x * torch.tensor(1.7, dtype=torch.float32).to(tdt) + torch.tensor(1.0, dtype=tdt)
    assert y.dtype == tdt
    torch.testing.assert_close(y, expected, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [DType.F32, DType.F16], ids=str)
def test_interpreter_elu_matches_torch(dtype):
    x, y = _run(_src("select(xt > 0.0, xt, a * (exp(xt) - 1.0))", dtype.value), dtype)
    expected = torch.nn.functional.elu(x.float(), alpha=0.5).to(dtype.torch)
    tol = {"rtol": 2e-3, "atol": 2e-3} if dtype is DType.F16 else {}
    torch.testing.assert_close(y, expected, **tol)


def test_interpreter_pow_and_division():
    x, y = _run(_src("abs(xt) ** 0.5 + xt ** 2 - 1.0 / (abs(xt) + 1.0)"), DType.F32)
    torch.testing.assert_close(y, x.abs().sqrt() + x * x - 1.0 / (x.abs() + 1.0))


def test_interpreter_cast_f16_to_f32():
    x, y = _run(_src("cast(xt, f32) * 2.0", "f16", "f32"), DType.F16)
    assert y.dtype == torch.float32
    torch.testing.assert_close(y, x.float() * 2.0, rtol=0, atol=0)


def test_interpreter_uneven_core_shares_and_tail_tiles():
    x, y = _run(_src("sigmoid(xt) + tanh(xt) + erf(xt)"), DType.F32, n=10007, num_cores=3, tile=64)
    torch.testing.assert_close(y, torch.sigmoid(x) + torch.tanh(x) + torch.erf(x))


def test_interpreter_writes_multidim_outputs_in_place():
    k = _one(_src("relu(xt)"))
    x = torch.randn(4, 33)
    y = torch.zeros(4, 33)
    out = interpreter.run(k, {"x": x, "y": y})
    assert out["y"] is y and y.shape == (4, 33)
    torch.testing.assert_close(y, x.relu())


def test_interpreter_rejects_wrong_torch_dtype():
    k = _one(_src("xt"))
    with pytest.raises(DslError) as ei:
        interpreter.run(k, {"x": torch.zeros(8), "y": torch.zeros(8, dtype=torch.float16)})
    assert ei.value.codes == ["BINDING"]


@pytest.mark.parametrize("name,ref", [
    ("relu", torch.relu), ("sigmoid", torch.sigmoid), ("tanh", torch.tanh), ("gelu", torch.nn.functional.gelu),
    ("softsign", torch.nn.functional.softsign), ("swish", torch.nn.functional.silu),
    ("elu", torch.nn.functional.elu), ("selu", torch.selu), ("softplus", torch.nn.functional.softplus),
    ("hardtanh", torch.nn.functional.hardtanh), ("hardsigmoid", torch.nn.functional.hardsigmoid),
    ("leaky_relu", torch.nn.functional.leaky_relu),
])
@pytest.mark.parametrize("dtype", [DType.F32, DType.F16], ids=str)
def test_interpreter_gallery_matches_torch(name, ref, dtype):
    path = ROOT / "examples" / "activation" / f"{name}.adsl"
    k = ascend_dsl.load_file(path)[0].instantiate({"T": dtype})
    x = (torch.randn(3000) * 4).to(dtype.torch)
    y = torch.empty_like(x)
    interpreter.run(k, {"x": x, "y": y})
    tol = {"rtol": 5e-3, "atol": 5e-3} if dtype is DType.F16 else {"rtol": 1e-5, "atol": 1e-5}
    torch.testing.assert_close(y.float(), ref(x.float()), **tol)


# ----------------------------------------------------------------------------- inputs / outputs


def test_inputs_and_outputs_are_inferred_from_stores():
    text = '''@kernel
def k(a: Tensor[f32, "N"], out1: Tensor[f32, "N"], b: Tensor[f32, "N"], s: f32, out2: Tensor[f16, "N"]):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            v = load(a[t]) + load(b[t]) * s
            store(out2[t], cast(v, f16))
            store(out1[t], v)
'''
    k = _one(text)
    assert [p.name for p in k.inputs] == ["a", "b"]
    assert [p.name for p in k.outputs] == ["out1", "out2"]
    assert [p.name for p in k.tensors] == ["a", "out1", "b", "out2"]
    assert [p.name for p in k.scalars] == ["s"]
    assert k.scalars[0].default is None
    assert k.symbols == ("N",)
    assert k.param("missing") is None


def test_multidim_shapes_extent_products_and_explicit_loop_options():
    text = '''@kernel
def k(x: Tensor[f32, "M"], y: Tensor[f32, "M"], w: Tensor[f16, "B, 4 D"]):
    for blk in split(B * D, cores=8):
        for t in tile(blk, size=1024, buffers=1):
            store(y[t], load(x[t]))
'''
    k = _one(text)
    assert k.param("w").shape == ("B", 4, "D")
    assert k.symbols == ("M", "B", "D")
    assert [p.name for p in k.inputs] == ["x", "w"]
    split = k.body[0]
    assert (split.extent, split.core_kind, split.cores) == (("B", "D"), "AIV", 8)
    tl = split.body[0]
    assert (tl.var, tl.over, tl.size, tl.buffers) == ("t", "blk", 1024, 1)
