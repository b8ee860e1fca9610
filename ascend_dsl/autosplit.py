"""Autosplit: a conv or matmul split whose `with vector:` block its cube kernel cannot run becomes launches.

Goals: a front-end pass over the kernel body's syntax trees, run before they are typed. A convolution split
whose vector block is anything but one store of `acc`, `relu(acc)` or their `cast` (the epilogue Fixpipe runs),
and a matmul split whose epilogue calls an op the MIX kernel cannot run (argmax/argmin, scans along the row),
are rewritten into the two-loop form the user would write ("Launches", docs/language.md): a compiler-declared
f32 workspace tensor shaped like the output, the cube split storing the accumulator into it, and one vector
split loop of a form the vector kinds accept, whose statements are the user's own (their nodes keep their
source positions, so later errors point at what the user wrote):

- rows (`split(N * K)` of `[N, K, *spatial]`: each row one output plane): element-wise work with tensors shaped
  like the output (`t[blk]`), per-channel `[K]` and per-plane `[N, K]` values (`t[blk]`), reductions over every
  spatial dim (`mean(acc, axis=(2, 3))`: instance norm, global average pooling, stored into `[N, K]`);
- boxes (`split(N * OH * OW)`): reductions over the channels (`axis=1`: softmax, mean, max over channels);
- planes (`split(N * K)`): one `max_pool` / `avg_pool`, with the work before it as rows storing a second
  workspace (none for `acc` or `relu(acc)`: the ReLU then runs in the cube launch) and the work after it as rows
  or boxes over the pooled planes (a third);
- matmul rows (`split(Bt * M)`): the epilogue over whole rows of the output (any N; scans and argmax).

Anything else that cannot be cut this way is a located error naming the form to write. The rewritten kernel is
then an ordinary kernel of several launches (lowering/passes/partition_launches.py), lowered and interpreted
like the hand-written one. With `rows=True` a matmul epilogue that reduces whole rows (which the MIX kernel runs
while N fits) is cut too: the fallback form of ascend_dsl/row_fallback.py, which the host runs when the fused
kernel's tiling finds no base block. Non-goals: fusing the launches back (the workspace makes one GM round trip),
slot accumulators (group norm: write its loops).
"""

from __future__ import annotations

from lark import Token, Tree

from .diagnostics import DslError
from .diagnostics import ErrorCode as E
from .parser_conv import is_conv_split
from .parser_cube import is_cube_split

#: Calls a MIX epilogue cannot run (a base block holds part of a row; scans and argmax need whole rows).
MIX_REFUSED = ("argmax", "argmin", "cumsum", "cumprod")
_REDUCE = ("sum", "mean", "max", "min", "prod")
_POOLS = ("max_pool", "avg_pool")
_LAUNCHES = 'docs/language.md, "Launches"'


def rewrite(b, stmts: list[Tree], rows: bool = False) -> list[Tree]:
    """The kernel body's statements with every conv or matmul split the cube kernel cannot run cut into a
    workspace declaration, the cube split storing it, and a vector split loop reading it. `rows`: cut a matmul
    epilogue that reduces whole rows too (the launches form of ascend_dsl/row_fallback.py)."""
    if not any(isinstance(s, Tree) and s.data == "for_stmt" and is_cube_split(b, s) for s in stmts):
        return stmts
    taken = {str(t) for s in stmts for t in _tokens(s)} | set(b.scope.params) | set(b.scope.symbols)
    out: list[Tree] = []
    for s in stmts:
        cut = None
        if s.data == "for_stmt" and is_cube_split(b, s):
            cut = _conv(b, s, taken) if is_conv_split(b, s) else _matmul(b, s, taken, rows)
        out += cut if cut else [s]
    return out


# ----------------------------------------------------------------------------- trees


def _tokens(t):
    if isinstance(t, Token):
        yield t
    elif isinstance(t, Tree):
        for c in t.children:
            yield from _tokens(c)


