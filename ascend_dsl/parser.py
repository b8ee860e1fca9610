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
from .ops import (
    BINARY_OPERATORS,
    CALLABLE,
    COMPARE_OPERATORS,
    OPS,
    POOLS,
    POW_EXPONENTS,
    REDUCTIONS,
    SCANS,
    Rule,
    scan_op,
)
from .parser_box import box_for, box_reduction, box_slice
from .parser_cube import cube_loop, cube_slice, is_cube_split
from .parser_slots import finish, slot_accumulate, slot_decl, slot_read

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


def _check_load_or_store(body: tuple[ir.Stmt, ...]) -> None:
    """A tensor is loaded or stored, not both (its input and output would alias in GM)."""
    loaded = set()
    for s in ir.walk(body):
        if isinstance(s, ir.ScalarLoad):
            loaded.add(s.tensor)
        for e in ir.walk_expr(s.value) if isinstance(getattr(s, "value", None), (ir.Op, ir.Load)) else ():
            if isinstance(e, ir.Load) and not e.index.acc:
                loaded.add(e.tensor)
    for s in ir.walk(body):
        if isinstance(s, (ir.Store, ir.ScalarStore)) and s.tensor in loaded:
            raise DslError.at("KERNEL-STRUCTURE", f"'{s.tensor}' is both loaded and stored", s.span,
                              "a tensor is an input or an output: store into another tensor")


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
        self.kscalars: dict[str, ir.ValType] = {}  # kernel-scope accumulators and scalars
        self.phase_accs: set[str] = set()  # accumulators updated by the current split loop
        self.combined: set[str] = set()  # accumulators whose split loop has ended (readable)
        self.acc_names: set[str] = set()
        self.constants: set[str] = set()  # `c = 0.5` read before any loop updated it: a constant, not an accumulator
        self.slot_accs: dict = {}  # name -> parser_slots.SlotAcc: `s = zeros(C)` accumulators
        self.plane_rank = 0  # trailing spatial dims of the planes inside a plane loop (0 elsewhere)
        self.box: tuple[int, str] | None = None  # (axis, symbol) of the extra dim inside a box loop
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
        _check_load_or_store(body)
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
        """Split loops, with accumulators declared before them and scalar results after them."""
        out: list[ir.Stmt] = []
        for s in self.statements(suite):
            if s.data == "for_stmt" and is_cube_split(self, s):
                if any(isinstance(o, ir.SplitLoop) for o in out):
                    raise self.err("UNSUPPORTED", "a cube split is the only loop of its kernel", s,
                                   "write the vector work as the matmul's epilogue (with vector:)")
                out.append(cube_loop(self, s))
                continue
            if any(isinstance(o, ir.CubeLoop) for o in out):
                raise self.err("UNSUPPORTED", "a cube split is the only loop of its kernel", s,
                               "write the vector work as the matmul's epilogue (with vector:)")
            if s.data == "for_stmt" and self.call_name(s.children[1]) == "split":
                outer = dict(self.loops)
                out.append(self.split_loop(s))
                self.loops = outer  # loop variables are scoped to their loop
                self.combined.update(self.phase_accs)  # combined across cores when the loop ends
                self.phase_accs = set()
            elif s.data == "assign":
                out.append(self.kernel_assign(s))
            elif s.data == "expr_stmt" and self.call_name(s.children[0]) == "store":
                out.append(self.scalar_store(s))
            else:
                raise self.err("KERNEL-STRUCTURE", "a kernel body is a `for ... in split(...)` loop", s,
                               "wrap the work in: for blk in split(N, cores=AIV):")
        if not any(isinstance(s, (ir.SplitLoop, ir.CubeLoop)) for s in out):
            raise self.err("KERNEL-STRUCTURE", "kernel has no split loop", suite,
                           "add: for blk in split(N, cores=AIV):")
        out = finish(self, out)
        unused = [s for s in out if isinstance(s, ir.AccDecl) and s.name not in self.combined]
        return tuple(ir.ScalarAssign(s.name, ir.Const(s.init, ir.scalar_of(DType.F32), s.span), s.span)
                     if s in unused else s for s in out)

    def kernel_assign(self, st: Tree) -> ir.Stmt:
        """`total = 0.0` before a split loop declares an accumulator; `r = sqrt(total)` after one names a
        scalar computed once per core from accumulators, shape symbols and scalar parameters."""
        name_tok, value = st.children
        name = self.bind(name_tok)
        if name in self.kscalars or name in self.slot_accs or name in OPS or name in CALLABLE:
            what = "names an op" if name in OPS or name in CALLABLE else "is already defined"
            raise self.err("DUPLICATE-NAME", f"'{name}' {what}", name_tok, "pick another name")
        if isinstance(value, Tree) and value.data == "call" and self.call_name(value) == "zeros":
            return slot_decl(self, name, st, value)
        if isinstance(value, Tree) and value.data == "call" and self.call_name(value) == "load":
            self.kscalars[name] = ir.scalar_of(DType.F32)
            return ir.ScalarLoad(name, self.element_zero(value, "load(scale[0])"), self.o.span(st))
        e = self.expr(value, "")
        if e.type.kind is not ir.Kind.SCALAR:
            raise self.err("TYPE", "kernel-scope values are scalars", value,
                           "tile values live inside a tile loop")
        self.kscalars[name] = ir.scalar_of(DType.F32)
        if isinstance(e, ir.Const):
            self.acc_names.add(name)
            return ir.AccDecl(name, float(e.value), self.o.span(st))
        return ir.ScalarAssign(name, e, self.o.span(st))

    def element_zero(self, call: Tree, example: str, target=None) -> str:
        """The tensor of `x[0]`, the only index a kernel-scope load or store takes."""
        if target is None:
            pos, kw = self.call_args(call)
            if len(pos) != 1 or kw:
                raise self.err("ARGS", "load takes one tensor element", call, example)
            target = pos[0]
        ok = (isinstance(target, Tree) and target.data == "subscript" and len(target.children) == 2
              and isinstance(target.children[1], Tree) and target.children[1].data == "number"
              and str(target.children[1].children[0]) == "0")
        if not ok:
            raise self.err("INDEX", "outside the split loops, load and store take element 0 of a tensor", target,
                           example)
        return self.tensor_param(target.children[0]).name

    def scalar_store(self, st: Tree) -> ir.ScalarStore:
        call = st.children[0]
        pos, kw = self.call_args(call)
        if len(pos) != 2 or kw:
            raise self.err("ARGS", "store takes a tensor element and a value", call, "store(loss[0], total / N)")
        tensor = self.element_zero(call, "store(loss[0], total / N)", pos[0])
        value = self.expr(pos[1], "")
        if value.type.kind is not ir.Kind.SCALAR:
            raise self.err("TYPE", "a kernel-scope store takes a scalar", pos[1])
        return ir.ScalarStore(tensor, value, self.o.span(st))

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
        # [N, C, *spatial] tensors under split(N * C): plane tiles when the body pools, else rows of H*W...
        pools = any(str(c.children[0]) in POOLS for c in suite.find_data("call"))
        self.row_shape = None if pools else self.row_shape_for(self.split_extent, s)
        self.plane_rank = self.plane_rank_for(self.split_extent, s) if self.row_shape is None else 0
        self.box = None if self.row_shape or self.plane_rank else box_for(self, self.split_extent, s)
        body = []
        for st in self.statements(suite):
            body.append(self.tile_stmt(st, var))
        if not any(isinstance(b, (ir.Store, ir.Accumulate)) for b in body):
            raise self.err("KERNEL-STRUCTURE", "tile loop stores nothing", s,
                           "write results with store(y[t], value) or accumulate them: total += sum(v)")
        if self.plane_rank and size is not None:
            raise self.err("ARGS", "plane tiles are sized at run time: size=auto", call,
                           "the host tiling picks planes (or bands of output rows) per tile from the shapes")
        if self.box and size is not None:
            raise self.err("ARGS", "box tiles are sized at run time: size=auto", call,
                           "the host tiling picks positions per tile and rows of the reduced axis per chunk")
        return ir.TileLoop(var, block, size, buffers, tuple(body), row_shape=self.row_shape,
                           plane_rank=self.plane_rank, box=self.box, span=self.o.span(s))

    def plane_rank_for(self, extent: tuple[str, ...], node) -> int:
        """A tile loop over a split of N * C is a plane loop when tensors [N, C, *spatial] exist."""
        ranks = {len(p.shape) - len(extent) for p in self.params.values() if isinstance(p, ir.TensorParam)
                 and len(p.shape) > len(extent) and len(p.shape) >= 3 and tuple(p.shape[:len(extent)]) == extent}
        if not ranks:
            return 0
        if len(ranks) > 1 or not 1 <= min(ranks) <= 3:
            raise self.err("UNSUPPORTED", f"plane tiles over {' * '.join(extent)} need 1 to 3 trailing spatial dims, "
                           "the same for every tensor", node, 'e.g. x: Tensor[T, "N, C, H, W"] with split(N * C)')
        return next(iter(ranks))

    def row_shape_for(self, extent: tuple[str, ...], node) -> tuple[str, str] | None:
        """A tile loop over a split of B is a row loop when tensors [B, D] exist; with `split(N * C)`,
        tensors [N, C, H, W] are N*C rows of H*W. Returns ("N * C", "H * W")."""
        k = len(extent)
        shapes = {p.shape[k:] for p in self.params.values() if isinstance(p, ir.TensorParam)
                  and len(p.shape) > k and p.shape[:k] == extent}
        if not shapes:
            return None
        if len(shapes) > 1 and all(len(sh) >= 2 for sh in shapes):
            return None  # [N, C, H, W] -> [N, C, OH, OW]: plane tiles (pooling), not rows
        if len(shapes) > 1:
            raise self.err("INDEX", f"row tiles over {' * '.join(extent)} need one row shape; tensors have rows "
                           f"{', '.join(str(list(s)) for s in sorted(shapes, key=str))}", node)
        row = next(iter(shapes))
        if not all(isinstance(d, str) for d in row):
            raise self.err("UNSUPPORTED", "the row dimensions of a tensor must be shape symbols", node)
        return " * ".join(extent), " * ".join(row)

    def is_row_tensor(self, p: ir.TensorParam) -> bool:
        k = len(self.split_extent)
        return len(p.shape) > k and p.shape[:k] == self.split_extent

    def tile_stmt(self, st: Tree, tile: str) -> ir.Stmt:
        if st.data == "aug_assign" and isinstance(st.children[0], Tree):
            return slot_accumulate(self, st, tile)
        if st.data == "aug_assign":
            return self.accumulate(st.children[0], st, tile, "add", st.children[1])
        if st.data == "assign" and str(st.children[0]) in self.kscalars:
            return self.accumulate_minmax(st, tile)
        if st.data == "assign":
            name_tok, value = st.children
            name = str(name_tok)
            if name in self.params or name in self.symbols or name in self.loops or name in OPS or name in CALLABLE \
                    or name in self.slot_accs:
                raise self.err("DUPLICATE-NAME", f"cannot assign to '{name}': it names a parameter, loop, op or "
                               "accumulator",
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
            if layout is ir.Layout.PLANE:
                layout = ir.Layout.POOLED  # plane loops store pooled planes (the output's spatial dims)
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
                        ir.Layout.FLAT: "a flat tile", ir.Layout.PLANE: "input planes",
                        ir.Layout.POOLED: "pooled planes", ir.Layout.BOX: "an unreduced box"}
                raise self.err("TYPE", f"storing {what[value.type.layout]} into {what[layout]} of '{tensor}'", pos[1],
                               "reduce rows with sum/max/min/mean(v, axis=1) to get one value per row"
                               if layout is ir.Layout.COL else
                               f"reduce the box over its extra axis first: sum(v, axis={self.box[0]})"
                               if value.type.layout is ir.Layout.BOX else
                               "store max_pool(...) or avg_pool(...) of a loaded plane"
                               if layout is ir.Layout.POOLED else None)
            return ir.Store(tensor, index, value, self.o.span(st))
        if st.data == "for_stmt":
            raise self.err("KERNEL-STRUCTURE", "loops inside a tile loop are not supported", st)
        raise self.err("KERNEL-STRUCTURE", f"unexpected statement '{st.data}'", st)

    def accumulate(self, name_tok: Token, st: Tree, tile: str, combine: str, rhs) -> ir.Accumulate:
        """`st` updates accumulator `name_tok` with the reduction `rhs` (sum/max/min of a tile)."""
        name = str(name_tok)
        if name in self.slot_accs:
            raise self.err("INDEX", f"'{name}' has one value per slot: {name}[{tile}] += sum(v, axis=1)", name_tok)
        if name not in self.acc_names:
            raise self.err("UNDEFINED-NAME", f"'{name}' is not an accumulator", name_tok,
                           f"declare it before the split loop: {name} = 0.0")
        if name in self.combined:
            raise self.err("KERNEL-STRUCTURE", f"accumulator '{name}' was already combined by an earlier split loop",
                           name_tok, "declare a new accumulator for this loop")
        reducer = {"add": "sum", "max": "max", "min": "min"}[combine]
        ok = (isinstance(rhs, Tree) and rhs.data == "call" and self.call_name(rhs) == reducer
              and len(rhs.children) == 2 and not (isinstance(rhs.children[1], Tree) and rhs.children[1].data == "kwarg"))
        if not ok:
            form = {"add": f"{name} += sum(v)", "max": f"{name} = max({name}, max(v))",
                    "min": f"{name} = min({name}, min(v))"}[combine]
            raise self.err("UNSUPPORTED", f"an accumulator is updated with {form}", rhs,
                           "reduce the tile to one value with sum/max/min(v); scale the total after the loop")
        was_constant = name in self.constants
        value = self.expr(rhs.children[1], tile)
        if name in self.constants and not was_constant:  # read in its own update
            raise self.err("KERNEL-STRUCTURE", f"accumulator '{name}' is read before its split loop has ended", st,
                           "its total across cores exists only after the loop that accumulates it")
        if value.type.kind is not ir.Kind.TILE or value.type.dtype is DType.BOOL:
            raise self.err("TYPE", f"{reducer}(v) reduces a tile value", rhs.children[1])
        if value.type.layout is ir.Layout.ROW:
            raise self.err("TYPE", f"{reducer}(v) of a row vector would count it once per row tile", rhs.children[1])
        if self.box:
            raise self.err("UNSUPPORTED", "accumulators are not supported in a loop over boxes (a reduction over a "
                           "non-last dim)", name_tok, "store the reduced values, then reduce them in a second kernel")
        if value.type.dtype not in (DType.F32, DType.F16):
            raise self.err("DTYPE-UNSUPPORTED", f"accumulating {value.type.dtype} values is not supported",
                           rhs.children[1], "cast(v, f32) first")
        if name in self.constants:
            raise self.err("KERNEL-STRUCTURE", f"'{name}' is read as a constant before this update, so it is not an "
                           "accumulator", name_tok, "an accumulator is read only after the split loop that updates it; "
                           "declare a new one for this loop")
        if combine == "add" and value.type.dtype is DType.F16:  # an f16 sum per tile would round at the compiler's
            # tile boundaries: the total is the f32 sum of the values, whatever the tiling
            value = ir.Op("cast", (value,), ir.ValType(ir.Kind.TILE, DType.F32, value.type.layout), value.span)
        self.phase_accs.add(name)
        return ir.Accumulate(name, combine, REDUCTIONS[reducer], value, self.o.span(st))

    def accumulate_minmax(self, st: Tree, tile: str) -> ir.Accumulate:
        name_tok, value = st.children
        name = str(name_tok)
        if name not in self.acc_names and name not in self.constants:
            raise self.err("DUPLICATE-NAME", f"cannot assign to '{name}' inside a tile loop: it is a kernel-scope "
                           "scalar", name_tok)
        call_ok = isinstance(value, Tree) and value.data == "call" and self.call_name(value) in ("max", "min")
        if call_ok:
            pos, kw = self.call_args(value)
            first = pos[0] if pos else None
            if len(pos) == 2 and not kw and isinstance(first, Tree) and first.data == "name" \
                    and str(first.children[0]) == name:
                return self.accumulate(name_tok, st, tile, self.call_name(value), pos[1])
        raise self.err("UNSUPPORTED", f"accumulator '{name}' is updated with {name} += sum(v), "
                       f"{name} = max({name}, max(v)) or {name} = min({name}, min(v))", value)

    def slice_of(self, e, tile: str) -> tuple[str, ir.TileIndex, ir.Layout]:
        if self.cube is not None:
            return cube_slice(self, e, self.cube)
        if not (isinstance(e, Tree) and e.data == "subscript"):
            raise self.err("INDEX", "expected a tensor slice like x[t]", e)
        name_tok, *idx = e.children
        name = str(name_tok)
        p = self.tensor_param(name_tok)
        is_tile = [isinstance(i, Tree) and i.data == "name" and str(i.children[0]) == tile for i in idx]
        is_full = [isinstance(i, Tree) and i.data == "full_slice" for i in idx]
        rows = self.row_shape
        if self.box:
            return box_slice(self, e, tile, p, idx)
        if self.plane_rank and len(idx) == 1 and is_tile[0]:
            if len(p.shape) != len(self.split_extent) + self.plane_rank or \
                    tuple(p.shape[:len(self.split_extent)]) != self.split_extent:
                raise self.err("INDEX", f"'{name}[{tile}]' in a plane loop needs a tensor "
                               f"[{', '.join(self.split_extent)}, ...] with {self.plane_rank} spatial dims; "
                               f"'{name}' has shape {list(p.shape)}", e)
            return name, ir.TileIndex(tile, False, self.o.span(idx[0])), ir.Layout.PLANE
        if len(idx) == 1 and is_tile[0] and len(p.shape) == 1:
            if rows is None:
                return name, ir.TileIndex(tile, False, self.o.span(idx[0])), ir.Layout.FLAT
            k = len(p.shape)
            if p.shape != self.split_extent and len(self.split_extent) > k and p.shape == self.split_extent[-k:]:
                # a per-channel tensor: rows n*C + c read w[c] (e.g. batch-norm statistics)
                period = " * ".join(map(str, p.shape))
                return name, ir.TileIndex(tile, False, self.o.span(idx[0]), period), ir.Layout.COL
            if " * ".join(map(str, p.shape)) != rows[0]:
                raise self.err("INDEX", f"'{name}[{tile}]' in a row loop needs a tensor over the rows ({rows[0]}); "
                               f"'{name}' has shape {list(p.shape)}", e)
            return name, ir.TileIndex(tile, False, self.o.span(idx[0])), ir.Layout.COL
        if len(idx) == 2 and is_tile[0] and is_full[1] and rows is not None and self.is_row_tensor(p):
            return name, ir.TileIndex(tile, True, self.o.span(idx[0])), ir.Layout.ROWS
        if len(idx) == 1 and is_full[0] and len(p.shape) == 1 and rows is not None:
            if " * ".join(map(str, p.shape)) != rows[1]:
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

    def tensor_param(self, tok) -> ir.TensorParam:
        """The tensor parameter `tok` names, or UNDEFINED-NAME with the closest tensor name."""
        p = self.params.get(str(tok))
        if not isinstance(p, ir.TensorParam):
            raise self.undefined(tok, [n for n, q in self.params.items() if isinstance(q, ir.TensorParam)],
                                 "a tensor parameter")
        return p

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
            if d == "subscript" and str(e.children[0]) in self.slot_accs:
                return slot_read(self, e, tile)
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
        if name in self.kscalars:
            if name in self.phase_accs:
                raise self.err("KERNEL-STRUCTURE", f"accumulator '{name}' is read before its split loop has ended",
                               tok, "its total across cores exists only after the loop that accumulates it")
            if name in self.acc_names and name not in self.combined:  # no loop updated it yet: a constant
                self.acc_names.discard(name)
                self.constants.add(name)
            return ir.Ref(name, self.kscalars[name], span)
        if name in self.slot_accs:
            raise self.err("INDEX", f"'{name}' holds one value per slot; read it per row: {name}[r]", tok)
        if name in self.symbols:
            return ir.Ref(name, ir.scalar_of(DType.I32), span)  # a shape symbol's runtime value
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
            if base.type.kind is ir.Kind.SCALAR and exp_node.type.kind is ir.Kind.SCALAR:
                return self.op("pow", [base, exp_node], e)  # scalars: any exponent (torch.pow semantics)
            raise self.err("UNSUPPORTED", "'**' needs a constant exponent on a tile", e.children[1],
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
            if not tile and self.cube is None:  # kernel scope: no tile to index
                raise self.err("INDEX", "outside the split loops, a load is a statement of its own: s = load(x[0])",
                               e, "name the element, then use the name in expressions")
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
        if name == "gather":
            return self.gather(pos, kw, e, tile)
        if name in REDUCTIONS and "axis" in kw:
            return self.reduction(name, pos, kw, e, tile)
        if name in SCANS:
            return self.scan(name, pos, kw, e, tile)
        if name in POOLS:
            return self.pool(name, pos, kw, e, tile)
        if kw:
            raise self.err("ARGS", f"{name}() takes no keyword arguments", e)
        if name in ("sum", "mean", "prod"):
            raise self.err("ARGS", f"{name}() needs axis=1: {name}(v, axis=1)", e)
        if name == "cast":
            if len(pos) != 2:
                raise self.err("ARGS", "cast takes a value and a dtype", e, "cast(x, f16)")
            target = pos[1]
            if not (isinstance(target, Tree) and target.data == "name"):
                raise self.err("ARGS", "cast's second argument is a dtype name", target)
            value = self.expr(pos[0], tile)
            dt = self.dtype(target.children[0])
            self.no_planes([value], e)
            if value.type.dtype is DType.BOOL:
                raise self.err("TYPE", "cannot cast a mask", pos[0], "use select(mask, 1.0, 0.0)")
            if isinstance(value, ir.Const):
                return ir.Const(value.value, ir.scalar_of(dt), value.span)
            if self.box and value.type.dtype is dt:  # box loops drop identity casts (e.g. cast(x, f32) with T=f32)
                return value
            return ir.Op("cast", (value,), ir.ValType(value.type.kind, dt, value.type.layout), self.o.span(e))
        return self.op(name, [self.expr(a, tile) for a in pos], e)

    def axis_value(self, axis) -> float | int | None:
        value = self.number(axis.children[0]) if isinstance(axis, Tree) and axis.data == "number" else None
        if isinstance(axis, Tree) and axis.data == "neg" and isinstance(axis.children[0], Tree):
            value = -self.number(axis.children[0].children[0])
        return value

    def reduction(self, name: str, pos: list, kw: dict, e: Tree, tile: str) -> ir.Expr:
        if len(pos) != 1 or set(kw) != {"axis"}:
            raise self.err("ARGS", f"{name}(v, axis=1) takes one value and axis=", e)
        axis = kw["axis"]
        v = self.expr(pos[0], tile)
        if v.type.kind is ir.Kind.TILE and v.type.layout is ir.Layout.BOX:
            if v.type.dtype not in OPS[REDUCTIONS[name]].dtypes:
                raise self.err("DTYPE-UNSUPPORTED", f"'{name}' does not support {v.type.dtype}", e)
            return box_reduction(self, name, REDUCTIONS[name], v, axis, self.o.span(e))
        if self.axis_value(axis) not in (1, -1):
            raise self.err("UNSUPPORTED", "reductions run over the last axis of a row tile: axis=1", axis)
        if v.type.kind is not ir.Kind.TILE or v.type.layout is not ir.Layout.ROWS:
            raise self.err("TYPE", f"{name}(v, axis=1) needs whole rows (a value loaded with x[r, :])", pos[0],
                           "split the rows of a 2-D tensor: for blk in split(B, cores=AIV)")
        op = REDUCTIONS[name]
        if v.type.dtype not in OPS[op].dtypes:
            raise self.err("DTYPE-UNSUPPORTED", f"'{name}' does not support {v.type.dtype}", e)
        return ir.Op(op, (v,), ir.tile_of(v.type.dtype, ir.Layout.COL), self.o.span(e))

    def gather(self, pos: list, kw: dict, e: Tree, tile: str) -> ir.Expr:
        if len(pos) != 2 or kw:
            raise self.err("ARGS", "gather takes whole rows and a per-row column index", e, "gather(xt, load(idx[r]))")
        rows, index = self.expr(pos[0], tile), self.expr(pos[1], tile)
        if rows.type.kind is not ir.Kind.TILE or rows.type.layout is not ir.Layout.ROWS:
            raise self.err("TYPE", "gather's first argument is whole rows (a value loaded with x[r, :])", pos[0])
        if index.type.kind is not ir.Kind.TILE or index.type.layout is not ir.Layout.COL \
                or index.type.dtype not in (DType.I32, DType.I64):
            raise self.err("TYPE", "gather's index is one integer per row (i32 or i64, loaded with idx[r])", pos[1])
        if rows.type.dtype not in OPS["gather"].dtypes:
            raise self.err("DTYPE-UNSUPPORTED", f"gather does not support {rows.type.dtype}", pos[0])
        return ir.Op("gather", (rows, index), ir.tile_of(rows.type.dtype, ir.Layout.COL), self.o.span(e))
    def flag(self, v, node) -> bool:
        if isinstance(v, Tree) and v.data == "name" and str(v.children[0]) in ("True", "False"):
            return str(v.children[0]) == "True"
        raise self.err("ARGS", "expected True or False", v, "e.g. cumsum(v, axis=1, reverse=True)")

    def scan(self, name: str, pos: list, kw: dict, e: Tree, tile: str) -> ir.Expr:
        """cumsum / cumprod(v, axis=1[, reverse=True][, exclusive=True]) along each row of a row tile."""
        if len(pos) != 1 or "axis" not in kw or set(kw) - {"axis", "reverse", "exclusive"}:
            raise self.err("ARGS", f"{name}(v, axis=1) takes one value, axis= and optionally reverse=, exclusive=", e,
                           f"{name}(v, axis=1, reverse=False, exclusive=False)")
        if self.axis_value(kw["axis"]) not in (1, -1):
            raise self.err("UNSUPPORTED", "scans run along the last axis of a row tile: axis=1", kw["axis"])
        reverse = self.flag(kw["reverse"], e) if "reverse" in kw else False
        exclusive = self.flag(kw["exclusive"], e) if "exclusive" in kw else False
        v = self.expr(pos[0], tile)
        if v.type.kind is not ir.Kind.TILE or v.type.layout is not ir.Layout.ROWS:
            raise self.err("TYPE", f"{name}(v, axis=1) needs whole rows (a value loaded with x[r, :])", pos[0],
                           "split the rows of a 2-D tensor: for blk in split(B, cores=AIV)")
        op = scan_op(name, reverse, exclusive)
        if v.type.dtype not in OPS[op].dtypes:
            raise self.err("DTYPE-UNSUPPORTED", f"'{name}' does not support {v.type.dtype}", e,
                           f"supported: {', '.join(sorted(map(str, OPS[op].dtypes)))}; cast first")
        return ir.Op(op, (v,), v.type, self.o.span(e))

    def pool_param(self, v, what: str, tile: str) -> ir.Expr:
        """kernel= / stride= / padding=: an integer literal or an integer scalar parameter."""
        x = self.expr(v, tile)
        if isinstance(x, ir.Const) and float(x.value).is_integer():
            return ir.Const(int(x.value), ir.scalar_of(DType.I32), x.span)
        if isinstance(x, ir.Ref) and x.type.kind is ir.Kind.SCALAR and not x.type.dtype.is_float:
            return x
        raise self.err("TYPE", f"{what}= takes an integer literal or an integer scalar parameter", v,
                       f"declare it as a kernel parameter, e.g. {what}: i32 = 2")

    def pool(self, name: str, pos: list, kw: dict, e: Tree, tile: str) -> ir.Expr:
        """max_pool / avg_pool(plane, kernel=K, stride=S, padding=P[, dilation=D]) over a plane tile's spatial dims."""
        allowed = {"kernel", "stride", "padding"} | ({"dilation"} if name == "max_pool" else set())
        if len(pos) != 1 or "kernel" not in kw or set(kw) - allowed:
            raise self.err("ARGS", f"{name} takes one loaded plane and kernel=, optionally "
                           f"{', '.join(f'{a}=' for a in sorted(allowed - {'kernel'}))}", e,
                           f"{name}(xt, kernel=kernel_size, stride=stride, padding=padding)"
                           + ("" if name == "max_pool" else "; avg_pool has no dilation (PyTorch neither)"))
        v = self.expr(pos[0], tile)
        if v.type.kind is not ir.Kind.TILE or v.type.layout is not ir.Layout.PLANE:
            raise self.err("TYPE", f"{name} needs a loaded plane (load(x[p]) of a [N, C, ...] tensor in a loop over "
                           "split(N * C))", pos[0], "for blk in split(N * C, cores=AIV): for p in tile(blk): "
                           "xt = load(x[p])")
        kernel = self.pool_param(kw["kernel"], "kernel", tile)
        stride = self.pool_param(kw["stride"], "stride", tile) if "stride" in kw else kernel  # PyTorch default
        padding = self.pool_param(kw["padding"], "padding", tile) if "padding" in kw else \
            ir.Const(0, ir.scalar_of(DType.I32), self.o.span(e))
        dilation = self.pool_param(kw["dilation"], "dilation", tile) if "dilation" in kw else \
            ir.Const(1, ir.scalar_of(DType.I32), self.o.span(e))
        if v.type.dtype not in OPS[name].dtypes:
            raise self.err("DTYPE-UNSUPPORTED", f"'{name}' does not support {v.type.dtype}", e,
                           f"supported: {', '.join(sorted(map(str, OPS[name].dtypes)))}")
        return ir.Op(name, (v, kernel, stride, padding, dilation), ir.tile_of(v.type.dtype, ir.Layout.POOLED),
                     self.o.span(e))

    def no_planes(self, args: list[ir.Expr], node) -> None:
        if any(a.type.layout in (ir.Layout.PLANE, ir.Layout.POOLED) for a in args if a.type.kind is ir.Kind.TILE):
            raise self.err("UNSUPPORTED", "plane tiles only feed max_pool/avg_pool, and pooled planes are only "
                           "stored", node, "store(y[p], max_pool(load(x[p]), kernel=k, stride=s, padding=pad))")

    def layout_of(self, args: list[ir.Expr], node, same: bool = False) -> ir.Layout:
        """Broadcasting: rows x D absorbs per-row values and row vectors; flat tiles mix with nothing else."""
        layouts = {a.type.layout for a in args if a.type.kind is ir.Kind.TILE}
        if not layouts:
            return ir.Layout.FLAT
        if len(layouts) == 1:
            return next(iter(layouts))
        if ir.Layout.BOX in layouts:
            raise self.err("TYPE", "a box (load(x[t]) with the extra axis) combines only with boxes and scalars", node,
                           f"reduce it first, e.g. sum(v, axis={self.box[0]}), then combine the per-position values")
        if same:
            raise self.err("UNSUPPORTED", "comparisons and select need operands of one shape (all whole rows, or all "
                           "per-row values)", node)
        if ir.Layout.ROWS in layouts and ir.Layout.FLAT not in layouts:
            return ir.Layout.ROWS
        raise self.err("UNSUPPORTED", "a per-row value and a row vector only combine with whole rows", node)

    def op(self, name: str, args: list[ir.Expr], node) -> ir.Expr:
        info = OPS[name]
        span = self.o.span(node)
        self.no_planes(args, node)
        if len(args) != info.arity:
            raise self.err("ARGS", f"{name} takes {info.arity} argument(s), got {len(args)}", node)
        if info.rule is Rule.SELECT and all(x.type.kind is ir.Kind.SCALAR for x in args) \
                and args[0].type.dtype is DType.BOOL:  # a scalar choice (kernel-scope values, attributes)
            mask, a, b = args
            a, b, dtype, _ = self.unify([a, b], node, None)
            return ir.Op("select", (mask, a, b), ir.scalar_of(dtype), span)
        if info.rule is Rule.SELECT:
            mask, a, b = args
            if mask.type.kind is not ir.Kind.TILE or mask.type.dtype is not DType.BOOL:
                raise self.err("TYPE", "select's first argument must be a comparison mask", node,
                               "e.g. select(x > 0.0, x, 0.0)")
            fallback = self.mask_source_dtype(mask)
            a, b, dtype, kind = self.unify([a, b], node, fallback)
            if dtype not in info.dtypes:
                raise self.err("DTYPE-UNSUPPORTED", f"select of {dtype} tiles is not supported: AscendC Select "
                               "moves f16 and f32 only", node, "cast(v, f32) the values, select, and cast back")
            layout = self.layout_of([mask, a, b], node, same=True)
            return ir.Op("select", (mask, a, b), ir.tile_of(dtype, layout), span)
        for a in args:
            if a.type.dtype is DType.BOOL:
                raise self.err("TYPE", f"a comparison mask cannot be used in '{name}'", node,
                               "masks only feed select(mask, a, b)")
        unified = self.unify(args, node, None, promote=name == "div")
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
            if kind is not ir.Kind.TILE:  # scalars: only a scalar select can use the result
                return ir.Op(name, tuple(args2), ir.scalar_of(DType.BOOL), span)
            return ir.Op(name, tuple(args2), ir.tile_of(DType.BOOL, self.layout_of(args2, node, same=True)), span)
        layout = self.layout_of(args2, node) if kind is ir.Kind.TILE else ir.Layout.FLAT
        return ir.Op(name, tuple(args2), ir.ValType(kind, dtype, layout), span)

    def mask_source_dtype(self, mask: ir.Expr) -> DType | None:
        if isinstance(mask, ir.Op):
            return mask.args[0].type.dtype
        if isinstance(mask, ir.Ref):
            return self.mask_dtypes.get(mask.name)
        return None

    def unify(self, args: list[ir.Expr], node, fallback: DType | None, promote: bool = False):
        """Give literals and scalar parameters the dtype of the tile operands; tiles must agree. Scalars alone
        are f32 when any of them is a float (or `promote`: true division of integers), else integers."""
        tiles = [a for a in args if a.type.kind is ir.Kind.TILE]
        if tiles:
            dtype = tiles[0].type.dtype
            for t in tiles[1:]:
                if t.type.dtype is not dtype:
                    raise self.err("DTYPE-MISMATCH", f"operands have dtypes {dtype} and {t.type.dtype}", node,
                                   f"convert one side explicitly, e.g. cast(v, {dtype})")
            kind = ir.Kind.TILE
        else:  # scalars: float if any operand is (a float value or a literal written with a fraction), as in Python
            values = [a for a in args if not isinstance(a, ir.Const) and a.type.dtype is not DType.BOOL]
            floats = [a for a in values if a.type.dtype.is_float]
            float_literal = any(isinstance(a, ir.Const) and isinstance(a.value, float) for a in args)
            if floats:
                dtype = floats[0].type.dtype
            elif values:
                dtype = DType.F32 if float_literal or promote else values[0].type.dtype
            else:
                dtype = fallback or DType.F32
            kind = ir.Kind.SCALAR
        if not dtype.is_float:
            for a in args:
                if isinstance(a, ir.Const) and not float(a.value).is_integer():
                    raise DslError.at("TYPE", f"the literal {a.value} meets {dtype} values and would be truncated",
                                      a.span, "cast the integer operand to a float dtype first, e.g. cast(v, f32)")
        out = []
        for a in args:
            if a.type.kind is ir.Kind.SCALAR and a.type.dtype is not dtype:
                a = ir.Const(a.value, ir.scalar_of(dtype), a.span) if isinstance(a, ir.Const) else \
                    ir.Op("cast", (a,), ir.scalar_of(dtype), a.span)
            out.append(a)
        return (*out, dtype, kind)
