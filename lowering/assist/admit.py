"""Static admission of model-written C++ (a slot body) before anything compiles it.

The emulator compiles kernels with the system compiler and runs them natively, so a slot body is
untrusted code. Only a small subset is admitted, by a whitelist over tokens (not a blacklist of known
tricks): the slot's own parameters, locals it declares, scalar types, control flow, `static_cast`, and the
AscendC vector instructions and tensor methods listed below, called on those tensors. Rejected, each with
its reason: any preprocessor line or backslash (so no `#include`, macros or line splicing), trigraphs,
string and character literals, `asm`, every other identifier (libc and system calls, `std::`, builtins,
other functions and globals), pointers (`&` address-of, unary `*`, `->`, `*` after a type), casts other
than `static_cast`, and writes to the read-only sources.
"""

from __future__ import annotations

import re

MAX_CHARS = 6000
MAX_LINES = 200

#: AscendC vector instructions (count forms; first argument = the destination).
VECTOR_APIS = frozenset({
    "Add", "Sub", "Mul", "Div", "Max", "Min", "Adds", "Muls", "Maxs", "Mins", "LeakyRelu", "Exp", "Ln", "Abs",
    "Sqrt", "Rsqrt", "Reciprocal", "Relu", "Duplicate", "Cast",
})
#: other callables: barriers, and the enumerators they take
OTHER_NAMES = frozenset({
    "PipeBarrier", "PIPE_V", "PIPE_S", "RoundMode", "CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND",
    "CAST_TRUNC",
})
#: scopes whose enumerators may follow `::`
SCOPES = frozenset({"RoundMode"})
#: LocalTensor methods (after `.`)
METHODS = frozenset({"GetValue", "SetValue", "GetSize"})
TYPES = frozenset({"float", "half", "T", "int32_t", "uint32_t", "int64_t", "uint64_t", "int16_t", "uint16_t",
                   "bool", "auto"})
KEYWORDS = frozenset({"for", "if", "else", "while", "return", "const", "true", "false", "static_cast", "break",
                      "continue"})
#: punctuation admitted (longest first); anything else is rejected
PUNCT = ("<<=", ">>=", "::", "==", "!=", "<=", ">=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "++", "--", "<<", ">>",
         "(", ")", "{", "}", "[", "]", ";", ",", ".", "+", "-", "*", "/", "%", "<", ">", "=", "!", "?", ":")
_TOKEN = re.compile(r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFuUlL]*)|(?P<name>[A-Za-z_]\w*)|(?P<punct>"
                    + "|".join(re.escape(p) for p in PUNCT) + r"))")
_EXPLAIN = {
    "asm": "inline assembly", "__asm__": "inline assembly", "reinterpret_cast": "a pointer cast",
    "const_cast": "a cast", "dynamic_cast": "a cast", "std": "the C++ standard library", "new": "heap allocation",
    "delete": "heap allocation", "sizeof": "sizeof", "goto": "goto", "extern": "a declaration outside the slot",
    "static": "static state", "template": "a template", "typedef": "a type alias", "using": "a using-declaration",
    "namespace": "a namespace", "class": "a type definition", "struct": "a type definition",
    "operator": "an operator definition", "this": "this", "ReinterpretCast": "a reinterpreting view",
    "GetPhyAddr": "a raw UB address",
}