def _fresh(taken: set[str], *names: str) -> str:
    for n in names:
        if n not in taken:
            taken.add(n)
            return n
    i = 0
    while f"{names[0]}{i}" in taken:
        i += 1
    taken.add(f"{names[0]}{i}")
    return f"{names[0]}{i}"


def _tok(value: str, at, kind: str = "NAME") -> Token:
    """A token carrying the position of `at` (a node of the user's text), so errors on it are located there."""
    if isinstance(at, Token):
        return Token.new_borrow_pos(kind, value, at)
    tok = Token(kind, value)
    meta = at.meta
    if not getattr(meta, "empty", True):
        tok.line, tok.column, tok.end_line, tok.end_column = meta.line, meta.column, meta.end_line, meta.end_column
    return tok


def _tree(data: str, children: list, at) -> Tree:
    return Tree(data, children, meta=at.meta if isinstance(at, Tree) else None)


def _name(value: str, at) -> Tree:
    return _tree("name", [_tok(value, at)], at)


def _num(value: int, at) -> Tree:
    return _tree("number", [_tok(str(value), at, "NUMBER")], at)


def _sub(tensor: str, index: list, at) -> Tree:
    return _tree("subscript", [_tok(tensor, at), *index], at)


def _call(fn: str, args: list, at) -> Tree:
    return _tree("call", [_tok(fn, at), *args], at)


def _kwarg(key: str, value: Tree, at) -> Tree:
    return _tree("kwarg", [_tok(key, at), value], at)


def _product(names: list[str], at) -> Tree:
    e = _name(names[0], at)
    for n in names[1:]:
        e = _tree("mul", [e, _name(n, at)], at)
    return e


def _blocks(s: Tree) -> dict[str, Tree] | None:
    """The split's `with cube:` and `with vector:` blocks (None if malformed: the parser reports that)."""
    blocks = {}
    for st in s.children[2].children:
        if isinstance(st, Tree) and st.data == "with_stmt":
            blocks[str(st.children[0])] = st
    return blocks if {"cube", "vector"} <= set(blocks) else None


def _body(block: Tree) -> list[Tree]:
    return [s for s in block.children[1].children if not (isinstance(s, Tree) and s.data in ("doc_stmt", "pass_stmt"))]


def _calls(t, names) -> list[Tree]:
    return [c for c in (t.iter_subtrees_topdown() if isinstance(t, Tree) else ())
            if c.data == "call" and str(c.children[0]) in names]


def _cube_acc(blocks: dict[str, Tree]) -> str | None:
    body = _body(blocks["cube"])
    return str(body[0].children[0]) if len(body) == 1 and body[0].data == "assign" else None


def _with_store(s: Tree, blocks: dict[str, Tree], ws: str, value: Tree) -> Tree:
    """The cube split with its vector block replaced by `store(ws[var], value)`."""
    var = s.children[0]
    vec = blocks["vector"]
    store = _tree("expr_stmt", [_call("store", [_sub(ws, [_name(str(var), vec)], vec), value], vec)], vec)
    new_vec = _tree("with_stmt", [vec.children[0], _tree("suite", [store], vec.children[1])], vec)
    suite = _tree("suite", [new_vec if st is vec else st for st in s.children[2].children], s.children[2])
    return _tree("for_stmt", [var, s.children[1], suite], s)


def _vector_loop(s: Tree, extent: list[str], tile: str, stmts: list[Tree]) -> Tree:
    """for VAR in split(EXTENT, cores=AIV): for TILE in tile(VAR, size=auto, buffers=2): STMTS."""
    var = s.children[0]
    at = s.children[1]
    split = _call("split", [_product(extent, at), _kwarg("cores", _name("AIV", at), at)], at)
    tcall = _call("tile", [_name(str(var), at), _kwarg("size", _name("auto", at), at),
                           _kwarg("buffers", _num(2, at), at)], at)
    inner = _tree("for_stmt", [_tok(tile, var), tcall, _tree("suite", stmts, s)], s)
    return _tree("for_stmt", [var, split, _tree("suite", [inner], s)], s)


