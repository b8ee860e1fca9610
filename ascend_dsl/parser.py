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

from . import autosplit, ir, row_fallback
from .diagnostics import DslError, Span, register_source
from .diagnostics import ErrorCode as E
from .dtypes import BY_NAME, DType
from .intrinsics import INTRINSICS, Call
from .ops import (
    BINARY_OPERATORS,
    CALLABLE,
    COMPARE_OPERATORS,
    NOT_LOWERED,
    OPS,
    POOLS,
    POW_EXPONENTS,
    REDUCTIONS,
    RESIZE_CALLS,
    Rule,
)
from .parser_box import box_for, box_slice
from .parser_broadcast import broadcast_operands, broadcast_slice, select_operands
from .parser_conv import conv_loop, is_conv_split
from .parser_cube import cube_loop, cube_slice, is_cube_split
from .parser_index import is_index_subscript, row_gather_slice
from .parser_select import selected_tables
from .parser_slots import finish, slot_accumulate, slot_decl, slot_read
from .parser_workspace import workspace_decl
from .scope import LoopVar, Scope
from .views import view_decl

CORE_KINDS = ("AIV", "AIC")



def is_builtin_call(name: str) -> bool:
    """A name the DSL calls (exp, sum, load, cast, ...): it cannot name a value. Op names written only as
    operators (neg, add, pow) are free."""
    return name in CALLABLE or name in INTRINSICS or name in ("zeros", "split", "tile")

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
    return DslError.at(E.SYNTAX, msg, span, hint)


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
        raise DslError.at(E.SYNTAX, f"unknown decorator '@{deco_name}'", origin.span(decorator),
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
    return DslError.at(E.UNKNOWN_DTYPE, f"unknown dtype '{tok}'", origin.span(tok),
                       f"did you mean '{close[0]}'?" if close else f"dtypes are {', '.join(BY_NAME)}")


def load_file(path: str | Path) -> list[KernelSource]:
    """Kernels of a `.adsl` file, or of the `@kernel` functions of a `.py` file (read, never imported)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise DslError.at(E.IO, f"cannot read {path}: {e.strerror}", None) from None
    if path.suffix == ".py":
        register_source(str(path), text)
        return [k for snippet, line, col in extract_python_kernels(text, str(path)) for k in
                parse_text(snippet, str(path), line, col)]
    kernels = parse_text(text, str(path))
    if not kernels:
        raise DslError.at(E.NO_KERNEL, f"{path} defines no @kernel function", Span(str(path), 1, 1, 1, 2))
    return kernels


def extract_python_kernels(text: str, file: str = "<python>") -> list[tuple[str, int, int]]:
    """(dedented source, line offset, col offset) of every @kernel function in Python source, in file order."""
    try:
        module = ast.parse(text)
    except SyntaxError as e:
        raise DslError.at(E.SYNTAX, f"not valid Python: {e.msg}", Span(file, e.lineno or 0, e.offset or 0,
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


def _check_load_or_store(body: tuple[ir.Stmt, ...], workspaces: set[str]) -> None:
    """A tensor is loaded or stored, not both (its input and output would alias in GM); a workspace tensor is
    stored by one stage and loaded by later ones (lowering/passes/plan_stages.py checks that order)."""
    loaded = set()
    for s in ir.walk(body):
        if isinstance(s, ir.ScalarLoad):
            loaded.add(s.tensor)
        for e in ir.walk_expr(s.value) if isinstance(getattr(s, "value", None), (ir.Op, ir.Load)) else ():
            if isinstance(e, ir.Load) and not e.index.acc:
                loaded.add(e.tensor)
    for s in ir.walk(body):
        if isinstance(s, (ir.Store, ir.ScalarStore)) and s.tensor in loaded and s.tensor not in workspaces:
            raise DslError.at(E.KERNEL_STRUCTURE, f"'{s.tensor}' is both loaded and stored", s.span,
                              "a tensor is an input or an output: store into another tensor")


# ----------------------------------------------------------------------------- typed IR builder



def _fold_ieee(info, values: list) -> float | None:
    """A float constant where Python's math raises and PyTorch does not (exp(1000.0) = inf, log(0.0) = -inf,
    sqrt(-1.0) = nan, 1.0 / 0.0 = inf): the op's PyTorch reference on float64 scalars, the IEEE value the
    interpreter and the device compute too. None when that fails as well."""
    import torch  # only for constants math cannot fold

    try:
        return float(info.ref(*[torch.tensor(float(v), dtype=torch.float64) for v in values]))
    except (RuntimeError, TypeError, ValueError, ZeroDivisionError):
        return None

class _Builder:
    def __init__(self, origin: Origin, rows: bool = False):
        self.o = origin
        self.rows = rows  # cut a matmul epilogue that reduces whole rows into launches (row_fallback.py)
        self.row_fallback = False  # the body is one such split: build its launches form as the fallback
        self.scope = Scope()
        self.workspaces: list[ir.TensorParam] = []  # `p = workspace(...)` declarations (parser_workspace.py)

    def err(self, code: str, msg: str, node, hint: str | None = None) -> DslError:
        return DslError.at(code, msg, self.o.span(node), hint)

    # --- kernel and params
    def kernel(self, k: Tree, options, chosen: dict) -> ir.Kernel:
        for name, opts in options:
            pick = chosen.get(name, opts[0])
            pick = BY_NAME.get(pick, pick) if isinstance(pick, str) else pick
            if pick not in opts:
                raise self.err(E.UNKNOWN_DTYPE, f"dtype variable {name} allows {', '.join(map(str, opts))}, not {pick}",
                               k.children[0])
            self.scope.type_args[name] = pick
        unknown = set(chosen) - {n for n, _ in options}
        if unknown:
            raise self.err(E.UNKNOWN_DTYPE, f"kernel has no dtype variable {', '.join(sorted(unknown))}", k.children[0],
                           "declare it as @kernel(T=[f32, f16])")
        rest = k.children[2:]
        params_tree = next((c for c in rest if isinstance(c, Tree) and c.data == "params"), None)
        suite = rest[-1]
        params = tuple(self.param(p) for p in (params_tree.children if params_tree else ()))
        body = self.kernel_body(suite)
        _check_load_or_store(body, {w.name for w in self.workspaces})
        params += tuple(self.workspaces)
        fallback, miss = None, ""
        if self.row_fallback:  # the same text cut into launches, which the host runs when a row does not fit
            try:
                fallback = _Builder(self.o, rows=True).kernel(k, options, chosen)
            except DslError as e:
                miss = "; ".join(f"{d.code}: {d.message}" for d in e.diagnostics)
        return ir.Kernel(str(k.children[1]), params, body, tuple(self.scope.type_args.items()), tuple(options),
                         span=self.o.span(k), fallback=fallback, fallback_miss=miss)

    def dtype(self, tok) -> DType:
        name = str(tok)
        if name in self.scope.type_args:
            return self.scope.type_args[name]
        if name in BY_NAME:
            return BY_NAME[name]
        raise _unknown_dtype(tok, self.o)

    def param(self, p: Tree) -> ir.Param:
        name_tok, ann, *default = p.children
        name = str(name_tok)
        if name in self.scope.params:
            raise self.err(E.DUPLICATE_NAME, f"parameter '{name}' is declared twice", name_tok)
        if ann.data == "tensor_type":
            head = ".".join(str(t) for t in ann.children[0].children)
            if head not in ("Tensor", "ascend_dsl.Tensor"):
                raise self.err(E.TYPE, f"unknown annotation '{head}[...]'", ann, 'write Tensor[f32, "N"]')
            dtype = self.dtype(ann.children[1])
            shape = self.shape(ann.children[2])
            if default:
                raise self.err(E.TYPE, "tensor parameters cannot have defaults", default[0])
            param: ir.Param = ir.TensorParam(name, dtype, shape, span=self.o.span(p))
            self.scope.symbols.update(d for d in shape if isinstance(d, str))
        else:
            dtype = self.dtype(ann.children[0])
            value = self.number(default[0]) if default else None
            param = ir.ScalarParam(name, dtype, value, self.o.span(p))
        self.scope.params[name] = param
        return param

    def shape(self, tok: Token) -> tuple[str | int, ...]:
        text = str(tok)[1:-1]
        dims: list[str | int] = []
        for part in text.replace(",", " ").split():
            if part.isdigit():
                dims.append(int(part))
            elif part.isidentifier():
                if part in self.scope.params:
                    raise self.err(E.DUPLICATE_NAME, f"shape symbol '{part}' clashes with a parameter", tok)
                dims.append(part)
            else:
                raise self.err(E.TYPE, f"bad shape dimension '{part}'", tok, 'shapes are names or integers, e.g. "N"')
        if not dims:
            raise self.err(E.TYPE, "a tensor needs at least one dimension", tok, 'e.g. Tensor[f32, "N"]')
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
        # a conv or matmul split whose vector block its cube kernel cannot run: cut into launches (autosplit.py)
        stmts = self.statements(suite)
        self.row_fallback = not self.rows and row_fallback.wanted(self, stmts)
        for s in autosplit.rewrite(self, stmts, self.rows):
            cube = s.data == "for_stmt" and is_cube_split(self, s)
            conv = cube and is_conv_split(self, s)
            # with workspace tensors, loops of different kinds become launches (lowering/passes/partition_launches.py)
            launches = bool(self.workspaces)
            after_stages = self.workspaces or any(isinstance(o, ir.CubeLoop) for o in out)
            if not launches and (any(isinstance(o, ir.ConvLoop) for o in out) or (conv and after_stages)):
                raise self.err(E.UNSUPPORTED, "a convolution split is the only loop of its kernel", s,
                               "write the work after the convolution as its vector block, or store it in a "
                               "workspace tensor that a later split loop reads (docs/language.md, \"Launches\")")
            if cube:
                if not launches and any(isinstance(o, ir.SplitLoop) for o in out):
                    raise self.err(E.UNSUPPORTED, "a cube split follows only cube splits in its kernel", s,
                                   "write the vector work as the matmul's epilogue (with vector:)")
                out.append(conv_loop(self, s) if conv else cube_loop(self, s))
                continue
            if not launches and any(isinstance(o, ir.CubeLoop) for o in out) and not self.workspace_assign(s):
                raise self.err(E.UNSUPPORTED, "after a cube split, only further cube splits (stages joined by "
                               "workspace tensors) are lowered", s,
                               "write the vector work as the matmul's epilogue (with vector:)")
            if s.data == "for_stmt" and self.call_name(s.children[1]) == "split":
                out.append(self.split_loop(s))
            elif s.data == "assign":
                stmt = self.kernel_assign(s)
                if isinstance(stmt, ir.TensorParam):
                    self.workspaces.append(stmt)
                else:
                    out.append(stmt)
            elif s.data == "expr_stmt" and self.call_name(s.children[0]) == "store":
                out.append(self.scalar_store(s))
            else:
                raise self.err(E.KERNEL_STRUCTURE, "a kernel body is a `for ... in split(...)` loop", s,
                               "wrap the work in: for blk in split(N, cores=AIV):")
        if not any(isinstance(s, (ir.SplitLoop, ir.CubeLoop, ir.ConvLoop)) for s in out):
            raise self.err(E.KERNEL_STRUCTURE, "kernel has no split loop", suite,
                           "add: for blk in split(N, cores=AIV):")
        out = finish(self, out)
        unused = [s for s in out if isinstance(s, ir.AccDecl) and s.name not in self.scope.combined]
        return tuple(ir.ScalarAssign(s.name, ir.Const(s.init, ir.scalar_of(DType.F32), s.span), s.span)
                     if s in unused else s for s in out)

    def kernel_assign(self, st: Tree) -> ir.Stmt:
        """`total = 0.0` before a split loop declares an accumulator; `r = sqrt(total)` after one names a
        scalar computed once per core from accumulators, shape symbols and scalar parameters."""
        name_tok, value = st.children
        name = self.bind(name_tok)
        if is_builtin_call(name):
            raise self.err(E.DUPLICATE_NAME, f"'{name}' is the name of the built-in {name}(...) and cannot name a value",
                           name_tok, f"pick another name, e.g. {name}_v")
        if name in self.scope.kscalars or name in self.scope.slot_accs:
            raise self.err(E.DUPLICATE_NAME, f"'{name}' is already defined", name_tok, "pick another name")
        if isinstance(value, Tree) and value.data == "call" and self.call_name(value) == "zeros":
            return slot_decl(self, name, st, value)
        if self.workspace_assign(st):
            return workspace_decl(self, name, st, value)
        if isinstance(value, Tree) and value.data == "call" and self.call_name(value) == "view":
            return view_decl(self, name, st, value)
        if isinstance(value, Tree) and value.data == "call" and self.call_name(value) == "load":
            self.scope.kscalars[name] = ir.scalar_of(DType.F32)
            return ir.ScalarLoad(name, self.element_zero(value, "load(scale[0])"), self.o.span(st))
        e = self.expr(value, "")
        if e.type.kind is not ir.Kind.SCALAR:
            raise self.err(E.TYPE, "kernel-scope values are scalars", value,
                           "tile values live inside a tile loop")
        self.scope.kscalars[name] = ir.scalar_of(DType.F32)
        if isinstance(e, ir.Const):
            self.scope.acc_names.add(name)
            return ir.AccDecl(name, float(e.value), self.o.span(st))
        return ir.ScalarAssign(name, e, self.o.span(st))

    def workspace_assign(self, st: Tree) -> bool:
        """`p = workspace(f16, M, N)`: a GM tensor of the kernel's own (parser_workspace.py)."""
        value = st.children[1] if st.data == "assign" else None
        return isinstance(value, Tree) and value.data == "call" and self.call_name(value) == "workspace"

    def element_zero(self, call: Tree, example: str, target=None) -> str:
        """The tensor of `x[0]`, the only index a kernel-scope load or store takes."""
        if target is None:
            pos, kw = self.call_args(call)
            if len(pos) != 1 or kw:
                raise self.err(E.ARGS, "load takes one tensor element", call, example)
            target = pos[0]
        ok = (isinstance(target, Tree) and target.data == "subscript" and len(target.children) == 2
              and isinstance(target.children[1], Tree) and target.children[1].data == "number"
              and str(target.children[1].children[0]) == "0")
        if not ok:
            raise self.err(E.INDEX, "outside the split loops, load and store take element 0 of a tensor", target,
                           example)
        return self.tensor_param(target.children[0]).name

    def scalar_store(self, st: Tree) -> ir.ScalarStore:
        call = st.children[0]
        pos, kw = self.call_args(call)
        if len(pos) != 2 or kw:
            raise self.err(E.ARGS, "store takes a tensor element and a value", call, "store(loss[0], total / N)")
        tensor = self.element_zero(call, "store(loss[0], total / N)", pos[0])
        value = self.expr(pos[1], "")
        if value.type.kind is not ir.Kind.SCALAR:
            raise self.err(E.TYPE, "a kernel-scope store takes a scalar", pos[1])
        return ir.ScalarStore(tensor, value, self.o.span(st))

    def call_name(self, call: Tree) -> str:
        return str(call.children[0])

    def call_args(self, call: Tree) -> tuple[list, dict]:
        pos, kw = [], {}
        for a in call.children[1:]:
            if isinstance(a, Tree) and a.data == "kwarg":
                key = str(a.children[0])
                if key in kw:
                    raise self.err(E.ARGS, f"argument '{key}' given twice", a)
                kw[key] = a.children[1]
            else:
                if kw:
                    raise self.err(E.ARGS, "positional argument after keyword argument", a)
                pos.append(a)
        return pos, kw

    def bind(self, tok: Token) -> str:
        name = str(tok)
        if name in self.scope.params or name in self.scope.symbols or name in self.scope.loops:
            raise self.err(E.DUPLICATE_NAME, f"'{name}' is already defined", tok)
        return name

    def split_loop(self, s: Tree) -> ir.SplitLoop:
        var_tok, call, suite = s.children
        pos, kw = self.call_args(call)
        if len(pos) != 1 or set(kw) - {"cores"}:
            raise self.err(E.ARGS, "split takes one extent and cores=", call, "split(N, cores=AIV)")
        extent = self.extent(pos[0])
        kind, count = "AIV", None
        if "cores" in kw:
            c = kw["cores"]
            if isinstance(c, Tree) and c.data == "name" and str(c.children[0]) in CORE_KINDS:
                kind = str(c.children[0])
            elif isinstance(c, Tree) and c.data == "number" and str(c.children[0]).isdigit():
                count = int(str(c.children[0]))
                if count < 1:
                    raise self.err(E.ARGS, "cores must be at least 1", c)
            else:
                raise self.err(E.ARGS, "cores= takes AIV, AIC or a positive integer", c)
        var = self.bind(var_tok)
        body = []
        with self.scope.split(var, extent):  # loop variables are scoped to their loop
            for st in self.statements(suite):
                if st.data != "for_stmt" or self.call_name(st.children[1]) != "tile":
                    raise self.err(E.KERNEL_STRUCTURE, "the body of a split loop is a `for ... in tile(...)` loop", st,
                                   f"for t in tile({var}, size=auto, buffers=2):")
                body.append(self.tile_loop(st, var))
        return ir.SplitLoop(var, extent, kind, count, tuple(body), self.o.span(s))

    def extent(self, e) -> tuple[str, ...]:
        if isinstance(e, Tree) and e.data == "name":
            name = str(e.children[0])
            if name not in self.scope.symbols:
                raise self.undefined(e.children[0], self.scope.symbols, "a shape symbol of a tensor parameter")
            return (name,)
        if isinstance(e, Tree) and e.data == "mul":
            return self.extent(e.children[0]) + self.extent(e.children[1])
        raise self.err(E.ARGS, "split extent must be a shape symbol or a product of them", e, "split(N, cores=AIV)")

    def tile_loop(self, s: Tree, block: str) -> ir.TileLoop:
        var_tok, call, suite = s.children
        pos, kw = self.call_args(call)
        if len(pos) != 1 or set(kw) - {"size", "buffers", "chunk"}:
            raise self.err(E.ARGS, "tile takes a block and size=, buffers=, chunk=", call,
                           "tile(blk, size=auto, buffers=2)")
        over = pos[0]
        if not (isinstance(over, Tree) and over.data == "name" and str(over.children[0]) == block):
            raise self.err(E.ARGS, f"tile() must tile the enclosing split variable '{block}'", over)
        size: int | None = None
        if "size" in kw:
            v = kw["size"]
            if isinstance(v, Tree) and v.data == "name" and str(v.children[0]) == "auto":
                size = None
            elif isinstance(v, Tree) and v.data == "number" and str(v.children[0]).isdigit():
                size = int(str(v.children[0]))
                if size <= 0:
                    raise self.err(E.ARGS, "tile size must be positive", v)
            else:
                raise self.err(E.ARGS, "size= takes auto or a positive integer", v)
        buffers = 2
        if "buffers" in kw:
            v = kw["buffers"]
            if not (isinstance(v, Tree) and v.data == "number" and str(v.children[0]).isdigit()):
                raise self.err(E.ARGS, "buffers= takes a positive integer (1 or 2)", v)
            buffers = int(str(v.children[0]))
        chunk: int | None = None
        if "chunk" in kw:
            v = kw["chunk"]
            if not (isinstance(v, Tree) and v.data == "number" and str(v.children[0]).isdigit()
                    and int(str(v.children[0])) > 0):
                raise self.err(E.ARGS, "chunk= takes a positive integer (elements per column chunk)", v)
            chunk = int(str(v.children[0]))
        var = self.bind(var_tok)
        self.scope.loops[var] = LoopVar("tile", block)
        # [N, C, *spatial] tensors under split(N * C): plane tiles when the body pools or resizes, else rows of H*W...
        pools = any(str(c.children[0]) in (*POOLS, *RESIZE_CALLS, "grid_sample") for c in suite.find_data("call"))
        extent = self.scope.split_extent
        shape = ((None if pools else self.row_shape_for(extent, s)) or self.plane_rank_for(extent, s)
                 or box_for(self, extent, s) or ir.FLAT_TILES)
        with self.scope.tile_loop(shape):
            body = [self.tile_stmt(st, var) for st in self.statements(suite)]
        if not any(isinstance(b, (ir.Store, ir.Accumulate, ir.SlotAccumulate)) for b in body):
            raise self.err(E.KERNEL_STRUCTURE, "tile loop stores nothing", s,
                           "write results with store(y[t], value) or accumulate them: total += sum(v)")
        if shape.kind is ir.LoopKind.PLANES and size is not None:
            raise self.err(E.ARGS, "plane tiles are sized at run time: size=auto", call,
                           "the host tiling picks planes (or bands of output rows) per tile from the shapes")
        if shape.kind is ir.LoopKind.BOX and size is not None:
            raise self.err(E.ARGS, "box tiles are sized at run time: size=auto", call,
                           "the host tiling picks positions per tile and rows of the reduced axis per chunk")
        if chunk is not None and shape.kind is not ir.LoopKind.ROWS:
            raise self.err(E.ARGS, "chunk= applies to row tiles (the column chunks of rows longer than UB)",
                           kw["chunk"], "drop chunk=, or tile rows: load(x[r, :])")
        return ir.TileLoop(var, block, size, buffers, tuple(body), shape, span=self.o.span(s), chunk=chunk)

    def plane_rank_for(self, extent: tuple[str, ...], node) -> ir.PlaneTiles | None:
        """A tile loop over a split of N * C is a plane loop when tensors [N, C, *spatial] exist."""
        ranks = {len(p.shape) - len(extent) for p in self.loop_params(node) if isinstance(p, ir.TensorParam)
                 and len(p.shape) > len(extent) and len(p.shape) >= 3 and tuple(p.shape[:len(extent)]) == extent}
        if not ranks:
            return None
        if len(ranks) > 1 or not 1 <= min(ranks) <= 3:
            raise self.err(E.UNSUPPORTED, f"plane tiles over {' * '.join(extent)} need 1 to 3 trailing spatial dims, "
                           "the same for every tensor", node, 'e.g. x: Tensor[T, "N, C, H, W"] with split(N * C)')
        return ir.PlaneTiles(next(iter(ranks)))

    def loop_params(self, node) -> list[ir.Param]:
        """The parameters whose shapes decide a tile loop's kind: all of them, or in a kernel of several launches
        (workspace tensors) those the loop names (a vector launch's tensors are not the cube launch's)."""
        params = list(self.scope.params.values())
        if not self.workspaces:
            return params
        named = {str(t) for t in node.scan_values(lambda v: isinstance(v, Token) and v.type == "NAME")}
        return [p for p in params if p.name in named]

    def row_shape_for(self, extent: tuple[str, ...], node) -> ir.RowTiles | None:
        """A tile loop over a split of B is a row loop when tensors [B, D] exist; with `split(N * C)`,
        tensors [N, C, H, W] are N*C rows of H*W: RowTiles(("N", "C"), ("H", "W"))."""
        k = len(extent)
        whole = selected_tables(node)  # index_select's tables: rows of another length, read whole
        shapes = {p.shape[k:] for p in self.loop_params(node) if isinstance(p, ir.TensorParam)
                  and len(p.shape) > k and p.shape[:k] == extent and p.name not in whole}
        if not shapes:
            return None
        if len(shapes) > 1 and all(len(sh) >= 2 for sh in shapes):
            return None  # [N, C, H, W] -> [N, C, OH, OW]: plane tiles (pooling), not rows
        if len(shapes) > 1:
            raise self.err(E.INDEX, f"row tiles over {' * '.join(extent)} need one row shape; tensors have rows "
                           f"{', '.join(str(list(s)) for s in sorted(shapes, key=str))}", node,
                           "every tensor over the split's rows has the loop's row length; index_select on the last dim "
                           "with K indices: split the output's rows and read x whole: index_select(x, load(idx[:])), "
                           "or gather(x, load(idx[r, :])) for torch.gather(x, -1, idx) with idx [.., K]")
        row = next(iter(shapes))
        if not all(isinstance(d, str) for d in row):
            raise self.err(E.UNSUPPORTED, "the row dimensions of a tensor must be shape symbols", node)
        return ir.RowTiles(extent, row)

    def is_row_tensor(self, p: ir.TensorParam) -> bool:
        k = len(self.scope.split_extent)
        return len(p.shape) > k and p.shape[:k] == self.scope.split_extent

    def tile_stmt(self, st: Tree, tile: str) -> ir.Stmt:
        if st.data == "aug_assign" and isinstance(st.children[0], Tree):
            return slot_accumulate(self, st, tile)
        if st.data == "aug_assign":
            return self.accumulate(st.children[0], st, tile, ir.Combine.ADD, st.children[1])
        if st.data == "assign" and str(st.children[0]) in self.scope.kscalars:
            return self.accumulate_minmax(st, tile)
        if st.data == "assign":
            name_tok, value = st.children
            name = str(name_tok)
            if is_builtin_call(name):
                raise self.err(E.DUPLICATE_NAME, f"'{name}' is the name of the built-in {name}(...) and cannot name a "
                               "value", name_tok, f"pick another name, e.g. {name}_v")
            if name in self.scope.params or name in self.scope.symbols or name in self.scope.loops \
                    or name in self.scope.slot_accs:
                raise self.err(E.DUPLICATE_NAME, f"cannot assign to '{name}': it names a parameter, loop or "
                               "accumulator",
                               name_tok)
            e = self.expr(value, tile)
            if isinstance(e, ir.Op) and OPS[e.op].rule is Rule.RESIZE:  # its size is the stored tensor's
                raise self.err(E.UNSUPPORTED, "a resized plane is stored directly (its size is the stored tensor's), "
                               "not named", st, f"store(y[p], {OPS[e.op].call or e.op}(...))")
            self.scope.tile.locals[name] = e.type
            if e.type.dtype is DType.BOOL and isinstance(e, ir.Op):
                self.scope.tile.mask_dtypes[name] = e.args[0].type.dtype
            return ir.Assign(name, e, self.o.span(st))
        if st.data == "expr_stmt":
            call = st.children[0]
            if self.call_name(call) != "store":
                raise self.err(E.KERNEL_STRUCTURE, f"'{self.call_name(call)}(...)' result is unused", call,
                               "only store(...) stands alone; assign other values to a name")
            pos, kw = self.call_args(call)
            if len(pos) != 2 or kw:
                raise self.err(E.ARGS, "store takes a tensor slice and a value", call, "store(y[t], value)")
            tensor, index, layout = self.slice_of(pos[0], tile)
            if index.by is not None:
                raise self.err(E.UNSUPPORTED, f"storing into rows chosen by an index tensor is not supported; "
                               f"'{tensor}[{index}]' can only be loaded", pos[0],
                               "split the output's rows and scatter into them: store(y[r, :], index_add(load(x[r, :]), "
                               "idx, src)) (also index_copy, index_put)")
            if layout is ir.Layout.ROW:
                raise self.err(E.INDEX, f"'{tensor}[:]' is shared by every row tile and cannot be stored", pos[0])
            if index.period:
                raise self.err(E.INDEX, f"'{tensor}' runs over part of the split's symbols ({index.period}): several rows "
                               "of the loop read each of its elements, so it cannot be stored", pos[0],
                               "store a tensor over all of the split's symbols; reduce over the others in a second loop")
            if layout is ir.Layout.PLANE:
                layout = ir.Layout.POOLED  # plane loops store pooled planes (the output's spatial dims)
            value = self.expr(pos[1], tile)
            tp = self.scope.params[tensor]
            if value.type.kind is not ir.Kind.TILE:
                raise self.err(E.TYPE, "store needs a tile value, got a scalar", pos[1],
                               "compute a tile from a loaded value, e.g. xt * 0.0 + c")
            if value.type.dtype is DType.BOOL:
                raise self.err(E.TYPE, "cannot store a comparison mask", pos[1], "use select(mask, a, b)")
            if value.type.dtype is not tp.dtype:
                raise self.err(E.DTYPE_MISMATCH, f"storing {value.type.dtype} into '{tensor}' of dtype {tp.dtype}",
                               pos[1], f"convert with cast(value, {tp.dtype})")
            if value.type.layout is not layout:
                what = {ir.Layout.ROWS: "whole rows", ir.Layout.COL: "one value per row", ir.Layout.ROW: "a row",
                        ir.Layout.FLAT: "a flat tile", ir.Layout.PLANE: "input planes",
                        ir.Layout.POOLED: "pooled planes", ir.Layout.BOX: "an unreduced box"}
                raise self.err(E.TYPE, f"storing {what[value.type.layout]} into {what[layout]} of '{tensor}'", pos[1],
                               "reduce rows with sum/max/min/mean(v, axis=1) to get one value per row"
                               if layout is ir.Layout.COL else
                               f"reduce the box over its extra axis first: sum(v, axis={self.scope.tile.shape.axis})"
                               if value.type.layout is ir.Layout.BOX else
                               "store max_pool(...), avg_pool(...) or resize_nearest(...) of a loaded plane"
                               if layout is ir.Layout.POOLED else None)
            return ir.Store(tensor, index, value, self.o.span(st))
        if st.data == "for_stmt":
            raise self.err(E.KERNEL_STRUCTURE, "loops inside a tile loop are not supported", st)
        raise self.err(E.KERNEL_STRUCTURE, f"unexpected statement '{st.data}'", st)

    def accumulate(self, name_tok: Token, st: Tree, tile: str, combine: ir.Combine, rhs) -> ir.Accumulate:
        """`st` updates accumulator `name_tok` with the reduction `rhs` (sum/max/min of a tile)."""
        name = str(name_tok)
        if name in self.scope.slot_accs:
            raise self.err(E.INDEX, f"'{name}' has one value per slot: {name}[{tile}] += sum(v, axis=1)", name_tok)
        if name not in self.scope.acc_names:
            raise self.err(E.UNDEFINED_NAME, f"'{name}' is not an accumulator", name_tok,
                           f"declare it before the split loop: {name} = 0.0")
        if name in self.scope.combined:
            raise self.err(E.KERNEL_STRUCTURE, f"accumulator '{name}' was already combined by an earlier split loop",
                           name_tok, "declare a new accumulator for this loop")
        reducer = {ir.Combine.ADD: "sum", ir.Combine.MAX: "max", ir.Combine.MIN: "min"}[combine]
        ok = (isinstance(rhs, Tree) and rhs.data == "call" and self.call_name(rhs) == reducer
              and len(rhs.children) == 2 and not (isinstance(rhs.children[1], Tree) and rhs.children[1].data == "kwarg"))
        if not ok:
            form = {ir.Combine.ADD: f"{name} += sum(v)", ir.Combine.MAX: f"{name} = max({name}, max(v))",
                    ir.Combine.MIN: f"{name} = min({name}, min(v))"}[combine]
            raise self.err(E.UNSUPPORTED, f"an accumulator is updated with {form}", rhs,
                           "reduce the tile to one value with sum/max/min(v); scale the total after the loop")
        was_constant = name in self.scope.constants
        value = self.expr(rhs.children[1], tile)
        if name in self.scope.constants and not was_constant:  # read in its own update
            raise self.err(E.KERNEL_STRUCTURE, f"accumulator '{name}' is read before its split loop has ended", st,
                           "its total across cores exists only after the loop that accumulates it")
        if value.type.kind is not ir.Kind.TILE or value.type.dtype is DType.BOOL:
            raise self.err(E.TYPE, f"{reducer}(v) reduces a tile value", rhs.children[1])
        if value.type.layout is ir.Layout.ROW:
            raise self.err(E.TYPE, f"{reducer}(v) of a row vector would count it once per row tile", rhs.children[1])
        if self.scope.tile.shape.kind is ir.LoopKind.BOX:
            raise self.err(E.UNSUPPORTED, "accumulators are not supported in a loop over boxes (a reduction over a "
                           "non-last dim)", name_tok, "store the reduced values, then reduce them in a second kernel")
        if value.type.dtype not in (DType.F32, DType.F16):
            raise self.err(E.DTYPE_UNSUPPORTED, f"accumulating {value.type.dtype} values is not supported",
                           rhs.children[1], "cast(v, f32) first")
        if name in self.scope.constants:
            raise self.err(E.KERNEL_STRUCTURE, f"'{name}' is read as a constant before this update, so it is not an "
                           "accumulator", name_tok, "an accumulator is read only after the split loop that updates it; "
                           "declare a new one for this loop")
        if combine is ir.Combine.ADD and value.type.dtype is DType.F16:  # an f16 sum per tile would round at the
            # compiler's tile boundaries: the total is the f32 sum of the values, whatever the tiling
            value = ir.Op("cast", (value,), ir.ValType(ir.Kind.TILE, DType.F32, value.type.layout), value.span)
        self.scope.phase_accs.add(name)
        return ir.Accumulate(name, combine, REDUCTIONS[reducer], value, span=self.o.span(st))

    def accumulate_minmax(self, st: Tree, tile: str) -> ir.Accumulate:
        name_tok, value = st.children
        name = str(name_tok)
        if name not in self.scope.acc_names and name not in self.scope.constants:
            raise self.err(E.DUPLICATE_NAME, f"cannot assign to '{name}' inside a tile loop: it is a kernel-scope "
                           "scalar", name_tok)
        call_ok = isinstance(value, Tree) and value.data == "call" and self.call_name(value) in ("max", "min")
        if call_ok:
            pos, kw = self.call_args(value)
            first = pos[0] if pos else None
            if len(pos) == 2 and not kw and isinstance(first, Tree) and first.data == "name" \
                    and str(first.children[0]) == name:
                return self.accumulate(name_tok, st, tile, ir.Combine(self.call_name(value)), pos[1])
        raise self.err(E.UNSUPPORTED, f"accumulator '{name}' is updated with {name} += sum(v), "
                       f"{name} = max({name}, max(v)) or {name} = min({name}, min(v))", value)

    def slice_of(self, e, tile: str) -> tuple[str, ir.TileIndex, ir.Layout]:
        if self.scope.tile.cube is not None:
            return cube_slice(self, e, self.scope.tile.cube)
        if not (isinstance(e, Tree) and e.data == "subscript"):
            raise self.err(E.INDEX, "expected a tensor slice like x[t]", e)
        name_tok, *idx = e.children
        name = str(name_tok)
        p = self.tensor_param(name_tok)
        is_tile = [isinstance(i, Tree) and i.data == "name" and str(i.children[0]) == tile for i in idx]
        is_full = [isinstance(i, Tree) and i.data == "full_slice" for i in idx]
        shape = self.scope.tile.shape
        rows = shape if shape.kind is ir.LoopKind.ROWS else None
        if idx and is_index_subscript(idx[0]):
            return row_gather_slice(self, e, tile, p, idx)
        if shape.kind is ir.LoopKind.BOX:
            return box_slice(self, e, tile, p, idx)
        if shape.kind is ir.LoopKind.PLANES and len(idx) == 1 and is_tile[0]:
            if len(p.shape) != len(self.scope.split_extent) + shape.rank or \
                    tuple(p.shape[:len(self.scope.split_extent)]) != self.scope.split_extent:
                raise self.err(E.INDEX, f"'{name}[{tile}]' in a plane loop needs a tensor "
                               f"[{', '.join(self.scope.split_extent)}, ...] with {shape.rank} spatial dims; "
                               f"'{name}' has shape {list(p.shape)}", e)
            return name, ir.TileIndex(tile, False, self.o.span(idx[0])), ir.Layout.PLANE
        if rows is not None and (bc := broadcast_slice(self, e, tile, p, idx, is_tile, is_full)) is not None:
            return bc
        over_rows = rows is not None and len(p.shape) > 1 and tuple(map(str, p.shape)) == rows.rows
        if len(idx) == 1 and is_tile[0] and (len(p.shape) == 1 or over_rows):  # over_rows: y[N, K] under split(N * K)
            if rows is None:
                return name, ir.TileIndex(tile, False, self.o.span(idx[0])), ir.Layout.FLAT
            k = len(p.shape)
            if p.shape != self.scope.split_extent and len(self.scope.split_extent) > k and p.shape == self.scope.split_extent[-k:]:
                # a per-channel tensor: rows n*C + c read w[c] (e.g. batch-norm statistics)
                period = " * ".join(map(str, p.shape))
                return name, ir.TileIndex(tile, False, self.o.span(idx[0]), period), ir.Layout.COL
            if tuple(map(str, p.shape)) != rows.rows:
                raise self.err(E.INDEX, f"'{name}[{tile}]' in a row loop needs a tensor over the rows "
                               f"({' * '.join(rows.rows)}); "
                               f"'{name}' has shape {list(p.shape)}", e)
            return name, ir.TileIndex(tile, False, self.o.span(idx[0])), ir.Layout.COL
        if len(idx) == 2 and is_tile[0] and is_full[1] and rows is not None and self.is_row_tensor(p):
            return name, ir.TileIndex(tile, True, self.o.span(idx[0])), ir.Layout.ROWS
        if len(idx) == 1 and is_full[0] and len(p.shape) == 1 and rows is not None:
            if tuple(map(str, p.shape)) != rows.row:
                raise self.err(E.INDEX, f"'{name}[:]' in a row loop needs a tensor over the row length "
                               f"({' * '.join(rows.row)}); "
                               f"'{name}' has shape {list(p.shape)}", e)
            return name, ir.TileIndex(None, False, self.o.span(idx[0])), ir.Layout.ROW
        if len(p.shape) == 2:
            raise self.err(E.INDEX, f"index the 2-D tensor '{name}' by whole rows: {name}[{tile}, :]", e,
                           "split its first dimension: for blk in split(" + str(p.shape[0]) + ", cores=AIV)")
        if len(p.shape) > 2:
            raise self.err(E.INDEX, f"'{name}' has rank {len(p.shape)}; tiles index rank-1 or rank-2 tensors", e,
                           f'declare it as Tensor[{p.dtype}, "N"] to view it flat')
        raise self.err(E.INDEX, f"index '{name}' with the tile variable: {name}[{tile}]", e)

    def tensor_param(self, tok) -> ir.TensorParam:
        """The tensor parameter `tok` names, or UNDEFINED-NAME with the closest tensor name."""
        p = self.scope.params.get(str(tok))
        if not isinstance(p, ir.TensorParam):
            raise self.undefined(tok, [n for n, q in self.scope.params.items() if isinstance(q, ir.TensorParam)],
                                 "a tensor parameter")
        return p

    def undefined(self, tok, candidates, what: str) -> DslError:
        close = difflib.get_close_matches(str(tok), list(candidates), n=1)
        return self.err(E.UNDEFINED_NAME, f"'{tok}' is not defined (expected {what})", tok,
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
            if d == "subscript" and str(e.children[0]) in self.scope.slot_accs:
                return slot_read(self, e, tile)
            if d == "subscript":
                raise self.err(E.INDEX, "read a tile with load(x[t])", e)
            if d == "tuple_expr":
                raise self.err(E.TYPE, "a tuple is not a value", e, "tuples are taken by a convolution's stride=, "
                               "padding=, dilation= and by axis= in a convolution's vector block")
        raise self.err(E.SYNTAX, "unsupported expression", e)

    def name_ref(self, tok: Token) -> ir.Expr:
        name = str(tok)
        span = self.o.span(tok)
        if name in self.scope.tile.locals:
            return ir.Ref(name, self.scope.tile.locals[name], span)
        p = self.scope.params.get(name)
        if isinstance(p, ir.ScalarParam):
            return ir.Ref(name, ir.scalar_of(p.dtype), span)
        if name in self.scope.kscalars:
            if name in self.scope.phase_accs:
                raise self.err(E.KERNEL_STRUCTURE, f"accumulator '{name}' is read before its split loop has ended",
                               tok, "its total across cores exists only after the loop that accumulates it")
            if name in self.scope.acc_names and name not in self.scope.combined:  # no loop updated it yet: a constant
                self.scope.acc_names.discard(name)
                self.scope.constants.add(name)
            return ir.Ref(name, self.scope.kscalars[name], span)
        if name in self.scope.slot_accs:
            raise self.err(E.INDEX, f"'{name}' holds one value per slot; read it per row: {name}[r]", tok)
        if name in self.scope.symbols:
            return ir.Ref(name, ir.scalar_of(DType.I32), span)  # a shape symbol's runtime value
        if isinstance(p, ir.TensorParam):
            raise self.err(E.TYPE, f"'{name}' is a GM tensor; read it with load({name}[t])", tok)
        if name in self.scope.loops:
            raise self.err(E.TYPE, f"loop variable '{name}' is not a value", tok)
        candidates = list(self.scope.tile.locals) + [n for n, q in self.scope.params.items() if isinstance(q, ir.ScalarParam)]
        raise self.undefined(tok, candidates, "a local value or scalar parameter")

    def power(self, e: Tree, tile: str) -> ir.Expr:
        base = self.expr(e.children[0], tile)
        exp_node = self.expr(e.children[1], tile)
        if not isinstance(exp_node, ir.Const) or exp_node.value not in POW_EXPONENTS:
            # any other exponent, scalar or tile: torch.pow (tiles: lowering/passes/legalize.py composes it with
            # comparisons and selects, which take flat tiles or whole rows only)
            if any(x.type.kind is ir.Kind.TILE and x.type.layout not in (ir.Layout.FLAT, ir.Layout.ROWS)
                   for x in (base, exp_node)):
                raise self.err(E.UNSUPPORTED, "'**' with this exponent takes flat tiles or whole rows (not per-row "
                               "values, row vectors or boxes)", e, "the constant exponents " + ", ".join(map(str, POW_EXPONENTS))
                               + " take any tile; for x > 0, exp(e * log(x))")
            return self.op("pow", [base, exp_node], e)
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
        """A call in an expression: a built-in (ascend_dsl/intrinsics.py) or an element-wise op (ops.py)."""
        name_tok = e.children[0]
        name = str(name_tok)
        pos, kw = self.call_args(e)
        if name in INTRINSICS:
            value = INTRINSICS[name](self, Call(name, pos, kw, e, tile))
            if value is not None:
                return value
        elif name in NOT_LOWERED:
            raise self.err(E.UNSUPPORTED, *NOT_LOWERED[name][:1], name_tok, NOT_LOWERED[name][1])
        elif name not in CALLABLE and not (name in OPS and OPS[name].extern):  # extern ops: ascend_dsl/extern_ops.py
            close = difflib.get_close_matches(name, list(CALLABLE) + ["load"], n=1)
            raise self.err(E.UNKNOWN_OP, f"unknown function '{name}'", name_tok,
                           f"did you mean '{close[0]}'?" if close else f"available: {', '.join(sorted(CALLABLE))}")
        if kw:
            raise self.err(E.ARGS, f"{name}() takes no keyword arguments", e)
        return self.op(name, [self.expr(a, tile) for a in pos], e)

    def axis_value(self, axis) -> float | int | None:
        value = self.number(axis.children[0]) if isinstance(axis, Tree) and axis.data == "number" else None
        if isinstance(axis, Tree) and axis.data == "neg" and isinstance(axis.children[0], Tree):
            value = -self.number(axis.children[0].children[0])
        return value

    def no_planes(self, args: list[ir.Expr], node) -> None:
        if any(a.type.layout in (ir.Layout.PLANE, ir.Layout.POOLED) for a in args if a.type.kind is ir.Kind.TILE):
            raise self.err(E.UNSUPPORTED, "plane tiles only feed max_pool/avg_pool/resize_*, and pooled or resized "
                           "planes are only stored", node,
                           "store(y[p], max_pool(load(x[p]), kernel=k, stride=s, padding=pad))")

    def layout_of(self, args: list[ir.Expr], node, same: bool = False) -> ir.Layout:
        """Broadcasting: rows x D absorbs per-row values and row vectors; flat tiles mix with nothing else."""
        layouts = {a.type.layout for a in args if a.type.kind is ir.Kind.TILE}
        if not layouts:
            return ir.Layout.FLAT
        if len(layouts) == 1:
            return next(iter(layouts))
        if ir.Layout.BOX in layouts:
            if layouts != {ir.Layout.BOX, ir.Layout.FLAT}:
                raise self.err(E.TYPE, "a box (load(x[t]) with the extra axis) combines only with boxes, per-position "
                               "values of its tile and scalars", node)
            if same:
                raise self.err(E.UNSUPPORTED, "comparisons and select of a box need operands that are all boxes", node,
                               "subtract the per-position value first (v - m), then compare the box with a scalar")
            return ir.Layout.BOX  # a per-position value (flat tile of t) broadcast along the box's extra axis
        if same:
            raise self.err(E.UNSUPPORTED, "comparisons and select need operands of one shape (all whole rows, or all "
                           "per-row values)", node)
        if ir.Layout.ROWS in layouts and ir.Layout.FLAT not in layouts:
            return ir.Layout.ROWS
        raise self.err(E.UNSUPPORTED, "a per-row value and a row vector only combine with whole rows", node)

    def op(self, name: str, args: list[ir.Expr], node) -> ir.Expr:
        info = OPS[name]
        span = self.o.span(node)
        self.no_planes(args, node)
        if len(args) != info.arity:
            raise self.err(E.ARGS, f"{name} takes {info.arity} argument(s), got {len(args)}", node)
        if info.rule is Rule.SELECT and all(x.type.kind is ir.Kind.SCALAR for x in args) \
                and args[0].type.dtype is DType.BOOL:  # a scalar choice (kernel-scope values, attributes)
            mask, a, b = args
            a, b, dtype, _ = self.unify([a, b], node, None)
            return ir.Op("select", (mask, a, b), ir.scalar_of(dtype), span)
        if info.rule is Rule.SELECT:
            mask, a, b = args
            if mask.type.kind is not ir.Kind.TILE or mask.type.dtype is not DType.BOOL:
                raise self.err(E.TYPE, "select's first argument must be a comparison mask", node,
                               "e.g. select(x > 0.0, x, 0.0)")
            fallback = self.mask_source_dtype(mask)
            a, b, dtype, kind = self.unify([a, b], node, fallback)
            if dtype not in info.dtypes:
                raise self.err(E.DTYPE_UNSUPPORTED, f"select of {dtype} tiles is not supported: AscendC Select "
                               "moves f16 and f32 only", node, "cast(v, f32) the values, select, and cast back")
            mask, a, b = select_operands(self, mask, a, b, node)
            layout = self.layout_of([mask, a, b], node, same=True)
            return ir.Op("select", (mask, a, b), ir.tile_of(dtype, layout), span)
        for a in args:
            if a.type.dtype is DType.BOOL:
                raise self.err(E.TYPE, f"a comparison mask cannot be used in '{name}'", node,
                               "masks only feed select(mask, a, b)")
        unified = self.unify(args, node, None, promote=name == "div")
        args2, dtype, kind = list(unified[:-2]), unified[-2], unified[-1]
        if all(isinstance(a, ir.Const) for a in args2) and info.fold is not None:
            try:
                return ir.Const(info.fold(*[a.value for a in args2]), ir.scalar_of(dtype), span)
            except (ValueError, ZeroDivisionError, OverflowError):
                value = _fold_ieee(info, [a.value for a in args2]) if dtype.is_float else None
                if value is None:
                    raise self.err(E.TYPE, f"cannot evaluate {name} on these constants", node) from None
                return ir.Const(value, ir.scalar_of(dtype), span)
        if dtype not in info.dtypes:
            raise self.err(E.DTYPE_UNSUPPORTED, f"'{name}' does not support {dtype}", node,
                           f"supported: {', '.join(sorted(map(str, info.dtypes)))}")
        if info.rule is Rule.COMPARE:
            if kind is not ir.Kind.TILE:  # scalars: only a scalar select can use the result
                return ir.Op(name, tuple(args2), ir.scalar_of(DType.BOOL), span)
            args2 = broadcast_operands(self, args2)
            return ir.Op(name, tuple(args2), ir.tile_of(DType.BOOL, self.layout_of(args2, node, same=True)), span)
        layout = self.layout_of(args2, node) if kind is ir.Kind.TILE else ir.Layout.FLAT
        return ir.Op(name, tuple(args2), ir.ValType(kind, dtype, layout), span)

    def mask_source_dtype(self, mask: ir.Expr) -> DType | None:
        if isinstance(mask, ir.Op):
            return mask.args[0].type.dtype
        if isinstance(mask, ir.Ref):
            return self.scope.tile.mask_dtypes.get(mask.name)
        return None

    def unify(self, args: list[ir.Expr], node, fallback: DType | None, promote: bool = False):
        """Give literals and scalar parameters the dtype of the tile operands; tiles must agree. Scalars alone
        are f32 when any of them is a float (or `promote`: true division of integers), else integers."""
        tiles = [a for a in args if a.type.kind is ir.Kind.TILE]
        if tiles:
            dtype = tiles[0].type.dtype
            for t in tiles[1:]:
                if t.type.dtype is not dtype:
                    raise self.err(E.DTYPE_MISMATCH, f"operands have dtypes {dtype} and {t.type.dtype}", node,
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
            elif float_literal and fallback is not None and not fallback.is_float:
                dtype = DType.F32  # select(col_index() <= row_index(), 1.0, 0.0): floats chosen by an int comparison
            else:
                dtype = fallback or DType.F32
            kind = ir.Kind.SCALAR
        if not dtype.is_float:
            for a in args:
                if isinstance(a, ir.Const) and not float(a.value).is_integer():
                    raise DslError.at(E.TYPE, f"the literal {a.value} meets {dtype} values and would be truncated",
                                      a.span, "cast the integer operand to a float dtype first, e.g. cast(v, f32)")
        out = []
        for a in args:
            if a.type.kind is ir.Kind.SCALAR and a.type.dtype is not dtype:
                a = ir.Const(a.value, ir.scalar_of(dtype), a.span) if isinstance(a, ir.Const) else \
                    ir.Op("cast", (a,), ir.scalar_of(dtype), a.span)
            out.append(a)
        return (*out, dtype, kind)