class Rejected(Exception):
    """The body is not admitted; `reason` says which construct, and where."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _strip_comments(text: str) -> str:
    """Comments become spaces (line breaks kept, so positions still name the right line)."""
    def blank(m: re.Match) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    return re.sub(r"//[^\n]*|/\*.*?\*/", blank, text, flags=re.S)


def admit(body: str, params: list[str]) -> None:
    """Raise Rejected unless `body` is in the admitted subset. `params`: the slot's parameters; the first is
    the destination, the last the count, the others the read-only sources."""
    if len(body) > MAX_CHARS or body.count("\n") > MAX_LINES:
        raise Rejected(f"the body is longer than {MAX_CHARS} characters or {MAX_LINES} lines")
    for bad, what in (("??", "a trigraph"), ("#", "a preprocessor directive (#include, #define, ...)"),
                      ("\\", "a backslash (line splicing or an escape)"), ('"', "a string literal"),
                      ("'", "a character literal"), ("`", "a backquote"), ("@", "'@'"), ("$", "'$'")):
        if bad in body:
            raise Rejected(f"line {_line(body, body.index(bad))}: {what} is not allowed in a slot")
    text = _strip_comments(body)
    if "/*" in text or "*/" in text:
        raise Rejected("an unterminated comment")
    for digraph in ("%:", "<:", ":>", "<%", "%>"):
        if digraph in text:
            raise Rejected(f"line {_line(text, text.index(digraph))}: the digraph '{digraph}' is not allowed in a slot")
    sources = set(params[1:-1])
    allowed = set(params) | VECTOR_APIS | OTHER_NAMES | TYPES | KEYWORDS
    declared: set[str] = set()
    tokens: list[tuple[str, str, int]] = []  # (kind, text, position)
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None:
            start = len(text[pos:]) - len(text[pos:].lstrip()) + pos
            ch = text[start]
            what = {"&": "'&' (address-of or bitwise and: no pointers)", "|": "'|'", "^": "'^'", "~": "'~'",
                    "-": "'->' (pointer access)"}.get(ch, repr(ch))
            raise Rejected(f"line {_line(text, start)}: {what} is not allowed in a slot")
        kind = m.lastgroup
        tokens.append((kind, m.group(kind), m.start(kind)))
        pos = m.end()
    depth = 0
    for kind, tok, at in tokens:  # the body stays inside the slot function: brackets balance, braces never close it
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(tok, 0) if kind == "punct" else 0
        if depth < 0:
            raise Rejected(f"line {_line(text, at)}: an unbalanced '{tok}' (the body cannot leave the slot function)")
    if depth:
        raise Rejected("unbalanced brackets in the body")
    for i, (kind, tok, at) in enumerate(tokens):
        prev = tokens[i - 1] if i else ("", "", 0)
        nxt = tokens[i + 1][1] if i + 1 < len(tokens) else ""
        where = f"line {_line(text, at)}"
        if kind == "punct" and tok == "-" and nxt == ">" and tokens[i + 1][2] == at + 1:
            raise Rejected(f"{where}: '->' (pointer access) is not allowed in a slot")
        if kind == "punct" and tok == "*":
            binary = prev[0] == "num" or prev[1] in (")", "]") or (
                prev[0] == "name" and prev[1] not in TYPES and prev[1] not in KEYWORDS)
            if not binary:
                raise Rejected(f"{where}: '*' as a pointer (dereference or pointer type) is not allowed in a slot")
        if kind != "name":
            continue
        if prev[1] == ".":
            if tok not in METHODS:
                raise Rejected(f"{where}: method '{tok}' is not in the admitted AscendC subset "
                               f"({', '.join(sorted(METHODS))})")
            owner = tokens[i - 2][1] if i >= 2 else ""
            if tok == "SetValue" and owner in sources:
                raise Rejected(f"{where}: {owner} is a read-only source; write dst")
            continue
        if prev[1] == "::":
            if i >= 2 and tokens[i - 2][1] in SCOPES:
                continue  # an enumerator: RoundMode::CAST_RINT
            raise Rejected(f"{where}: '::{tok}' names something outside the slot")
        if prev[0] == "name" and prev[1] in TYPES and tok not in allowed:
            if nxt == "[":
                raise Rejected(f"{where}: a local array ('{tok}[...]') is not allowed in a slot; use dst as scratch")
            declared.add(tok)  # a local: `float v`, `uint32_t i`
            continue
        if tok in allowed or tok in declared:
            if tok in VECTOR_APIS and nxt == "(":
                first = tokens[i + 2][1] if i + 2 < len(tokens) else ""
                if first in sources:
                    raise Rejected(f"{where}: {tok} writes its first argument, {first}, a read-only source; write dst")
            if tok in sources and nxt == "(":
                raise Rejected(f"{where}: {tok}(...) may write a read-only source; read it with {tok}.GetValue(i)")
            continue
        if tok in _EXPLAIN:
            raise Rejected(f"{where}: {_EXPLAIN[tok]} ('{tok}') is not allowed in a slot")
        raise Rejected(f"{where}: '{tok}' is not in the admitted subset (the slot's parameters, declared locals, "
                       "scalar types and the AscendC vector instructions); calls to libc, the system or other "
                       "functions are not allowed")
