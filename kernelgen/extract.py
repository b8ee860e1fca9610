"""From an LLM response to DSL text: pull the code out of markdown fences or prose, and reject what
a DSL kernel can never contain (PyTorch calls, foreign imports, C++), with located diagnostics.

The DSL is parsed, never executed: nothing in a response is ever imported or run, so a response
cannot reach torch or the reference. These checks exist to give the model a precise message
instead of a bare syntax error.
"""

from __future__ import annotations

import io
import re
import tokenize

from ascend_dsl.diagnostics import Diagnostic, DslError, Span, register_source

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_CODE_START = re.compile(r"^(from [\w.]+ import |import [\w.]+|@kernel|@ascend_dsl\.kernel|def )", re.M)
_TORCH_USE = re.compile(r"\b(torch|nn|F|np|numpy)\s*\.\s*[A-Za-z_][\w.]*")
_CPP = re.compile(r"^\s*(#include|template\s*<|extern\s+\"C\"|__global__|__aicore__|using namespace)", re.M)
ALLOWED_MODULES = ("ascend_dsl",)


def extract_code(response: str) -> str:
    """The DSL text of a response. Prefers a fenced block holding a kernel; an unterminated fence
    (a truncated response) yields what follows it. Raises DslError(GEN-NO-CODE) for pure prose."""
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(response)]
    if blocks:
        for _, body in blocks:
            if "@kernel" in body or re.search(r"^def ", body, re.M):
                return body.strip("\n") + "\n"
        return blocks[0][1].strip("\n") + "\n"
    m = _CODE_START.search(response)
    if m:
        return response[m.start():].strip("\n") + "\n"
    if _CPP.search(response):
        return response.strip("\n") + "\n"
    snippet = " ".join(response.split())[:80]
    raise DslError.at("GEN-NO-CODE", f"the response contains no DSL code (it begins: {snippet!r})", None,
                      "answer with one ```python block holding a single @kernel function, no prose")


def code_only(code: str) -> str:
    """`code` with its string literals (docstrings) and comments blanked, lines and columns unchanged, so a
    docstring that says what the kernel replaces (`nn.LayerNorm`, `torch.pairwise_distance`) is no call. Text
    Python cannot tokenize (truncated, C++) comes back as it is: every line is then checked as written."""
    rows = [list(line) for line in io.StringIO(code).readlines()]  # the lines tokenize counts
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type not in (tokenize.STRING, tokenize.COMMENT):
                continue
            (r0, c0), (r1, c1) = tok.start, tok.end
            for r in range(r0, r1 + 1):
                row = rows[r - 1]
                for c in range(c0 if r == r0 else 0, c1 if r == r1 else len(row)):
                    if not row[c].isspace():  # line breaks (and so splitlines()) stay as they are
                        row[c] = " "
    except (tokenize.TokenError, SyntaxError):  # IndentationError is a SyntaxError
        return code
    return "".join("".join(row) for row in rows)


def forbidden(code: str, file: str) -> list[Diagnostic]:
    """Located diagnostics for imports other than ascend_dsl, PyTorch/NumPy calls (outside string literals and
    comments) and C++."""
    register_source(file, code)
    out: list[Diagnostic] = []
    for i, (line, bare) in enumerate(zip(code.splitlines(), code_only(code).splitlines(), strict=True), start=1):
        stripped = bare.strip()
        col = len(line) - len(line.lstrip()) + 1
        span = Span(file, i, col, i, len(line.rstrip()) + 1)
        m = re.match(r"(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", stripped)
        if m:
            module = (m.group(1) or m.group(2)).split(".")[0]
            if module not in ALLOWED_MODULES:
                out.append(Diagnostic("FORBIDDEN", f"a kernel cannot import '{module}': DSL text is parsed, never "
                                      "executed, and can only use the DSL's own operations", span,
                                      "the only import is: from ascend_dsl import kernel, Tensor, f32, f16"))
            continue
        t = _TORCH_USE.search(bare)
        if t and not stripped.startswith("#"):
            s = Span(file, i, t.start() + 1, i, t.end() + 1)
            out.append(Diagnostic("FORBIDDEN", f"'{t.group(0)}' calls {t.group(1)}; a kernel cannot call PyTorch, "
                                  "NumPy or the reference model", s,
                                  "write the math with DSL operations (load, store, exp, select, max, ...)"))
        elif _CPP.match(line):  # as written: `#include` is a comment to Python's tokenizer
            out.append(Diagnostic("WRONG-LANGUAGE", "this is C++/AscendC, not ascend-dsl; the compiler writes the "
                                  "AscendC", span, "write a Python-shaped @kernel function as in the reference"))
    return out


def extract_dsl(response: str, file: str) -> str:
    """extract_code + forbidden: the DSL text, or DslError with every located problem."""
    code = extract_code(response)
    problems = forbidden(code, file)
    if problems:
        raise DslError(*problems)
    return code
