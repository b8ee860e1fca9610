"""Front end: DSL text -> lark tree -> typed IR (`ascend_dsl.ir`).

Goals: parse `.adsl` files and `@kernel` functions of `.py` files with one grammar; resolve names;
type every expression; report user mistakes as located `DslError`s.
Non-goals: hardware constraints (lowering/passes/check_constraints.py) and tiling decisions.
"""

from __future__ import annotations

import ast
import difflib
import textwrap
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.indenter import DedentError, Indenter

from . import ir
from .diagnostics import DslError, Span, register_source
from .dtypes import BY_NAME, DType
from .ops import BINARY_OPERATORS, CALLABLE, COMPARE_OPERATORS, OPS, POW_EXPONENTS, REDUCTIONS, Rule
from .parser_cube import cube_loop, cube_slice, is_cube_split

CORE_KINDS = ("AIV", "AIC")


class _Indenter(Indenter):
    NL_type = "_NL"
    OPEN_PAREN_types = ["LPAR", "LSQB"]
    CLOSE_PAREN_types = ["RPAR", "RSQB"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8


@lru_cache(maxsize=1)
def _lark() -> Lark:
    grammar = resources.files("ascend_dsl").joinpath("grammar.lark").read_text()
    return Lark(grammar, parser="lalr", postlex=_Indenter(), propagate_positions=True, maybe_placeholders=False)


@dataclass(frozen=True)
class Origin:
    """Maps positions in a parsed snippet to absolute file positions (one place for the offsets)."""

    file: str
    line_offset: int = 0
    col_offset: int = 0

    def span(self, node) -> Span:
        if isinstance(node, Token):
            line, col = node.line, node.column
            end_line, end_col = node.end_line or line, node.end_column or col + len(node)
        else:
            meta = node.meta
            if getattr(meta, "empty", True):
                return Span(self.file, 0, 0, 0, 0)
            line, col, end_line, end_col = meta.line, meta.column, meta.end_line, meta.end_column
        return Span(self.file, line + self.line_offset, col + self.col_offset,
                    end_line + self.line_offset, end_col + self.col_offset)


# ----------------------------------------------------------------------------- parsing


_FRIENDLY = {
    "_NL": "end of line", "_INDENT": "an indented block", "_DEDENT": "end of block", "NAME": "a name",
    "NUMBER": "a number", "STRING": "a string", "$END": "end of file",
}


def _describe(names) -> str:
    """Human names for lark terminals: literal punctuation is shown as written."""
    shown = set()
    for n in names:
        if n in _FRIENDLY:
            shown.add(_FRIENDLY[n])
            continue
        try:
            pattern = _lark().get_terminal(n).pattern
        except KeyError:
            shown.add(n.lower())
            continue
        shown.add(repr(pattern.value) if pattern.type == "str" else n.lower())
    ordered = sorted(shown)
    return ", ".join(ordered[:8]) + (" ..." if len(ordered) > 8 else "")


def _first_bad_dedent(text: str) -> tuple[int, int]:
    """(line, col) of the first line dedented to a column that matches no enclosing block."""
    stack = [0]
    depth = 0
    for i, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if depth == 0 and stripped and not stripped.startswith("#"):
            width = len(raw.expandtabs(8)) - len(raw.expandtabs(8).lstrip())
            if width > stack[-1]:
                stack.append(width)
            else:
                while width < stack[-1]:
                    stack.pop()
                if width != stack[-1]:
                    return i, width + 1
        code = raw.split("#", 1)[0]
        depth = max(0, depth + sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}"))
    return 1, 1


def _syntax_error(e: Exception, text: str, origin: Origin) -> DslError:
    line = getattr(e, "line", 0) or 0
    col = getattr(e, "column", 0) or 0
    hint = None
    if isinstance(e, UnexpectedToken):
        tok = e.token
        at_end = tok.type == "$END" or (tok.type == "_DEDENT" and not text[tok.end_pos or 0:].strip()) \
            or (tok.type == "_NL" and not text[tok.start_pos or 0:].strip())
        if at_end:
            lines = text.rstrip().splitlines() or [""]
            line, col = len(lines), len(lines[-1]) + 1
            msg = "unexpected end of file"
            open_bracket = {"RPAR", "RSQB"} & set(e.expected)
            hint = "a '(' or '[' is left open" if open_bracket else "is a block left empty?"
        else:
            if tok.type in ("_INDENT", "_DEDENT") and tok.end_line:
                line, col = tok.end_line, tok.end_column  # the offending line, not the end of the last one
            what = ("end of line" if tok.type == "_NL" else
                    "indentation" if tok.type in ("_INDENT", "_DEDENT") else f"'{tok}'")
            msg = f"unexpected {what}; expected {_describe(e.expected)}"
            if "COLON" in e.expected:
                hint = "a block header (def/for) ends with ':'"
            elif tok.type == "_INDENT":
                hint = "this line is indented deeper than the block it belongs to"
    elif isinstance(e, UnexpectedCharacters):
        msg = f"unexpected character {text[e.pos_in_stream]!r}" if e.pos_in_stream < len(text) else "unexpected input"
    elif isinstance(e, UnexpectedEOF):
        lines = text.rstrip().splitlines() or [""]
        line, col = len(lines), len(lines[-1]) + 1
        msg, hint = "unexpected end of file", "is a block or a bracket left open?"
    else:
        line, col = _first_bad_dedent(text)
        msg = "inconsistent indentation: this line matches no enclosing block"
        hint = "indent it like the block it belongs to"
    span = Span(origin.file, line + origin.line_offset, col + origin.col_offset,
                line + origin.line_offset, col + origin.col_offset + 1)
    return DslError.at("SYNTAX", msg, span, hint)


def parse_tree(text: str, origin: Origin) -> Tree:
    src = text if text.endswith("\n") else text + "\n"
    try:
        return _lark().parse(src)
    except (UnexpectedInput, DedentError) as e:
        raise _syntax_error(e, src, origin) from None


# ----------------------------------------------------------------------------- kernel sources


@dataclass(frozen=True)
class KernelSource:
    """A parsed, not yet typed kernel; `instantiate()` picks dtype variables and type-checks it."""

    name: str
    tree: Tree = field(repr=False)
    origin: Origin = field(repr=False)
    type_options: tuple[tuple[str, tuple[DType, ...]], ...] = ()

    def instantiate(self, dtypes: dict[str, DType | str] | None = None) -> ir.Kernel:
        return _Builder(self.origin).kernel(self.tree, self.type_options, dtypes or {})

    @property
    def dtype_variants(self) -> list[dict[str, DType]]:
        """Every combination of the declared dtype variables (one empty dict if none)."""
        combos: list[dict[str, DType]] = [{}]
        for name, options in self.type_options:
            combos = [{**c, name: o} for c in combos for o in options]
        return combos


def parse_text(text: str, file: str = "<string>", line_offset: int = 0, col_offset: int = 0) -> list[KernelSource]:
    if line_offset == 0 and col_offset == 0:
        register_source(file, text)
    origin = Origin(file, line_offset, col_offset)
    tree = parse_tree(text, origin)
    out = []
    for k in tree.children:
        if isinstance(k, Tree) and k.data == "kernel":
            out.append(_kernel_source(k, origin))
    return out


def _kernel_source(k: Tree, origin: Origin) -> KernelSource:
    decorator = k.children[0]
    deco_name = ".".join(str(t) for t in decorator.children[0].children)
    if deco_name not in ("kernel", "ascend_dsl.kernel"):
        raise DslError.at("SYNTAX", f"unknown decorator '@{deco_name}'", origin.span(decorator),
                          "kernels are declared with @kernel")
    options = []
    for tv in decorator.children[1:]:
        name, *dts = tv.children
        resolved = []
        for d in dts:
            if str(d) not in BY_NAME:
                raise _unknown_dtype(d, origin)
            resolved.append(BY_NAME[str(d)])
        options.append((str(name), tuple(resolved)))
    return KernelSource(str(k.children[1]), k, origin, tuple(options))


def _unknown_dtype(tok, origin: Origin) -> DslError:
    close = difflib.get_close_matches(str(tok), BY_NAME, n=1)
    return DslError.at("UNKNOWN-DTYPE", f"unknown dtype '{tok}'", origin.span(tok),
                       f"did you mean '{close[0]}'?" if close else f"dtypes are {', '.join(BY_NAME)}")


def load_file(path: str | Path) -> list[KernelSource]:
    """Kernels of a `.adsl` file, or of the `@kernel` functions of a `.py` file (read, never imported)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise DslError.at("IO", f"cannot read {path}: {e.strerror}", None) from None
    if path.suffix == ".py":
        register_source(str(path), text)
        return [k for snippet, line, col in extract_python_kernels(text, str(path)) for k in
                parse_text(snippet, str(path), line, col)]
    kernels = parse_text(text, str(path))
    if not kernels:
        raise DslError.at("NO-KERNEL", f"{path} defines no @kernel function", Span(str(path), 1, 1, 1, 2))
    return kernels


def extract_python_kernels(text: str, file: str = "<python>") -> list[tuple[str, int, int]]:
    """(dedented source, line offset, col offset) of every @kernel function in Python source, in file order."""
    try:
        module = ast.parse(text)
    except SyntaxError as e:
        raise DslError.at("SYNTAX", f"not valid Python: {e.msg}", Span(file, e.lineno or 0, e.offset or 0,
                                                                        e.lineno or 0, (e.offset or 0) + 1)) from None
    lines = text.splitlines(keepends=True)
    out = []
    for node in sorted(ast.walk(module), key=lambda n: getattr(n, "lineno", 0)):
        if isinstance(node, ast.FunctionDef) and any(_is_kernel_decorator(d) for d in node.decorator_list):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            snippet = "".join(lines[first - 1 : node.end_lineno])
            dedented = textwrap.dedent(snippet)
            col = len(snippet.splitlines()[0]) - len(dedented.splitlines()[0])
            out.append((dedented, first - 1, col))
    return out


def _is_kernel_decorator(d: ast.expr) -> bool:
    target = d.func if isinstance(d, ast.Call) else d
    return (isinstance(target, ast.Name) and target.id == "kernel") or (
        isinstance(target, ast.Attribute) and target.attr == "kernel")


# ----------------------------------------------------------------------------- typed IR builder


@dataclass
class _LoopVar:
    kind: str  # "block" | "tile"
    over: str | None = None


class _Builder:
    def __init__(self, origin: Origin):
        self.o = origin
        self.params: dict[str, ir.Param] = {}
        self.symbols: set[str] = set()
        self.locals: dict[str, ir.ValType] = {}
        self.mask_dtypes: dict[str, DType] = {}
        self.loops: dict[str, _LoopVar] = {}
        self.type_args: dict[str, DType] = {}
        self.row_shape: tuple[str, str] | None = None  # (rows, D) inside a row loop
        self.split_extent: tuple[str, ...] = ()
        self.cube = None  # parser_cube.CubeScope inside a `with vector:` block

    def err(self, code: str, msg: str, node, hint: str | None = None) -> DslError:
        return DslError.at(code, msg, self.o.span(node), hint)

    # --- kernel and params
    def kernel(self, k: Tree, options, chosen: dict) -> ir.Kernel:
        for name, opts in options:
            pick = chosen.get(name, opts[0])
            pick = BY_NAME.get(pick, pick) if isinstance(pick, str) else pick
            if pick not in opts:
                raise self.err("UNKNOWN-DTYPE", f"dtype variable {name} allows {', '.join(map(str, opts))}, not {pick}",
                               k.children[0])
            self.type_args[name] = pick
        unknown = set(chosen) - {n for n, _ in options}
        if unknown:
            raise self.err("UNKNOWN-DTYPE", f"kernel has no dtype variable {', '.join(sorted(unknown))}", k.children[0],
                           "declare it as @kernel(T=[f32, f16])")
        rest = k.children[2:]
        params_tree = next((c for c in rest if isinstance(c, Tree) and c.data == "params"), None)
        suite = rest[-1]
        params = tuple(self.param(p) for p in (params_tree.children if params_tree else ()))
        body = self.kernel_body(suite)
        return ir.Kernel(str(k.children[1]), params, body, tuple(self.type_args.items()), tuple(options),
                         self.o.span(k))

    def dtype(self, tok) -> DType:
        name = str(tok)
        if name in self.type_args:
            return self.type_args[name]
        if name in BY_NAME:
            return BY_NAME[name]
        raise _unknown_dtype(tok, self.o)

    def param(self, p: Tree) -> ir.Param:
        name_tok, ann, *default = p.children
        name = str(name_tok)
        if name in self.params:
            raise self.err("DUPLICATE-NAME", f"parameter '{name}' is declared twice", name_tok)
        if ann.data == "tensor_type":
            head = ".".join(str(t) for t in ann.children[0].children)
            if head not in ("Tensor", "ascend_dsl.Tensor"):
                raise self.err("TYPE", f"unknown annotation '{head}[...]'", ann, 'write Tensor[f32, "N"]')
            dtype = self.dtype(ann.children[1])
            shape = self.shape(ann.children[2])
            if default:
                raise self.err("TYPE", "tensor parameters cannot have defaults", default[0])
            param: ir.Param = ir.TensorParam(name, dtype, shape, self.o.span(p))
            self.symbols.update(d for d in shape if isinstance(d, str))
        else:
            dtype = self.dtype(ann.children[0])
            value = self.number(default[0]) if default else None
            param = ir.ScalarParam(name, dtype, value, self.o.span(p))
        self.params[name] = param
        return param

    def shape(self, tok: Token) -> tuple[str | int, ...]:
        text = str(tok)[1:-1]
        dims: list[str | int] = []
        for part in text.replace(",", " ").split():
            if part.isdigit():
                dims.append(int(part))
            elif part.isidentifier():
                if part in self.params:
                    raise self.err("DUPLICATE-NAME", f"shape symbol '{part}' clashes with a parameter", tok)
                dims.append(part)
            else:
                raise self.err("TYPE", f"bad shape dimension '{part}'", tok, 'shapes are names or integers, e.g. "N"')
        if not dims:
            raise self.err("TYPE", "a tensor needs at least one dimension", tok, 'e.g. Tensor[f32, "N"]')
        return tuple(dims)

    def number(self, t) -> float | int:
        if isinstance(t, Tree):
            if t.data == "negative":
                return -self.number(t.children[0])
            return self.number(t.children[0])
        text = str(t)
        return int(text) if text.isdigit() else float(text)

    # --- statements
    def statements(self, suite: Tree) -> list[Tree]:
        return [s for s in suite.children if not (isinstance(s, Tree) and s.data in ("doc_stmt", "pass_stmt"))]

    def kernel_body(self, suite: Tree) -> tuple[ir.Stmt, ...]:
        out = []
        for s in self.statements(suite):
            if s.data == "for_stmt" and is_cube_split(self, s):
                out.append(cube_loop(self, s))
                continue
            if s.data != "for_stmt" or self.call_name(s.children[1]) != "split":
                raise self.err("KERNEL-STRUCTURE", "a kernel body is a `for ... in split(...)` loop", s,
                               "wrap the work in: for blk in split(N, cores=AIV):")
            out.append(self.split_loop(s))
        if not out:
            raise self.err("KERNEL-STRUCTURE", "kernel has no split loop", suite,
                           "add: for blk in split(N, cores=AIV):")
        return tuple(out)

    def call_name(self, call: Tree) -> str:
        return str(call.children[0])

    def call_args(self, call: Tree) -> tuple[list, dict]:
        pos, kw = [], {}
        for a in call.children[1:]:
            if isinstance(a, Tree) and a.data == "kwarg":
                key = str(a.children[0])
                if key in kw:
                    raise self.err("ARGS", f"argument '{key}' given twice", a)
                kw[key] = a.children[1]
            else:
                if kw:
                    raise self.err("ARGS", "positional argument after keyword argument", a)
                pos.append(a)
        return pos, kw

    def bind(self, tok: Token) -> str:
        name = str(tok)
        if name in self.params or name in self.symbols or name in self.loops:
            raise self.err("DUPLICATE-NAME", f"'{name}' is already defined", tok)
        return name

    def split_loop(self, s: Tree) -> ir.SplitLoop:
        var_tok, call, suite = s.children
        pos, kw = self.call_args(call)
        if len(pos) != 1 or set(kw) - {"cores"}:
            raise self.err("ARGS", "split takes one extent and cores=", call, "split(N, cores=AIV)")
        extent = self.extent(pos[0])
        kind, count = "AIV", None
        if "cores" in kw:
            c = kw["cores"]
            if isinstance(c, Tree) and c.data == "name" and str(c.children[0]) in CORE_KINDS:
                kind = str(c.children[0])
            elif isinstance(c, Tree) and c.data == "number" and str(c.children[0]).isdigit():
                count = int(str(c.children[0]))
                if count < 1:
                    raise self.err("ARGS", "cores must be at least 1", c)
            else:
                raise self.err("ARGS", "cores= takes AIV, AIC or a positive integer", c)
        var = self.bind(var_tok)
        self.loops[var] = _LoopVar("block")
        self.split_extent = extent
        body = []
        for st in self.statements(suite):
            if st.data != "for_stmt" or self.call_name(st.children[1]) != "tile":
                raise self.err("KERNEL-STRUCTURE", "the body of a split loop is a `for ... in tile(...)` loop", st,
                               f"for t in tile({var}, size=auto, buffers=2):")
            body.append(self.tile_loop(st, var))
        return ir.SplitLoop(var, extent, kind, count, tuple(body), self.o.span(s))

    def extent(self, e) -> tuple[str, ...]:
        if isinstance(e, Tree) and e.data == "name":
            name = str(e.children[0])
            if name not in self.symbols:
                raise self.undefined(e.children[0], self.symbols, "a shape symbol of a tensor parameter")
            return (name,)
        if isinstance(e, Tree) and e.data == "mul":
            return self.extent(e.children[0]) + self.extent(e.children[1])
        raise self.err("ARGS", "split extent must be a shape symbol or a product of them", e, "split(N, cores=AIV)")

    def tile_loop(self, s: Tree, block: str) -> ir.TileLoop:
        var_tok, call, suite = s.children
        pos, kw = self.call_args(call)
        if len(pos) != 1 or set(kw) - {"size", "buffers"}:
            raise self.err("ARGS", "tile takes a block and size=, buffers=", call, "tile(blk, size=auto, buffers=2)")
        over = pos[0]
        if not (isinstance(over, Tree) and over.data == "name" and str(over.children[0]) == block):
            raise self.err("ARGS", f"tile() must tile the enclosing split variable '{block}'", over)
        size: int | None = None
        if "size" in kw:
            v = kw["size"]
            if isinstance(v, Tree) and v.data == "name" and str(v.children[0]) == "auto":
                size = None
            elif isinstance(v, Tree) and v.data == "number" and str(v.children[0]).isdigit():
                size = int(str(v.children[0]))
                if size <= 0:
                    raise self.err("ARGS", "tile size must be positive", v)
            else:
                raise self.err("ARGS", "size= takes auto or a positive integer", v)
        buffers = 2
        if "buffers" in kw:
            v = kw["buffers"]
            if not (isinstance(v, Tree) and v.data == "number" and str(v.children[0]).isdigit()):
                raise self.err("ARGS", "buffers= takes a positive integer (1 or 2)", v)
            buffers = int(str(v.children[0]))
        var = self.bind(var_tok)
        self.loops[var] = _LoopVar("tile", block)
        self.locals = {}
        self.row_shape = self.row_shape_for(self.split_extent, s)
        body = []
        for st in self.statements(suite):
            body.append(self.tile_stmt(st, var))
        if not any(isinstance(b, ir.Store) for b in body):
            raise self.err("KERNEL-STRUCTURE", "tile loop stores nothing", s, "write results with store(y[t], value)")
        return ir.TileLoop(var, block, size, buffers, tuple(body), row_shape=self.row_shape, span=self.o.span(s))

    def row_shape_for(self, extent: tuple[str, ...], node) -> tuple[str, str] | None:
        """A tile loop over a split of B is a row loop when 2-D tensors [B, D] exist."""
        shapes = {p.shape for p in self.params.values() if isinstance(p, ir.TensorParam) and len(p.shape) == 2
                  and (p.shape[0],) == extent}
        if not shapes:
            return None
        if len(shapes) > 1:
            raise self.err("INDEX", f"row tiles over {extent[0]} need one row length; tensors have shapes "
                           f"{', '.join(str(list(s)) for s in sorted(shapes, key=str))}", node)
        rows, d = next(iter(shapes))
        if not isinstance(d, str):
            raise self.err("UNSUPPORTED", "the row length of a 2-D tensor must be a shape symbol", node)
        return rows, d

    def tile_stmt(self, st: Tree, tile: str) -> ir.Stmt:
        if st.data == "assign":
            name_tok, value = st.children
            name = str(name_tok)
            if name in self.params or name in self.symbols or name in self.loops or name in OPS or name in CALLABLE:
                raise self.err("DUPLICATE-NAME", f"cannot assign to '{name}': it names a parameter, loop or op",
                               name_tok)
            e = self.expr(value, tile)
            self.locals[name] = e.type
            if e.type.dtype is DType.BOOL and isinstance(e, ir.Op):
                self.mask_dtypes[name] = e.args[0].type.dtype
            return ir.Assign(name, e, self.o.span(st))
        if st.data == "expr_stmt":
            call = st.children[0]
            if self.call_name(call) != "store":
                raise self.err("KERNEL-STRUCTURE", f"'{self.call_name(call)}(...)' result is unused", call,
                               "only store(...) stands alone; assign other values to a name")
            pos, kw = self.call_args(call)
            if len(pos) != 2 or kw:
                raise self.err("ARGS", "store takes a tensor slice and a value", call, "store(y[t], value)")
            tensor, index, layout = self.slice_of(pos[0], tile)
            if layout is ir.Layout.ROW:
                raise self.err("INDEX", f"'{tensor}[:]' is shared by every row tile and cannot be stored", pos[0])
            value = self.expr(pos[1], tile)
            tp = self.params[tensor]
            if value.type.kind is not ir.Kind.TILE:
                raise self.err("TYPE", "store needs a tile value, got a scalar", pos[1],
                               "compute a tile from a loaded value, e.g. xt * 0.0 + c")
            if value.type.dtype is DType.BOOL:
                raise self.err("TYPE", "cannot store a comparison mask", pos[1], "use select(mask, a, b)")
            if value.type.dtype is not tp.dtype:
                raise self.err("DTYPE-MISMATCH", f"storing {value.type.dtype} into '{tensor}' of dtype {tp.dtype}",
                               pos[1], f"convert with cast(value, {tp.dtype})")
            if value.type.layout is not layout:
                what = {ir.Layout.ROWS: "whole rows", ir.Layout.COL: "one value per row", ir.Layout.ROW: "a row",
                        ir.Layout.FLAT: "a flat tile"}
                raise self.err("TYPE", f"storing {what[value.type.layout]} into {what[layout]} of '{tensor}'", pos[1],
                               "reduce rows with sum/max/min/mean(v, axis=1) to get one value per row"
                               if layout is ir.Layout.COL else None)
            return ir.Store(tensor, index, value, self.o.span(st))
        if st.data == "for_stmt":
            raise self.err("KERNEL-STRUCTURE", "loops inside a tile loop are not supported", st)
        raise self.err("KERNEL-STRUCTURE", f"unexpected statement '{st.data}'", st)

    def slice_of(self, e, tile: str) -> tuple[str, ir.TileIndex, ir.Layout]:
        if self.cube is not None:
            return cube_slice(self, e, self.cube)
        if not (isinstance(e, Tree) and e.data == "subscript"):
            raise self.err("INDEX", "expected a tensor slice like x[t]", e)
        name_tok, *idx = e.children
        name = str(name_tok)
        p = self.params.get(name)
        if not isinstance(p, ir.TensorParam):
            raise self.undefined(name_tok, [n for n, q in self.params.items() if isinstance(q, ir.TensorParam)],
                                 "a tensor parameter")
        is_tile = [isinstance(i, Tree) and i.data == "name" and str(i.children[0]) == tile for i in idx]
        is_full = [isinstance(i, Tree) and i.data == "full_slice" for i in idx]
        rows = self.row_shape
        if len(idx) == 1 and is_tile[0] and len(p.shape) == 1:
            if rows is None:
                return name, ir.TileIndex(tile, False, self.o.span(idx[0])), ir.Layout.FLAT
            if p.shape != (rows[0],):
                raise self.err("INDEX", f"'{name}[{tile}]' in a row loop needs a tensor over the rows ({rows[0]}); "
                               f"'{name}' has shape {list(p.shape)}", e)
            return name, ir.TileIndex(tile, False, self.o.span(idx[0])), ir.Layout.COL
        if len(idx) == 2 and is_tile[0] and is_full[1] and len(p.shape) == 2 and rows is not None:
            return name, ir.TileIndex(tile, True, self.o.span(idx[0])), ir.Layout.ROWS
        if len(idx) == 1 and is_full[0] and len(p.shape) == 1 and rows is not None:
            if p.shape != (rows[1],):
                raise self.err("INDEX", f"'{name}[:]' in a row loop needs a tensor over the row length ({rows[1]}); "
                               f"'{name}' has shape {list(p.shape)}", e)
            return name, ir.TileIndex(None, False, self.o.span(idx[0])), ir.Layout.ROW
        if len(p.shape) == 2:
            raise self.err("INDEX", f"index the 2-D tensor '{name}' by whole rows: {name}[{tile}, :]", e,
                           "split its first dimension: for blk in split(" + str(p.shape[0]) + ", cores=AIV)")
        if len(p.shape) > 2:
            raise self.err("INDEX", f"'{name}' has rank {len(p.shape)}; tiles index rank-1 or rank-2 tensors", e,
                           f'declare it as Tensor[{p.dtype}, "N"] to view it flat')
        raise self.err("INDEX", f"index '{name}' with the tile variable: {name}[{tile}]", e)

    def undefined(self, tok, candidates, what: str) -> DslError:
        close = difflib.get_close_matches(str(tok), list(candidates), n=1)
        return self.err("UNDEFINED-NAME", f"'{tok}' is not defined (expected {what})", tok,
                        f"did you mean '{close[0]}'?" if close else None)

    # --- expressions
    def expr(self, e, tile: str) -> ir.Expr:
        span = self.o.span(e)
        if isinstance(e, Tree):
            d = e.data
            if d == "number":
                return ir.Const(self.number(e.children[0]), ir.scalar_of(DType.F32), span)
            if d == "name":
                return self.name_ref(e.children[0])
            if d in BINARY_OPERATORS.values() or d in ("max", "min"):
                return self.op(d, [self.expr(c, tile) for c in e.children], e)
            if d in COMPARE_OPERATORS.values():
                return self.op(d, [self.expr(c, tile) for c in e.children], e)
            if d == "neg":
                inner = self.expr(e.children[0], tile)
                if isinstance(inner, ir.Const):
                    return ir.Const(-inner.value, inner.type, span)
                return self.op("neg", [inner], e)
            if d == "pow":
                return self.power(e, tile)
            if d == "call":
                return self.call(e, tile)
            if d == "subscript":
                raise self.err("INDEX", "read a tile with load(x[t])", e)
        raise self.err("SYNTAX", "unsupported expression", e)

    def name_ref(self, tok: Token) -> ir.Expr:
        name = str(tok)
        span = self.o.span(tok)
        if name in self.locals:
            return ir.Ref(name, self.locals[name], span)
        p = self.params.get(name)
        if isinstance(p, ir.ScalarParam):
            return ir.Ref(name, ir.scalar_of(p.dtype), span)
        if isinstance(p, ir.TensorParam):
            raise self.err("TYPE", f"'{name}' is a GM tensor; read it with load({name}[t])", tok)
        if name in self.loops:
            raise self.err("TYPE", f"loop variable '{name}' is not a value", tok)
        candidates = list(self.locals) + [n for n, q in self.params.items() if isinstance(q, ir.ScalarParam)]
        raise self.undefined(tok, candidates, "a local value or scalar parameter")

    def power(self, e: Tree, tile: str) -> ir.Expr:
        base = self.expr(e.children[0], tile)
        exp_node = self.expr(e.children[1], tile)
        if not isinstance(exp_node, ir.Const) or exp_node.value not in POW_EXPONENTS:
            raise self.err("UNSUPPORTED", "'**' needs a constant exponent", e.children[1],
                           f"supported exponents: {', '.join(map(str, POW_EXPONENTS))}; use exp(y * log(x)) otherwise")
        c = exp_node.value
        if c == 1:
            return base
        if c in (2, 3, 4):
            acc = base
            for _ in range(int(c) - 1):
                acc = self.op("mul", [acc, base], e)
            return acc
        return self.op({0.5: "sqrt", -0.5: "rsqrt", -1: "reciprocal"}[c], [base], e)

    def call(self, e: Tree, tile: str) -> ir.Expr:
        name_tok = e.children[0]
        name = str(name_tok)
        pos, kw = self.call_args(e)
        if name == "load":
            if len(pos) != 1 or kw:
                raise self.err("ARGS", "load takes one tensor slice", e, "load(x[t])")
            tensor, index, layout = self.slice_of(pos[0], tile)
            return ir.Load(tensor, index, ir.tile_of(self.params[tensor].dtype, layout), self.o.span(e))
        if name in ("store", "split", "tile"):
            raise self.err("KERNEL-STRUCTURE", f"{name}(...) cannot be used inside an expression", e)
        if name == "matmul":
            raise self.err("KERNEL-STRUCTURE", "matmul(...) runs on the cube unit: it goes into a `with cube:` block", e,
                           "for blk in split(M, N, cores=AIC):  with cube: acc = matmul(a[blk], b[blk])")
        if name not in CALLABLE:
            close = difflib.get_close_matches(name, list(CALLABLE) + ["load"], n=1)
            raise self.err("UNKNOWN-OP", f"unknown function '{name}'", name_tok,
                           f"did you mean '{close[0]}'?" if close else f"available: {', '.join(sorted(CALLABLE))}")
        if name in REDUCTIONS and "axis" in kw:
            return self.reduction(name, pos, kw, e, tile)
        if kw:
            raise self.err("ARGS", f"{name}() takes no keyword arguments", e)
        if name in ("sum", "mean"):
            raise self.err("ARGS", f"{name}() needs axis=1: {name}(v, axis=1)", e)
        if name == "cast":
            if len(pos) != 2:
                raise self.err("ARGS", "cast takes a value and a dtype", e, "cast(x, f16)")
            target = pos[1]
            if not (isinstance(target, Tree) and target.data == "name"):
                raise self.err("ARGS", "cast's second argument is a dtype name", target)
            value = self.expr(pos[0], tile)
            dt = self.dtype(target.children[0])
            if value.type.dtype is DType.BOOL:
                raise self.err("TYPE", "cannot cast a mask", pos[0], "use select(mask, 1.0, 0.0)")
            if isinstance(value, ir.Const):
                return ir.Const(value.value, ir.scalar_of(dt), value.span)
            return ir.Op("cast", (value,), ir.ValType(value.type.kind, dt, value.type.layout), self.o.span(e))
        return self.op(name, [self.expr(a, tile) for a in pos], e)

    def reduction(self, name: str, pos: list, kw: dict, e: Tree, tile: str) -> ir.Expr:
        if len(pos) != 1 or set(kw) != {"axis"}:
            raise self.err("ARGS", f"{name}(v, axis=1) takes one value and axis=", e)
        axis = kw["axis"]
        value = self.number(axis.children[0]) if isinstance(axis, Tree) and axis.data == "number" else None
        if isinstance(axis, Tree) and axis.data == "neg" and isinstance(axis.children[0], Tree):
            value = -self.number(axis.children[0].children[0])
        if value not in (1, -1):
            raise self.err("UNSUPPORTED", "reductions run over the last axis of a row tile: axis=1", axis)
        v = self.expr(pos[0], tile)
        if v.type.kind is not ir.Kind.TILE or v.type.layout is not ir.Layout.ROWS:
            raise self.err("TYPE", f"{name}(v, axis=1) needs whole rows (a value loaded with x[r, :])", pos[0],
                           "split the rows of a 2-D tensor: for blk in split(B, cores=AIV)")
        op = REDUCTIONS[name]
        if v.type.dtype not in OPS[op].dtypes:
            raise self.err("DTYPE-UNSUPPORTED", f"'{name}' does not support {v.type.dtype}", e)
        return ir.Op(op, (v,), ir.tile_of(v.type.dtype, ir.Layout.COL), self.o.span(e))

    def layout_of(self, args: list[ir.Expr], node, same: bool = False) -> ir.Layout:
        """Broadcasting: rows x D absorbs per-row values and row vectors; flat tiles mix with nothing else."""
        layouts = {a.type.layout for a in args if a.type.kind is ir.Kind.TILE}
        if not layouts:
            return ir.Layout.FLAT
        if len(layouts) == 1:
            return next(iter(layouts))
        if same:
            raise self.err("UNSUPPORTED", "comparisons and select need operands of one shape (all whole rows, or all "
                           "per-row values)", node)
        if ir.Layout.ROWS in layouts and ir.Layout.FLAT not in layouts:
            return ir.Layout.ROWS
        raise self.err("UNSUPPORTED", "a per-row value and a row vector only combine with whole rows", node)

    def op(self, name: str, args: list[ir.Expr], node) -> ir.Expr:
        info = OPS[name]
        span = self.o.span(node)
        if len(args) != info.arity:
            raise self.err("ARGS", f"{name} takes {info.arity} argument(s), got {len(args)}", node)
        if info.rule is Rule.SELECT:
            mask, a, b = args
            if mask.type.kind is not ir.Kind.TILE or mask.type.dtype is not DType.BOOL:
                raise self.err("TYPE", "select's first argument must be a comparison mask", node,
                               "e.g. select(x > 0.0, x, 0.0)")
            fallback = self.mask_source_dtype(mask)
            a, b, dtype, kind = self.unify([a, b], node, fallback)
            layout = self.layout_of([mask, a, b], node, same=True)
            return ir.Op("select", (mask, a, b), ir.tile_of(dtype, layout), span)
        for a in args:
            if a.type.dtype is DType.BOOL:
                raise self.err("TYPE", f"a comparison mask cannot be used in '{name}'", node,
                               "masks only feed select(mask, a, b)")
        unified = self.unify(args, node, None)
        args2, dtype, kind = list(unified[:-2]), unified[-2], unified[-1]
        if all(isinstance(a, ir.Const) for a in args2) and info.rule is Rule.SAME:
            from .ops import scalar_ref

            try:
                return ir.Const(scalar_ref(name, *[a.value for a in args2]), ir.scalar_of(dtype), span)
            except (ValueError, ZeroDivisionError, OverflowError):
                raise self.err("TYPE", f"cannot evaluate {name} on these constants", node) from None
        if dtype not in info.dtypes:
            raise self.err("DTYPE-UNSUPPORTED", f"'{name}' does not support {dtype}", node,
                           f"supported: {', '.join(sorted(map(str, info.dtypes)))}")
        if info.rule is Rule.COMPARE:
            if kind is not ir.Kind.TILE:
                raise self.err("TYPE", "comparisons need a tile operand", node)
            return ir.Op(name, tuple(args2), ir.tile_of(DType.BOOL, self.layout_of(args2, node, same=True)), span)
        layout = self.layout_of(args2, node) if kind is ir.Kind.TILE else ir.Layout.FLAT
        return ir.Op(name, tuple(args2), ir.ValType(kind, dtype, layout), span)

    def mask_source_dtype(self, mask: ir.Expr) -> DType | None:
        if isinstance(mask, ir.Op):
            return mask.args[0].type.dtype
        if isinstance(mask, ir.Ref):
            return self.mask_dtypes.get(mask.name)
        return None

    def unify(self, args: list[ir.Expr], node, fallback: DType | None):
        """Give literals and scalar parameters the dtype of the tile operands; tiles must agree."""
        tiles = [a for a in args if a.type.kind is ir.Kind.TILE]
        if tiles:
            dtype = tiles[0].type.dtype
            for t in tiles[1:]:
                if t.type.dtype is not dtype:
                    raise self.err("DTYPE-MISMATCH", f"operands have dtypes {dtype} and {t.type.dtype}", node,
                                   f"convert one side explicitly, e.g. cast(v, {dtype})")
            kind = ir.Kind.TILE
        else:
            refs = [a for a in args if isinstance(a, ir.Ref)]
            dtype = refs[0].type.dtype if refs else (fallback or DType.F32)
            kind = ir.Kind.SCALAR
        out = []
        for a in args:
            if a.type.kind is ir.Kind.SCALAR and a.type.dtype is not dtype:
                a = ir.Const(a.value, ir.scalar_of(dtype), a.span) if isinstance(a, ir.Const) else \
                    ir.Op("cast", (a,), ir.scalar_of(dtype), a.span)
            out.append(a)
        return (*out, dtype, kind)