def _workspace(ws: str, dims: list[str], s: Tree) -> Tree:
    at = s.children[1]
    return _tree("assign", [_tok(ws, s.children[0]), _call("workspace", [_name("f32", at), *(_name(d, at) for d in dims)],
                                                          at)], s)


def _err(b, msg: str, node, hint: str | None = None) -> DslError:
    return b.err(E.UNSUPPORTED, msg, node, hint)


# ----------------------------------------------------------------------------- convolution


def _is_fixpipe_store(body: list[Tree], acc: str) -> bool:
    """One store of acc, relu(acc), cast(acc, T) or cast(relu(acc), T): the conv kernel runs it."""
    if len(body) != 1 or body[0].data != "expr_stmt":
        return False
    call = body[0].children[0]
    if not (isinstance(call, Tree) and call.data == "call" and str(call.children[0]) == "store" and len(call.children) == 3):
        return False
    e = call.children[2]
    if isinstance(e, Tree) and e.data == "call" and str(e.children[0]) == "cast":
        e = e.children[1] if len(e.children) == 3 else None
    if isinstance(e, Tree) and e.data == "call" and str(e.children[0]) == "relu" and len(e.children) == 2:
        e = e.children[1]
    return isinstance(e, Tree) and e.data == "name" and str(e.children[0]) == acc


def _axes(b, node, ndim: int) -> frozenset[int] | None:
    """The dims an `axis=` names (negative counted from the end); None if not integer literals."""
    items = node.children if isinstance(node, Tree) and node.data == "tuple_expr" else [node]
    out = set()
    for it in items:
        v = b.axis_value(it)
        if not isinstance(v, int) or not -ndim <= v < ndim:
            return None
        out.add(v % ndim)
    return frozenset(out)


def _conv(b, s: Tree, taken: set[str]) -> list[Tree] | None:
    blocks = _blocks(s)
    acc = _cube_acc(blocks) if blocks else None
    if acc is None:
        return None
    body = _body(blocks["vector"])
    if not body or _is_fixpipe_store(body, acc):
        return None
    dims = [str(d.children[0]) if isinstance(d, Tree) and d.data == "name" else None
            for d in s.children[1].children[1:] if not (isinstance(d, Tree) and d.data == "kwarg")]
    if None in dims or len(dims) < 3:
        return None  # conv_loop reports the split's form
    var = str(s.children[0])
    for st in body:
        if st.data not in ("assign", "expr_stmt") or (st.data == "expr_stmt" and str(st.children[0].children[0]) != "store"):
            raise _err(b, "a convolution's vector block the compiler splits off holds assignments and stores", st,
                       f"name values (v = ...) and store them: store(y[{var}], v)")
    for d, node in zip(dims, s.children[1].children[1:], strict=False):
        if d not in b.scope.symbols:
            raise b.err(E.ARGS, f"'{d}' is no shape symbol of a tensor parameter: the compiler keeps the convolution's "
                        "output between the launches in a workspace tensor shaped by the split's dims", node,
                        "name the output's dims in a tensor parameter, or use padding that keeps H, W")
    for call in _tree("suite", body, s).iter_subtrees_topdown():
        if call.data == "call" and str(call.children[0]) not in _REDUCE and any(
                isinstance(a, Tree) and a.data == "kwarg" and str(a.children[0]) == "axis" for a in call.children[1:]):
            raise _err(b, f"after a convolution, {call.children[0]}(..., axis=) is not cut into launches (only sum, "
                       "mean, max, min, prod reduce: over the channels or every spatial dim)", call,
                       f"store the convolution in a workspace tensor and write the loops yourself ({_LAUNCHES})")
    ws = _fresh(taken, f"{acc}_gm", "conv_out")
    if _calls(_tree("suite", body, s), _POOLS):
        return _conv_pool(b, s, blocks, body, acc, dims, ws, taken)
    return [_workspace(ws, dims, s), _with_store(s, blocks, ws, _name(acc, blocks["vector"])),
            _epilogue_loop(b, s, body, acc, ws, dims, taken)]


