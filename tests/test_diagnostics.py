"""Front-end diagnostics: one test per error code, pinned to code, 1-based line/col and message.

Every DSL snippet marks the offending line with a `# MARK` comment; columns are computed from the
text of that line, never hard-coded.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

import ascend_dsl
from ascend_dsl import DslError, interpreter

ROOT = Path(__file__).resolve().parents[1]


def _marker_line(text: str, mark: str = "MARK") -> int:
    """1-based number of the only line carrying the comment `# <mark>`."""
    hits = [i for i, line in enumerate(text.splitlines(), 1) if f"# {mark}" in line]
    assert len(hits) == 1, f"marker {mark!r} found on lines {hits}"
    return hits[0]


def _col(text: str, needle: str, mark: str = "MARK") -> int:
    """1-based column of `needle` on the marked line."""
    line = text.splitlines()[_marker_line(text, mark) - 1]
    assert line.count(needle) >= 1, (needle, line)
    return line.index(needle) + 1


def _fail(text: str, file: str = "diag.adsl", dtypes=None, instantiate: bool = True) -> DslError:
    with pytest.raises(DslError) as ei:
        sources = ascend_dsl.parse_text(text, file=file)
        if instantiate:
            for s in sources:
                s.instantiate(dtypes or {})
    return ei.value


def _check(err: DslError, code: str, line: int, col: int, msg: str, file: str = "diag.adsl"):
    d = err.diagnostics[0]
    assert d.code == code, err.render()
    assert d.span is not None, err.render()
    assert (d.span.file, d.span.line, d.span.col) == (file, line, col), err.render()
    assert msg in d.message, err.render()
    return d


HEAD = '''@kernel
def k(x: Tensor[f32, "N"], y: Tensor[f32, "N"], alpha: f32 = 1.0):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
'''


def body(*lines: str) -> str:
    return HEAD + "".join(f"            {line}\n" for line in lines)


# ----------------------------------------------------------------------------- SYNTAX


def test_syntax_missing_colon():
    text = HEAD.replace("buffers=2):", "buffers=2)  # MARK") + "            store(y[t], load(x[t]))\n"
    d = _check(_fail(text), "SYNTAX", _marker_line(text), _col(text, "# MARK"), "expected ':'")
    assert "unexpected end of line" in d.message
    assert d.hint == "a block header (def/for) ends with ':'"


def test_syntax_missing_colon_on_def():
    text = '@kernel\ndef k(x: Tensor[f32, "N"])  # MARK\n    pass\n'
    _check(_fail(text), "SYNTAX", _marker_line(text), _col(text, "# MARK"), "':'")


def test_syntax_expected_list_names_no_internal_terminals():
    text = '@kernel\ndef k(x: Tensor[f32, "N"])  # MARK\n    pass\n'
    assert "__anon" not in _fail(text).diagnostics[0].message.lower()


def test_syntax_unexpected_character():
    text = body("xt = load(x[t]) $ 2  # MARK", "store(y[t], xt)")
    _check(_fail(text), "SYNTAX", _marker_line(text), _col(text, "$"), "unexpected character '$'")


def test_syntax_unexpected_token():
    text = body("xt = load(x[t]) 2.0  # MARK", "store(y[t], xt)")
    _check(_fail(text), "SYNTAX", _marker_line(text), _col(text, "2.0"), "unexpected '2.0'")


def test_syntax_unclosed_paren_at_eof():
    # the unclosed line is the last line of the file (no trailing comment): marked on the line before
    text = body("xt = load(x[t])  # MARK: the next line leaves exp( open") + "            store(y[t], exp(xt)"
    last = text.splitlines()[-1]
    _check(_fail(text), "SYNTAX", _marker_line(text) + 1, len(last) + 1, "unexpected")


def test_syntax_unclosed_paren_at_eof_says_end_of_file():
    text = body("xt = load(x[t])  # MARK: the next line leaves exp( open") + "            store(y[t], exp(xt)"
    d = _fail(text).diagnostics[0]
    assert "end of file" in d.message
    assert d.hint and "left open" in d.hint


def test_syntax_unexpected_eof_in_signature():
    text = '@kernel\ndef k(x: Tensor[f32, "N"]'
    _check(_fail(text), "SYNTAX", 2, len(text.splitlines()[-1]) + 1, "unexpected end of file")


def test_syntax_unexpected_indent_reports_indentation():
    text = body("xt = load(x[t])") + "                store(y[t], xt)  # MARK\n"
    d = _fail(text).diagnostics[0]
    assert d.code == "SYNTAX"
    assert "indentation" in d.message


def test_syntax_unexpected_indent_location():
    text = body("xt = load(x[t])") + "                store(y[t], xt)  # MARK\n"
    _check(_fail(text), "SYNTAX", _marker_line(text), _col(text, "store"), "indentation")


def test_syntax_inconsistent_dedent_reports_indentation():
    text = HEAD + "            xt = load(x[t])\n          store(y[t], xt)  # MARK\n"
    d = _fail(text).diagnostics[0]
    assert d.code == "SYNTAX"
    assert "inconsistent indentation" in d.message


def test_syntax_inconsistent_dedent_location():
    text = HEAD + "            xt = load(x[t])\n          store(y[t], xt)  # MARK\n"
    _check(_fail(text), "SYNTAX", _marker_line(text), _col(text, "store"), "inconsistent indentation")


def test_syntax_python_construct_not_in_dsl():
    text = body("xt = load(x[t])", "while xt:  # MARK", "    pass", "store(y[t], xt)")
    _check(_fail(text), "SYNTAX", _marker_line(text), _col(text, "xt:"), "unexpected")


def test_syntax_unknown_decorator():
    text = '@kern  # MARK\ndef k(x: Tensor[f32, "N"]):\n    pass\n'
    d = _check(_fail(text, instantiate=False), "SYNTAX", _marker_line(text), 1, "unknown decorator '@kern'")
    assert "@kernel" in d.hint


def test_syntax_invalid_python_file(tmp_path):
    py = tmp_path / "broken.py"
    py.write_text("import os\n\ndef f(:\n    pass\n")
    with pytest.raises(DslError) as ei:
        ascend_dsl.load_file(py)
    d = ei.value.diagnostics[0]
    assert d.code == "SYNTAX" and "not valid Python" in d.message
    assert (d.span.line, d.span.col) == (3, 7)


def test_syntax_invalid_python_file_names_the_file(tmp_path):
    py = tmp_path / "broken.py"
    py.write_text("import os\n\ndef f(:\n    pass\n")
    with pytest.raises(DslError) as ei:
        ascend_dsl.load_file(py)
    assert ei.value.diagnostics[0].span.file == str(py)


# ----------------------------------------------------------------------------- other codes


def test_unknown_dtype_in_annotation():
    text = '@kernel\ndef k(x: Tensor[f33, "N"]):  # MARK\n    pass\n'
    d = _check(_fail(text), "UNKNOWN-DTYPE", _marker_line(text), _col(text, "f33"), "unknown dtype 'f33'")
    assert d.hint == "did you mean 'f32'?"
    assert d.span.end_col == d.span.col + 3


def test_unknown_dtype_in_decorator():
    text = '@kernel(T=[f32, f61])  # MARK\ndef k(x: Tensor[T, "N"]):\n    pass\n'
    d = _check(_fail(text, instantiate=False), "UNKNOWN-DTYPE", _marker_line(text), _col(text, "f61"),
               "unknown dtype 'f61'")
    assert d.hint == "did you mean 'f16'?"


def test_unknown_dtype_variable_choice():
    text = HEAD.replace("@kernel", "@kernel(T=[f32, f16])  # MARK").replace("Tensor[f32", "Tensor[T") + \
        "            store(y[t], load(x[t]))\n"
    _check(_fail(text, dtypes={"T": "i32"}), "UNKNOWN-DTYPE", _marker_line(text), 1, "allows f32, f16, not i32")
    d = _check(_fail(text, dtypes={"U": "f16"}), "UNKNOWN-DTYPE", _marker_line(text), 1, "no dtype variable U")
    assert "@kernel(T=[f32, f16])" in d.hint


def test_unknown_dtype_in_cast():
    text = body("store(y[t], cast(load(x[t]), f64))  # MARK")
    _check(_fail(text), "UNKNOWN-DTYPE", _marker_line(text), _col(text, "f64"), "unknown dtype 'f64'")


def test_duplicate_parameter():
    text = '@kernel\ndef k(x: Tensor[f32, "N"], x: Tensor[f32, "N"]):  # MARK\n    pass\n'
    _check(_fail(text), "DUPLICATE-NAME", _marker_line(text), _col(text, 'x: Tensor[f32, "N"]):'),
           "parameter 'x' is declared twice")


def test_duplicate_name_assigning_a_parameter():
    text = body("alpha = load(x[t])  # MARK", "store(y[t], alpha)")
    _check(_fail(text), "DUPLICATE-NAME", _marker_line(text), _col(text, "alpha"), "cannot assign to 'alpha'")


def test_duplicate_loop_variable():
    text = HEAD.replace("for t in tile(blk", "for blk in tile(blk").replace("buffers=2):", "buffers=2):  # MARK") \
        + "            store(y[t], load(x[t]))\n"
    _check(_fail(text), "DUPLICATE-NAME", _marker_line(text), _col(text, "blk in tile"), "'blk' is already defined")


def test_type_unknown_annotation():
    text = '@kernel\ndef k(x: Tansor[f32, "N"]):  # MARK\n    pass\n'
    d = _check(_fail(text), "TYPE", _marker_line(text), _col(text, "Tansor"), "unknown annotation 'Tansor[...]'")
    assert d.hint == 'write Tensor[f32, "N"]'


def test_type_store_scalar():
    text = body("store(y[t], alpha)  # MARK")
    _check(_fail(text), "TYPE", _marker_line(text), _col(text, "alpha"), "store needs a tile value")


def test_type_mask_used_in_arithmetic():
    text = body("xt = load(x[t])", "m = xt > 0.0", "store(y[t], m + xt)  # MARK")
    d = _check(_fail(text), "TYPE", _marker_line(text), _col(text, "m + xt"), "mask cannot be used in 'add'")
    assert "select" in d.hint


def test_type_gm_tensor_used_as_value():
    text = body("store(y[t], x * 2.0)  # MARK")
    _check(_fail(text), "TYPE", _marker_line(text), _col(text, "x * 2.0"), "'x' is a GM tensor")


def test_kernel_structure_body_not_a_split_loop():
    text = '@kernel\ndef k(x: Tensor[f32, "N"]):\n    for t in tile(N):  # MARK\n        pass\n'
    d = _check(_fail(text), "KERNEL-STRUCTURE", _marker_line(text), _col(text, "for t"),
               "a kernel body is a `for ... in split(...)` loop")
    assert "split(N, cores=AIV)" in d.hint


def test_kernel_structure_tile_loop_stores_nothing():
    text = HEAD.replace("buffers=2):", "buffers=2):  # MARK") + "            xt = load(x[t])\n"
    _check(_fail(text), "KERNEL-STRUCTURE", _marker_line(text), _col(text, "for t"), "tile loop stores nothing")


def test_kernel_structure_unused_call():
    text = body("exp(load(x[t]))  # MARK", "store(y[t], load(x[t]))")
    _check(_fail(text), "KERNEL-STRUCTURE", _marker_line(text), _col(text, "exp("), "'exp(...)' result is unused")


def test_args_load_arity():
    text = body("xt = load(x[t], x[t])  # MARK", "store(y[t], xt)")
    d = _check(_fail(text), "ARGS", _marker_line(text), _col(text, "load("), "load takes one tensor slice")
    assert d.hint == "load(x[t])"


def test_args_cores_zero():
    text = HEAD.replace("cores=AIV):", "cores=0):  # MARK") + "            store(y[t], load(x[t]))\n"
    _check(_fail(text), "ARGS", _marker_line(text), _col(text, "0)"), "cores must be at least 1")


def test_args_tile_size_not_an_integer():
    text = HEAD.replace("size=auto, buffers=2):", "size=1.5, buffers=2):  # MARK") + \
        "            store(y[t], load(x[t]))\n"
    _check(_fail(text), "ARGS", _marker_line(text), _col(text, "1.5"), "size= takes auto or a positive integer")


def test_args_keyword_given_twice():
    text = HEAD.replace("size=auto,", "size=auto, size=256,").replace("buffers=2):", "buffers=2):  # MARK") + \
        "            store(y[t], load(x[t]))\n"
    _check(_fail(text), "ARGS", _marker_line(text), _col(text, "size=256"), "argument 'size' given twice")


def test_undefined_name_with_did_you_mean():
    text = body("xt = load(x[t])", "store(y[t], xt * alhpa)  # MARK")
    d = _check(_fail(text), "UNDEFINED-NAME", _marker_line(text), _col(text, "alhpa"), "'alhpa' is not defined")
    assert d.hint == "did you mean 'alpha'?"
    assert d.span.end_col == d.span.col + len("alhpa")


def test_undefined_local_with_did_you_mean():
    text = body("xt = load(x[t])", "store(y[t], xtt)  # MARK")
    d = _check(_fail(text), "UNDEFINED-NAME", _marker_line(text), _col(text, "xtt"), "'xtt' is not defined")
    assert d.hint == "did you mean 'xt'?"


def test_undefined_tensor_and_shape_symbol():
    text = body("store(yy[t], load(x[t]))  # MARK")
    d = _check(_fail(text), "UNDEFINED-NAME", _marker_line(text), _col(text, "yy"), "expected a tensor parameter")
    assert d.hint == "did you mean 'y'?"
    text = HEAD.replace("split(N,", "split(M,").replace("cores=AIV):", "cores=AIV):  # MARK") + \
        "            store(y[t], load(x[t]))\n"
    _check(_fail(text), "UNDEFINED-NAME", _marker_line(text), _col(text, "M,"), "expected a shape symbol")


def test_unknown_op_with_did_you_mean():
    text = body("xt = load(x[t])", "store(y[t], exq(xt))  # MARK")
    d = _check(_fail(text), "UNKNOWN-OP", _marker_line(text), _col(text, "exq"), "unknown function 'exq'")
    assert d.hint == "did you mean 'exp'?"
    assert d.span.end_col == d.span.col + 3


def test_unknown_op_without_close_match_lists_ops():
    text = body("store(y[t], zzzzzz(load(x[t])))  # MARK")
    d = _check(_fail(text), "UNKNOWN-OP", _marker_line(text), _col(text, "zzzzzz"), "unknown function 'zzzzzz'")
    assert d.hint.startswith("available: ") and "exp" in d.hint


def test_index_not_the_tile_variable():
    text = body("xt = load(x[blk])  # MARK", "store(y[t], xt)")
    _check(_fail(text), "INDEX", _marker_line(text), _col(text, "x[blk]"), "index 'x' with the tile variable")


def test_index_subscript_outside_load():
    text = body("store(y[t], x[t])  # MARK")
    _check(_fail(text), "INDEX", _marker_line(text), _col(text, "x[t]"), "read a tile with load(x[t])")


def test_index_rank_two_tensor():
    text = HEAD.replace('x: Tensor[f32, "N"]', 'x: Tensor[f32, "M, N"]') + \
        "            store(y[t], load(x[t]))  # MARK\n"
    d = _check(_fail(text), "INDEX", _marker_line(text), _col(text, "x[t]"), "index the 2-D tensor 'x' by whole rows")
    assert "split(M, cores=AIV)" in d.hint


def test_index_rank_three_tensor():
    text = HEAD.replace('x: Tensor[f32, "N"]', 'x: Tensor[f32, "L, M, N"]') + \
        "            store(y[t], load(x[t]))  # MARK\n"
    d = _check(_fail(text), "INDEX", _marker_line(text), _col(text, "x[t]"), "'x' has rank 3")
    assert 'Tensor[f32, "N"]' in d.hint


def test_dtype_mismatch_on_store():
    text = HEAD.replace('y: Tensor[f32', 'y: Tensor[f16') + "            xt = load(x[t])\n" \
        "            store(y[t], xt)  # MARK\n"
    d = _check(_fail(text), "DTYPE-MISMATCH", _marker_line(text), _col(text, "xt)"),
               "storing f32 into 'y' of dtype f16")
    assert d.hint == "convert with cast(value, f16)"


def test_dtype_mismatch_between_operands():
    text = HEAD.replace("alpha: f32 = 1.0", 'z: Tensor[f16, "N"]') + \
        "            store(y[t], load(x[t]) + load(z[t]))  # MARK\n"
    _check(_fail(text), "DTYPE-MISMATCH", _marker_line(text), _col(text, "load(x[t]) +"),
           "operands have dtypes f32 and f16")


def test_dtype_unsupported_by_op():
    text = HEAD.replace("Tensor[f32", "Tensor[i32") + "            store(y[t], exp(load(x[t])))  # MARK\n"
    d = _check(_fail(text), "DTYPE-UNSUPPORTED", _marker_line(text), _col(text, "exp("), "'exp' does not support i32")
    assert d.hint == "supported: bf16, f16, f32"


def test_cube_split_needs_output_dimensions():
    text = HEAD.replace("cores=AIV):", "cores=AIC):  # MARK") + "            store(y[t], load(x[t]))\n"
    d = _check(_fail(text), "ARGS", _marker_line(text), _col(text, "split("), "a cube split takes the output dimensions")
    assert "split(M, N, cores=AIC)" in d.message


def test_pow_of_integer_tiles_is_dtype_unsupported():
    text = HEAD.replace("Tensor[f32", "Tensor[i32") + "            store(y[t], load(x[t]) ** 5)  # MARK\n"
    d = _check(_fail(text), "DTYPE-UNSUPPORTED", _marker_line(text), _col(text, "load(x[t]) **"),
               "'pow' does not support i32")
    assert d.hint == "supported: bf16, f16, f32"


def test_no_kernel_in_adsl_file(tmp_path):
    f = tmp_path / "empty.adsl"
    f.write_text("# MARK nothing here\nfrom ascend_dsl import kernel\n")
    with pytest.raises(DslError) as ei:
        ascend_dsl.load_file(f)
    d = ei.value.diagnostics[0]
    assert d.code == "NO-KERNEL"
    assert (d.span.file, d.span.line, d.span.col) == (str(f), 1, 1)
    assert "defines no @kernel function" in d.message


def test_io_error_for_missing_file(tmp_path):
    with pytest.raises(DslError) as ei:
        ascend_dsl.load_file(tmp_path / "missing.adsl")
    d = ei.value.diagnostics[0]
    assert d.code == "IO" and "cannot read" in d.message and d.span is None
    assert ei.value.render().startswith("error[IO]: cannot read")


def test_binding_missing_scalar_in_interpreter():
    text = HEAD.replace("alpha: f32 = 1.0", "alpha: f32") + "            store(y[t], load(x[t]) * alpha)\n"
    k = ascend_dsl.parse_text(text, file="diag.adsl")[0].instantiate()
    with pytest.raises(DslError) as ei:
        interpreter.run(k, {"x": torch.zeros(4), "y": torch.zeros(4)})
    d = ei.value.diagnostics[0]
    assert d.code == "BINDING" and "no value for scalar parameter 'alpha'" in d.message
    assert (d.span.line, d.span.col) == (2, HEAD.splitlines()[1].index("alpha") + 1)


# ----------------------------------------------------------------------------- rendering


def test_render_with_hint():
    text = body("xt = load(x[t])", "store(y[t], exq(xt))  # MARK")
    err = _fail(text, file="render_hint.adsl")
    line = _marker_line(text)
    col = _col(text, "exq")
    lines = err.render().splitlines()
    src = text.splitlines()[line - 1]
    pad = " " * len(str(line))
    assert lines[0] == "error[UNKNOWN-OP]: unknown function 'exq'"
    assert lines[1] == f" --> render_hint.adsl:{line}:{col}"
    assert lines[2] == f"{pad} |"
    assert lines[3] == f"{line} | {src.rstrip()}"
    assert lines[4] == f"{pad} | {' ' * (col - 1)}^^^"
    assert lines[5] == f"{pad} = hint: did you mean 'exp'?"
    assert len(lines) == 6
    assert str(err) == err.render()


def test_render_without_hint_has_no_hint_line():
    text = body("xt = load(x[blk])  # MARK", "store(y[t], xt)")
    err = _fail(text, file="render_nohint.adsl")
    out = err.render()
    assert out.startswith("error[INDEX]: ")
    assert f" --> render_nohint.adsl:{_marker_line(text)}:{_col(text, 'x[blk]')}" in out
    assert "= hint:" not in out
    assert out.splitlines()[-1].strip().startswith("|") and "^^^^^^" in out.splitlines()[-1]


def test_render_multiline_span_carets_to_end_of_line():
    text = HEAD.replace("buffers=2):", "buffers=2):  # MARK") + "            xt = load(x[t])\n"
    out = _fail(text, file="render_multi.adsl").render()
    caret = out.splitlines()[4]
    src = text.splitlines()[_marker_line(text) - 1]
    start = _col(text, "for t")
    assert caret.endswith("^" * (len(src.rstrip()) - start + 1))


# ----------------------------------------------------------------------------- ascend-lower CLI


BAD_FILES = {
    "syntax": body("xt = load(x[t]) $"),
    "constraint": HEAD.replace("cores=AIV", "cores=64") + "            store(y[t], load(x[t]))\n",
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_cli_user_error_exits_2_without_traceback(tmp_path, name):
    src = tmp_path / f"{name}.adsl"
    src.write_text(BAD_FILES[name])
    out = tmp_path / "OUT"
    proc = subprocess.run([sys.executable, "-m", "npu_harness.cli", str(src), "-o", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "error[" in proc.stderr
    assert f"--> {src}:" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not out.exists()


def test_error_codes_are_one_enum():
    """Codes come from ErrorCode: the packages' string codes are members too, and an unknown code is a bug."""
    import re

    from ascend_dsl.diagnostics import Diagnostic, ErrorCode

    root = Path(__file__).resolve().parent.parent
    used = set()
    for path in [p for pkg in ("ascend_dsl", "lowering", "npu_harness", "kernelgen") for p in (root / pkg).rglob("*.py")]:
        used |= set(re.findall(r'(?:(?:\.err|\.at|\.error|Diagnostic|WorkerError|_call_error)\(\s*|"code": )"([A-Z][A-Z0-9-]+)"', path.read_text()))
    assert used and used <= {c.value for c in ErrorCode}, used - {c.value for c in ErrorCode}
    assert Diagnostic("TYPE", "m").code is ErrorCode.TYPE
    with pytest.raises(ValueError):
        Diagnostic("NOT-A-CODE", "m")
