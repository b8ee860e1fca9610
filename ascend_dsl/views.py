"""Views of workspace tensors: `hg = view(h, M, G=num_groups, L=N / num_groups)` at kernel scope.

A view names the GM of a workspace tensor (`h = workspace(f32, M, N)`) with other dims, for a launch other than
the one that writes it through the other shape: a GEMM stores `h` as `[M, N]`, a vector launch reads `hg` as
`M * G` rows of `N / G` (group norm over column groups). A dim is a shape symbol already known, or `NEW=EXPR`
defining a shape symbol: EXPR multiplies and divides shape symbols, integer scalar parameters and positive
integer literals. The view's element count must be the tensor's for every size (checked here, symbolically);
each division must be exact at launch (`SHAPE`, checked by `bind_symbols` for the harness and the interpreter).
The launches (ascend_dsl/launches.py) rename a view to its tensor in the launch that uses it, with the view's
dims: a launch sees one shape of each workspace tensor.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from lark import Tree

from . import ir
from .diagnostics import DslError
from .diagnostics import ErrorCode as E
from .dtypes import DType

EXAMPLE = "hg = view(h, M, G=num_groups, L=N / num_groups)"


def view_decl(b, name: str, st: Tree, call: Tree) -> ir.TensorParam:
    """Declare view `name` of a workspace tensor; its new shape symbols join the scope."""
    pos, kw = b.call_args(call)
    if not pos or not (isinstance(pos[0], Tree) and pos[0].data == "name"):
        raise b.err(E.ARGS, "view takes a workspace tensor, then its dims", call, EXAMPLE)
    base = b.scope.params.get(str(pos[0].children[0]))
    if not isinstance(base, ir.TensorParam):
        raise b.undefined(pos[0].children[0], [w.name for w in b.workspaces], "a workspace tensor")
    if not base.workspace or base.view is not None:
        what = "a view" if base.view is not None else "a tensor parameter (bound to the task)"
        raise b.err(E.UNSUPPORTED, f"'{base.name}' is {what}; view takes a workspace tensor", pos[0],
                    f"declare h = workspace(f32, M, N), then {EXAMPLE}")
    if len(pos) + len(kw) < 2:
        raise b.err(E.ARGS, "view takes the tensor and at least one dim", call, EXAMPLE)
    dims: list[str | int] = []
    for d in pos[1:]:
        if not (isinstance(d, Tree) and d.data == "name"):
            raise b.err(E.ARGS, "a view dim is a shape symbol, or NEW=EXPR defining one", d, EXAMPLE)
        sym = str(d.children[0])
        if sym not in b.scope.symbols:
            raise b.undefined(d.children[0], sorted(b.scope.symbols), "a shape symbol")
        dims.append(sym)
    defs: list[ir.DimDef] = []
    kwargs = {str(a.children[0]): a for a in call.children[1:] if isinstance(a, Tree) and a.data == "kwarg"}
    for key, expr in kw.items():
        if key in b.scope.symbols or key in b.scope.params or key in b.scope.kscalars:
            raise b.err(E.DUPLICATE_NAME, f"'{key}' is already defined; a view's NAME=EXPR defines a new shape "
                        "symbol", kwargs[key], "pick another name")
        num, den = _factors(b, expr)
        defs.append(ir.DimDef(key, tuple(num), tuple(den), b.o.span(expr)))
        dims.append(key)
    known = {d.name: d for p in b.scope.params.values() if isinstance(p, ir.TensorParam) and p.view
             for d in p.view.defs} | {d.name: d for d in defs}
    want, got = _monomial(base.shape, known), _monomial(tuple(dims), known)
    if want != got:
        raise b.err(E.SHAPE, f"view '{name}' has {_show(got)} elements but '{base.name}' has {_show(want)}", call,
                    "a view keeps the element count for every size: e.g. [M, N] as [M, G, N / G]")
    b.scope.symbols.update(d.name for d in defs)
    param = ir.TensorParam(name, base.dtype, tuple(dims), workspace=True, span=b.o.span(st),
                           view=ir.ViewOf(base.name, tuple(defs)))
    b.scope.params[name] = param
    return param


def _factors(b, e) -> tuple[list, list]:
    """(numerator, denominator) factors of a product/quotient of names and integer literals."""
    if isinstance(e, Tree) and e.data in ("mul", "div"):
        n1, d1 = _factors(b, e.children[0])
        n2, d2 = _factors(b, e.children[1])
        return (n1 + n2, d1 + d2) if e.data == "mul" else (n1 + d2, d1 + n2)
    if isinstance(e, Tree) and e.data == "number" and str(e.children[0]).isdigit() and int(str(e.children[0])) > 0:
        return [int(str(e.children[0]))], []
    if isinstance(e, Tree) and e.data == "name":
        name = str(e.children[0])
        p = b.scope.params.get(name)
        if name in b.scope.symbols or (isinstance(p, ir.ScalarParam) and p.dtype in (DType.I32, DType.I64)):
            return [name], []
        if isinstance(p, ir.ScalarParam):
            raise b.err(E.TYPE, f"'{name}' is a {p.dtype} parameter; a view dim takes int parameters (i32)", e)
        raise b.undefined(e.children[0], sorted(b.scope.symbols), "a shape symbol or an int parameter")
    raise b.err(E.ARGS, "a view dim multiplies and divides shape symbols, int parameters and positive integers", e,
                EXAMPLE)


def _monomial(dims: tuple, defs: dict[str, ir.DimDef]) -> tuple[Fraction, Counter]:
    """A dims product as (integer coefficient, names with exponents), new symbols expanded into their EXPR."""
    coef, powers = Fraction(1), Counter()

    def add(f, sign: int) -> None:
        nonlocal coef
        if isinstance(f, int):
            coef = coef * f if sign > 0 else coef / f
        elif f in defs:  # a symbol a view defines: its EXPR (those refer only to earlier symbols)
            for g in defs[f].num:
                add(g, sign)
            for g in defs[f].den:
                add(g, -sign)
        else:
            powers[f] += sign

    for d in dims:
        add(d, 1)
    return coef, Counter({k: v for k, v in powers.items() if v})


def _show(m: tuple[Fraction, Counter]) -> str:
    coef, powers = m
    num = [k if v == 1 else f"{k}**{v}" for k, v in sorted(powers.items()) if v > 0]
    den = [k if v == -1 else f"{k}**{-v}" for k, v in sorted(powers.items()) if v < 0]
    text = " * ".join(([str(coef.numerator)] if coef.numerator != 1 or not num else []) + num)
    below = ([str(coef.denominator)] if coef.denominator != 1 else []) + den
    return text + (" / " + " / ".join(below) if below else "")


def bind_symbols(kernel: ir.Kernel, symbols: dict[str, int], scalars: dict[str, float]) -> dict[str, int]:
    """The shape symbols the kernel's views define, from the bound symbols and integer scalars; SHAPE (at the
    definition) when a division is not exact or a dim is not positive."""
    out: dict[str, int] = workspace_dims(kernel, symbols, scalars)
    known = {**symbols, **out}
    for v in kernel.views:
        for d in v.view.defs:
            for f in (*d.num, *d.den):
                if isinstance(f, str) and f not in known and float(scalars[f]) != int(float(scalars[f])):
                    raise DslError.at(E.SHAPE, f"view '{v.name}': {d.name} = {_expr(d)} takes {f} = {scalars[f]}, "
                                      "not a whole number", d.span)
            num, den = _value(d.num, known, scalars), _value(d.den, known, scalars)
            if den <= 0 or num % den or num // den < 1:
                raise DslError.at(E.SHAPE, f"view '{v.name}': {d.name} = {_expr(d)} = {num} / {den} is not a whole "
                                  "number >= 1", d.span, "the sizes must divide: pick a group count that divides the "
                                  "dim (a view's dims are exact for every size it runs at)")
            if known.setdefault(d.name, num // den) != num // den:
                raise DslError.at(E.SHAPE, f"view '{v.name}': {d.name} is {num // den} here and {known[d.name]} in an "
                                  "earlier view", d.span)
            out[d.name] = num // den
    return out


def workspace_dims(kernel: ir.Kernel, symbols: dict[str, int], scalars: dict[str, float]) -> dict[str, int]:
    """The shape symbols compiler-declared workspaces define for their own shapes (TensorParam.dims: the NC1HWC0
    route's C1 = ceil(C / 16)), from the bound symbols; they are in the lowered kernel, not the source."""
    out: dict[str, int] = {}
    for p in kernel.tensors:
        for d in p.dims:
            num, den = _value(d.num, symbols, scalars), _value(d.den, symbols, scalars)
            out[d.name] = -(-num // den) if d.ceil else num // den
    return out


def _value(factors: tuple, known: dict[str, int], scalars: dict[str, float]) -> int:
    out = 1
    for f in factors:
        out *= f if isinstance(f, int) else int(known[f]) if f in known else int(scalars[f])
    return out


def _expr(d: ir.DimDef) -> str:
    num = " * ".join(map(str, d.num)) or "1"
    return num + "".join(f" / {f}" for f in d.den)


def shape_of(view: ir.TensorParam, symbols: dict[str, int]) -> list[int]:
    return [symbols[d] if isinstance(d, str) else d for d in view.shape]