def _epilogue_loop(b, s: Tree, body: list[Tree], acc: str, ws: str, dims: list[str], taken: set[str],
                   extra: dict[str, tuple] | None = None) -> Tree:
    """One vector split loop running `body`, whose `acc` is read from `ws` (dims `[N, K, *spatial]`): rows of
    planes, or boxes over the channels when it reduces them. `extra`: workspace tensors it stores, by shape."""
    spatial = frozenset(range(2, len(dims)))
    reduced: dict[str, Tree] = {}  # the first reduction of each kind
    for call in _calls(_tree("suite", body, s), _REDUCE):
        kw = {str(a.children[0]): a.children[1] for a in call.children[1:] if isinstance(a, Tree) and a.data == "kwarg"}
        if "axis" not in kw:
            continue  # max(a, b): element-wise
        axes = _axes(b, kw["axis"], len(dims))
        if axes not in (frozenset({1}), spatial):
            raise _err(b, f"after a convolution, {call.children[0]}(..., axis=) reduces the channels (axis=1) or every "
                       f"spatial dim (axis=({', '.join(map(str, sorted(spatial)))}))", kw["axis"],
                       f"other reductions: store the convolution in a workspace tensor and reduce it in split loops "
                       f"of your own ({_LAUNCHES})")
        reduced.setdefault("channels" if axes == frozenset({1}) else "planes", call)
    if len(reduced) == 2:
        raise _err(b, "this vector block reduces both over the channels and over the planes: the compiler cuts it into "
                   "one vector loop of one form", max(reduced.values(), key=lambda c: (c.meta.line, c.meta.column)),
                   f"write the loops yourself ({_LAUNCHES})")
    box = "channels" in reduced
    tile = _fresh(taken, "t", "pos") if box else _fresh(taken, "r", "row")
    form = Form(b, str(s.children[0]), tile, acc, ws, box=box, dims=dims, extra=extra)
    return _vector_loop(s, [dims[0], *dims[2:]] if box else dims[:2], tile, form.body(body))


def _replace(t, old: Tree, new: Tree):
    """`t` with the node `old` (by identity) replaced by `new`."""
    if t is old:
        return new
    if not isinstance(t, Tree):
        return t
    return _tree(t.data, [_replace(c, old, new) for c in t.children], t)


def _conv_pool(b, s: Tree, blocks, body: list[Tree], acc: str, dims: list[str], ws: str, taken: set[str]) -> list[Tree]:
    """A pool in the vector block: up to four launches. The conv stores acc (or relu(acc)); the statements before
    the pool and its operand run as rows storing a second workspace (unless the operand is acc or relu(acc)); a
    plane loop pools; the pool's statement (the pooled planes named) and those after it run as rows or boxes over
    the pooled planes (unless the pooled planes are stored as they are)."""
    var = str(s.children[0])
    found = [(i, c) for i, st in enumerate(body) for c in _calls(st, _POOLS)]
    if len(found) > 1:
        raise _err(b, "one pool per vector block: the compiler cuts it into launches around one pool", found[1][1],
                   f"write the launches for several pools yourself ({_LAUNCHES})")
    i, pool = found[0]
    args = pool.children[1:]
    src = args[0] if args and not (isinstance(args[0], Tree) and args[0].data == "kwarg") else None
    if src is None:
        raise b.err(E.ARGS, f"{pool.children[0]} takes the planes to pool: {pool.children[0]}(acc, kernel=2)", pool)
    if _calls(src, _POOLS):
        raise _err(b, "one pool per vector block", src)
    pre, at, post = body[:i], body[i], body[i + 1:]
    named = {str(st.children[0]) for st in pre if st.data == "assign"}
    in_src = {id(t) for t in _tokens(src)}
    late = next((t for st in [at, *post] for t in _tokens(st) if t.type == "NAME" and str(t) in named
                 and id(t) not in in_src), None)
    if late is not None:
        raise _err(b, f"'{late}' is computed before the pool and used after it: the compiler runs the two sides as "
                   "separate launches", late, f"compute '{late}' after the pool")
    relu = isinstance(src, Tree) and src.data == "call" and str(src.children[0]) == "relu" and len(src.children) == 2
    inner = src.children[1] if relu else src
    direct = not pre and isinstance(inner, Tree) and inner.data == "name" and str(inner.children[0]) == acc
    out = [_workspace(ws, dims, s),
           _with_store(s, blocks, ws, _call("relu", [_name(acc, src)], src) if direct and relu else _name(acc, src))]
    pool_in = ws
    if not direct:  # the pool's operand computed in rows, stored for the plane loop
        pool_in = _fresh(taken, "pool_in")
        out.append(_workspace(pool_in, dims, s))
        store = _tree("expr_stmt", [_call("store", [_sub(pool_in, [_name(var, src)], src), src], src)], src)
        out.append(_epilogue_loop(b, s, [*pre, store], acc, ws, dims, taken, {pool_in: tuple(dims)}))
    call = at.children[0] if at.data == "expr_stmt" else None
    dst = call.children[1] if call is not None and len(call.children) == 3 and call.children[2] is pool else None
    plane = _fresh(taken, "p", "plane")
    load = _call("load", [_sub(pool_in, [_name(plane, pool)], pool)], pool)
    pooled = _tree("call", [pool.children[0], load, *args[1:]], pool)
    if dst is not None and not post:  # store(y[blk], max_pool(...)): the plane loop stores y
        if not (isinstance(dst, Tree) and dst.data == "subscript" and len(dst.children) == 2):
            raise b.err(E.INDEX, f"store the pooled planes into a tensor indexed by the block: y[{var}]", dst)
        store = _tree("expr_stmt", [_call("store", [_sub(str(dst.children[0]), [_name(plane, dst)], dst), pooled],
                                          call)], call)
        return [*out, _vector_loop(s, dims[:2], plane, [store])]
    pdims = _pooled_dims(b, [at, *post], dims, pool)
    ws_p = _fresh(taken, "pooled_gm")
    name = _fresh(taken, "pooled")
    store = _tree("expr_stmt", [_call("store", [_sub(ws_p, [_name(plane, pool)], pool), pooled], pool)], pool)
    out += [_workspace(ws_p, pdims, s), _vector_loop(s, dims[:2], plane, [store])]
    rest = [_replace(at, pool, _name(name, pool)), *post]
    return [*out, _epilogue_loop(b, s, rest, name, ws_p, pdims, taken)]


def _pooled_dims(b, stmts: list[Tree], dims: list[str], pool: Tree) -> list[str]:
    """The pooled planes' dims `[N, K, *P]`, from a tensor the statements after the pool store: `[N, K, *P]`, or
    `[N, *P]` (a reduction over the channels)."""
    rank = len(dims) - 2
    for st in stmts:
        for c in _calls(st, ("store",)):
            dst = c.children[1] if len(c.children) > 1 else None
            p = b.scope.params.get(str(dst.children[0])) if isinstance(dst, Tree) and dst.data == "subscript" else None
            shape = tuple(p.shape) if p is not None and hasattr(p, "shape") else ()
            if len(shape) == rank + 2 and tuple(shape[:2]) == tuple(dims[:2]):
                return list(shape)
            if len(shape) == rank + 1 and shape[0] == dims[0]:
                return [dims[0], dims[1], *shape[1:]]
    raise _err(b, f"after a pool, store into a tensor of the pooled planes' shape [{dims[0]}, {dims[1]}, "
               f"{', '.join('P' + d for d in dims[2:])}] (or [{dims[0]}, ...] over the channels): its dims name the "
               "pooled sizes", pool, f"or write the launches yourself ({_LAUNCHES})")


class Form:
    """How the epilogue's slices read in the vector loop: rows of output planes, or boxes over the channels."""

    def __init__(self, b, var: str, tile: str, acc: str, ws: str, box: bool, dims: list[str],
                 batch_rows: tuple[str, ...] | None = None, extra: dict[str, tuple] | None = None):
        self.b, self.var, self.tile, self.acc, self.ws, self.box, self.dims = b, var, tile, acc, ws, box, dims
        self.extra = extra or {}  # workspace tensors the loop stores (not parameters yet), by shape
        self.matmul = batch_rows is not None
        out = tuple(dims)
        if self.matmul:  # [*batch, M, N]: whole rows; one value per row [*batch, M]; a row vector v[:] unchanged
            self.shapes = {out: "rows", out[:-1]: "value"}
        elif box:  # [N, K, *O]: boxes; [N, *O]: one value per position
            self.shapes = {out: "box", (out[0], *out[2:]): "value"}
        else:  # [N, K, *O]: rows of planes; [K]: one value per channel; [N, K]: one per plane
            self.shapes = {out: "rows", (out[1],): "value", out[:2]: "value"}

    def body(self, body: list[Tree]) -> list[Tree]:
        """The epilogue's statements for the vector loop, the accumulator read back just before its first use."""
        out = [self.stmt(st) for st in body]
        first = next((i for i, st in enumerate(body) if any(
            t.type == "NAME" and str(t) == self.acc for t in _tokens(st.children[-1]))), None)
        if first is None:
            raise self.b.err(E.KERNEL_STRUCTURE, f"the vector block never reads the accumulator '{self.acc}'", body[0],
                             f"store it, or an expression of it: store(y[{self.var}], {self.acc})")
        return out[:first] + [self.load_acc(body[first])] + out[first:]

    def load_acc(self, at: Tree) -> Tree:
        """`acc = load(ws[r, :])` (or `ws[t]`): the accumulator, read back from GM."""
        return _tree("assign", [_tok(self.acc, at.children[0]),
                                _call("load", [self.slice(self.ws, "box" if self.box else "rows", at)], at)], at)

    def slice(self, tensor: str, kind: str, at) -> Tree:
        index = [_name(self.tile, at)]
        if kind == "rows":
            index.append(_tree("full_slice", [], at))
        return _sub(tensor, index, at)

    def stmt(self, st: Tree) -> Tree:
        if st.data == "assign":
            name = str(st.children[0])
            if name == self.acc:
                raise self.b.err(E.DUPLICATE_NAME, f"'{name}' is the accumulator; name this value otherwise", st.children[0])
            return _tree("assign", [st.children[0], self.expr(st.children[1])], st)
        return _tree("expr_stmt", [self.expr(st.children[0])], st)

    def expr(self, e):
        if not isinstance(e, Tree):
            return e
        if e.data == "subscript":
            return self.subscript(e)
        if e.data == "kwarg" and str(e.children[0]) == "axis" and not self.box and not self.matmul:
            return _tree("kwarg", [e.children[0], _num(1, e.children[1])], e)  # every spatial dim: the row
        return _tree(e.data, [self.expr(c) for c in e.children], e)

    def subscript(self, e: Tree) -> Tree:
        name, *idx = e.children
        first = idx[0] if idx else None
        if not (isinstance(first, Tree) and first.data == "name" and str(first.children[0]) == self.var):
            if self.matmul and len(idx) == 1 and isinstance(first, Tree) and first.data == "full_slice":
                return e  # v[:]: a row vector
            return _tree(e.data, [self.expr(c) for c in e.children], e)
        if len(idx) == 2 and not (self.matmul and isinstance(idx[1], Tree) and idx[1].data == "full_slice") \
                or len(idx) > 2:
            raise self.b.err(E.INDEX, f"in a vector block the compiler splits off, tensors are indexed by the block: "
                             f"{name}[{self.var}]", e)
        p = self.b.scope.params.get(str(name))
        shape = tuple(p.shape) if p is not None and hasattr(p, "shape") else self.extra.get(str(name))
        kind = self.shapes.get(shape)
        if kind is None:
            want = " or ".join(f"[{', '.join(map(str, s))}]" for s in self.shapes)
            raise self.b.err(E.INDEX, f"'{name}[{self.var}]' here is a tensor of shape {want} (the vector loop reads "
                             f"{'boxes over the channels' if self.box else 'whole rows'}); '{name}' has shape "
                             f"{list(shape) if shape else '?'}", e)
        return self.slice(str(name), kind, e)


# ----------------------------------------------------------------------------- matmul


def mix_refused(t: Tree) -> bool:
    """Whether `t` calls an op a MIX epilogue cannot run (the split is cut into launches whatever N is)."""
    return bool(_calls(t, MIX_REFUSED))


def row_reductions(b, s: Tree) -> list[Tree]:
    """The calls of a matmul split's epilogue that reduce along its rows (`sum/mean/max/min/prod(v, axis=)`): a
    fused base block then spans all N columns ([] for a conv split, a malformed split, or none)."""
    blocks = _blocks(s) if s.data == "for_stmt" and is_cube_split(b, s) and not is_conv_split(b, s) else None
    if blocks is None or _cube_acc(blocks) is None:
        return []
    return [c for c in _calls(_tree("suite", _body(blocks["vector"]), s), _REDUCE)
            if any(isinstance(a, Tree) and a.data == "kwarg" and str(a.children[0]) == "axis" for a in c.children[1:])]


def _matmul(b, s: Tree, taken: set[str], rows: bool = False) -> list[Tree] | None:
    blocks = _blocks(s)
    acc = _cube_acc(blocks) if blocks else None
    if acc is None:
        return None
    body = _body(blocks["vector"])
    refused = _calls(_tree("suite", body, s), MIX_REFUSED) if body else []
    refused = refused or (row_reductions(b, s) if rows else [])
    if not refused:
        return None
    var = str(s.children[0])
    args = [a for a in s.children[1].children[1:] if not (isinstance(a, Tree) and a.data == "kwarg")]
    if len(args) not in (2, 3):
        return None  # cube_loop reports the split's form
    dims: list[str] = []
    for i, a in enumerate(args):
        for f in _factors(a) if i == 0 and len(args) == 3 else [a]:
            if not (isinstance(f, Tree) and f.data == "name"):
                return None
            dims.append(str(f.children[0]))
    for st in body:
        if st.data not in ("assign", "expr_stmt") or (st.data == "expr_stmt" and str(st.children[0].children[0]) != "store"):
            raise _err(b, f"a matmul epilogue that calls {refused[0].children[0]} runs in a vector loop of its own: it "
                       "holds assignments and stores", st, f"store(y[{var}], v)")
    ws = _fresh(taken, f"{acc}_gm", "matmul_out")
    tile = _fresh(taken, "r", "row")
    form = Form(b, var, tile, acc, ws, box=False, dims=dims, batch_rows=tuple(dims[:-2]))
    stmts = form.body(body)
    return [_workspace(ws, dims, s), _with_store(s, blocks, ws, _name(acc, blocks["vector"])),
            _vector_loop(s, dims[:-1], tile, stmts)]


def _factors(e) -> list:
    if isinstance(e, Tree) and e.data == "mul":
        return _factors(e.children[0]) + _factors(e.children[1])
    return [e]
