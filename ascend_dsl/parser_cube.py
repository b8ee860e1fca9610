"""Front end for MIX kernels: `for blk in split([Bt,] M, N, cores=AIC)` with `with cube:` / `with vector:`.

Goals: resolve the matmul operands against the split's symbols (M, N from the split, K from A),
check shapes, transposes, bias and dtypes (f16/bf16 operands, f32 bias and accumulator), and type
the vector epilogue with the accumulator as whole rows of the output block. Non-goals: hardware
capacities and base block sizes (lowering/passes/plan_cube.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from lark import Tree

from . import ir
from .diagnostics import ErrorCode as E
from .dtypes import DType
from .intrinsics import Call, intrinsic

CUBE_INPUT_DTYPES = (DType.F16, DType.BF16)
_MATMUL_KW = {"bias", "transpose_a", "transpose_b", "base_m", "base_n", "base_k"}


@dataclass(frozen=True)
class CubeScope:
    """What the epilogue's slices resolve against: the block variable and the output shape."""

    var: str
    batch: tuple[str, ...]
    m: str
    n: str

    @property
    def out_shape(self) -> tuple[str, ...]:
        return self.batch + (self.m, self.n)


@intrinsic("matmul")
def _matmul_outside_cube(b, c: Call) -> ir.Expr:
    raise b.err(E.KERNEL_STRUCTURE, "matmul(...) runs on the cube unit: it goes into a `with cube:` block", c.node,
                "for blk in split(M, N, cores=AIC):  with cube: acc = matmul(a[blk], b[blk])")


def is_cube_split(b, s: Tree) -> bool:
    """A `for ... in split(..., cores=AIC)` loop."""
    call = s.children[1]
    if b.call_name(call) != "split":
        return False
    _, kw = b.call_args(call)
    c = kw.get("cores")
    return isinstance(c, Tree) and c.data == "name" and str(c.children[0]) == "AIC"


def cube_loop(b, s: Tree) -> ir.CubeLoop:
    var_tok, call, suite = s.children
    pos, kw = b.call_args(call)
    if set(kw) != {"cores"} or len(pos) not in (2, 3):
        raise b.err(E.ARGS, "a cube split takes the output dimensions: split(M, N, cores=AIC), or "
                    "split(Bt, M, N, cores=AIC) / split(B * H, M, N, cores=AIC) for a batch", call)
    dims = []
    for i, d in enumerate(pos):
        for f in _product(b, d) if i == 0 and len(pos) == 3 else [d]:
            if not (isinstance(f, Tree) and f.data == "name"):
                raise b.err(E.ARGS, "split(M, N, cores=AIC) takes shape symbols (the batch: a product of them)", f)
            name = str(f.children[0])
            if name not in b.scope.symbols:
                raise b.undefined(f.children[0], b.scope.symbols, "a shape symbol of a tensor parameter")
            dims.append(name)
    batch, m, n = tuple(dims[:-2]), dims[-2], dims[-1]
    var = b.bind(var_tok)
    with b.scope.loop_var(var, "block"):
        return _cube_blocks(b, s, var, batch, m, n)


def _product(b, e) -> list:
    """The factors of `B * H` (a batch over several dims)."""
    if isinstance(e, Tree) and e.data == "mul":
        return _product(b, e.children[0]) + _product(b, e.children[1])
    return [e]


def _cube_blocks(b, s: Tree, var: str, batch: tuple[str, ...], m: str, n: str) -> ir.CubeLoop:
    stmts = b.statements(s.children[2])
    blocks = {}
    for st in stmts:
        if not (isinstance(st, Tree) and st.data == "with_stmt") or str(st.children[0]) not in ("cube", "vector"):
            raise b.err(E.KERNEL_STRUCTURE, "the body of a cube split is a `with cube:` block and a `with vector:` "
                        "block", st, "with cube:\n    acc = matmul(a[blk], b[blk])\nwith vector:\n    "
                        "store(c[blk], acc)")
        kind = str(st.children[0])
        if kind in blocks:
            raise b.err(E.KERNEL_STRUCTURE, f"a second `with {kind}:` block", st, "one cube block, then one vector block")
        if kind == "vector" and "cube" not in blocks:
            raise b.err(E.KERNEL_STRUCTURE, "`with vector:` comes after the `with cube:` block it consumes", st)
        blocks[kind] = st
    if set(blocks) != {"cube", "vector"}:
        raise b.err(E.KERNEL_STRUCTURE, f"a cube split needs a `with {'cube' if 'cube' not in blocks else 'vector'}:` "
                    "block", s, "with cube: computes acc = matmul(...); with vector: stores it (store(c[blk], acc))")
    scope = CubeScope(var, batch, m, n)
    mm, k = _matmul(b, blocks["cube"], scope)
    epilogue = _epilogue(b, blocks["vector"], scope, mm)
    return ir.CubeLoop(var, batch, m, n, k, (mm, epilogue), None, b.o.span(s))


def _flag(b, node, what: str) -> bool:
    if isinstance(node, Tree) and node.data == "name" and str(node.children[0]) in ("True", "False"):
        return str(node.children[0]) == "True"
    raise b.err(E.ARGS, f"{what}= takes True or False", node)


def _operand(b, node, scope: CubeScope, what: str) -> ir.TensorParam:
    """`x[blk]` (or a bare `x` for the bias): the tensor parameter."""
    if isinstance(node, Tree) and node.data == "subscript":
        name_tok, *idx = node.children
        if len(idx) != 1 or not (isinstance(idx[0], Tree) and idx[0].data == "name"
                                 and str(idx[0].children[0]) == scope.var):
            raise b.err(E.INDEX, f"index the {what} with the block variable: {name_tok}[{scope.var}]", node,
                        "the compiler derives the rows/columns each block needs")
    elif isinstance(node, Tree) and node.data == "name" and what == "bias":
        name_tok = node.children[0]
    else:
        raise b.err(E.ARGS, f"the {what} of matmul is a tensor slice like x[{scope.var}]", node)
    return b.tensor_param(name_tok)


def _matmul(b, block: Tree, scope: CubeScope) -> tuple[ir.Matmul, str]:
    body = b.statements(block.children[1])
    ok = len(body) == 1 and body[0].data == "assign" and isinstance(body[0].children[1], Tree) \
        and body[0].children[1].data == "call" and b.call_name(body[0].children[1]) == "matmul"
    if not ok:
        raise b.err(E.KERNEL_STRUCTURE, "a `with cube:` block holds one assignment: acc = matmul(a[blk], b[blk])",
                    body[0] if body else block, "the epilogue (activation, scaling, ...) goes into `with vector:`")
    name_tok, call = body[0].children
    acc = str(name_tok)
    if acc in b.scope.params or acc in b.scope.symbols or acc in b.scope.loops or acc in ("matmul", "load", "store"):
        raise b.err(E.DUPLICATE_NAME, f"cannot assign to '{acc}': it names a parameter, loop or op", name_tok)
    pos, kw = b.call_args(call)
    if len(pos) != 2 or set(kw) - _MATMUL_KW:
        unknown = sorted(set(kw) - _MATMUL_KW)
        raise b.err(E.ARGS, "matmul takes two operands" + (f"; unknown argument {', '.join(unknown)}" if unknown else ""),
                    call, "matmul(a[blk], b[blk], bias=bias, transpose_a=False, transpose_b=False)")
    ta = _flag(b, kw["transpose_a"], "transpose_a") if "transpose_a" in kw else False
    tb = _flag(b, kw["transpose_b"], "transpose_b") if "transpose_b" in kw else False
    a = _operand(b, pos[0], scope, "left operand")
    bb = _operand(b, pos[1], scope, "right operand")
    for p, node in ((a, pos[0]), (bb, pos[1])):
        if p.dtype not in CUBE_INPUT_DTYPES:
            raise b.err(E.DTYPE_UNSUPPORTED, f"the cube unit multiplies f16 or bf16 operands; '{p.name}' is {p.dtype}",
                        node, f"declare '{p.name}' as Tensor[f16, ...] (the harness rounds the task's inputs) or cast "
                        "it in a vector kernel first")
    if a.dtype is not bb.dtype:
        raise b.err(E.DTYPE_MISMATCH, f"matmul operands have dtypes {a.dtype} and {bb.dtype}", call,
                    "both operands need the same dtype")
    m, n = scope.m, scope.n
    # A is [batch?, M, K] ([batch?, K, M] transposed); K is A's other dimension.
    _batch_dims(b, a, pos[0], scope)
    rows, cols = a.shape[-2:]
    mdim, k = (cols, rows) if ta else (rows, cols)
    if mdim != m:
        shape = f"[{k}, {m}]" if ta else f"[{m}, {k}]"
        raise b.err(E.INDEX, f"'{a.name}' has shape {list(a.shape)}; as the left operand{' (transposed)' if ta else ''} "
                    f"it must be {shape}", pos[0], "transpose_a=True reads A stored as [K, M]" if not ta else None)
    if not isinstance(k, str):
        raise b.err(E.UNSUPPORTED, "the reduction dimension K must be a shape symbol", pos[0])
    _batch_dims(b, bb, pos[1], scope)
    want = (n, k) if tb else (k, n)
    if tuple(bb.shape[-2:]) != want:
        raise b.err(E.INDEX, f"'{bb.name}' has shape {list(bb.shape)}; as the right operand{' (transposed)' if tb else ''}"
                    f" it must be [{want[0]}, {want[1]}]", pos[1],
                    "transpose_b=True reads B stored as [N, K]" if not tb else None)
    bias = None
    if "bias" in kw:
        bp = _operand(b, kw["bias"], scope, "bias")
        if bp.shape != (n,):
            raise b.err(E.INDEX, f"the bias '{bp.name}' has shape {list(bp.shape)}; it must be [{n}] (one value per "
                        "output column)", kw["bias"])
        if bp.dtype is not DType.F32:
            raise b.err(E.DTYPE_UNSUPPORTED, f"the bias is added to the f32 accumulator; '{bp.name}' is {bp.dtype}",
                        kw["bias"], f'declare it as Tensor[f32, "{n}"]')
        bias = bp.name
    base = []
    for key in ("base_m", "base_n", "base_k"):
        v = kw.get(key)
        if v is None:
            base.append(None)
        elif isinstance(v, Tree) and v.data == "number" and str(v.children[0]).isdigit() and int(str(v.children[0])):
            base.append(int(str(v.children[0])))
        else:
            raise b.err(E.ARGS, f"{key}= takes a positive integer (a multiple of 16)", v)
    return ir.Matmul(acc, a.name, bb.name, bias, ta, tb, tuple(base), b.o.span(body[0])), k


def _batch_dims(b, p: ir.TensorParam, node, scope: CubeScope) -> None:
    """An operand's dims before its matrix line up with the split's batch dims from the right: each is the
    batch dim itself, 1 (shared), or another symbol whose size divides it (grouped heads: batch index i
    reads operand index i // (batch dim / its dim), as repeat_interleave; checked at launch). Missing
    leading dims are shared (a 2-D operand serves every batch)."""
    lead = p.shape[:-2]
    if len(p.shape) < 2 or len(lead) > len(scope.batch):
        want = ", ".join(scope.batch + ("rows", "cols"))
        raise b.err(E.INDEX, f"'{p.name}' has shape {list(p.shape)}; under this split a matmul operand is "
                    f"[{want}] or drops leading batch dims", node,
                    f"split({' * '.join(p.shape[:-2]) or 'Bt'}, {scope.m}, {scope.n}, cores=AIC)" if lead else None)
    for d in lead:
        if not (d == 1 or isinstance(d, str)):
            raise b.err(E.INDEX, f"'{p.name}' has a batch dim {d}; a batch dim is a shape symbol or 1", node)


def _epilogue(b, block: Tree, scope: CubeScope, mm: ir.Matmul) -> ir.TileLoop:
    acc_type = ir.tile_of(DType.F32, ir.Layout.ROWS)
    span = b.o.span(block)
    body: list[ir.Stmt] = [ir.Assign(mm.name, ir.Load(mm.name, ir.TileIndex(scope.var, True, mm.span), acc_type,
                                                      mm.span), mm.span)]
    with b.scope.tile_loop(ir.RowTiles((scope.m,), (scope.n,)), cube=scope) as tile:
        tile.locals[mm.name] = acc_type
        body += [b.tile_stmt(st, scope.var) for st in b.statements(block.children[1])]
    if not any(isinstance(s, ir.Store) for s in body):
        raise b.err(E.KERNEL_STRUCTURE, "the vector block stores nothing", block, f"store(c[{scope.var}], {mm.name})")
    used = any(isinstance(e, ir.Ref) and e.name == mm.name for s in body[1:] if isinstance(s, (ir.Assign, ir.Store))
               for e in ir.walk_expr(s.value))
    if not used:
        raise b.err(E.KERNEL_STRUCTURE, f"the vector block never reads the accumulator '{mm.name}'", block,
                    f"store it, or an expression of it: store(c[{scope.var}], {mm.name})")
    return ir.TileLoop(scope.var, scope.var, None, 2, tuple(body), tile.shape, span=span)


def cube_slice(b, e, scope: CubeScope) -> tuple[str, ir.TileIndex, ir.Layout]:
    """`r[blk]` in the epilogue: the output block of an [M, N] (or [Bt, M, N]) tensor, as whole rows."""
    if not (isinstance(e, Tree) and e.data == "subscript"):
        raise b.err(E.INDEX, f"expected a tensor slice like c[{scope.var}]", e)
    name_tok, *idx = e.children
    name = str(name_tok)
    p = b.tensor_param(name_tok)
    if len(idx) == 1 and isinstance(idx[0], Tree) and idx[0].data == "full_slice":  # v[:]: one [N] row for every row
        if tuple(p.shape) != (scope.n,):
            raise b.err(E.INDEX, f"'{name}[:]' in a `with vector:` block is a row over the output's columns: it needs "
                        f"a [{scope.n}] tensor; '{name}' has shape {list(p.shape)}", e)
        return name, ir.TileIndex(None, False, b.o.span(idx[0])), ir.Layout.ROW
    if len(idx) == 1 and tuple(p.shape) == (*scope.batch, scope.m) and isinstance(idx[0], Tree) and \
            idx[0].data == "name" and str(idx[0].children[0]) == scope.var:  # s[blk]: one value per row of the block
        return name, ir.TileIndex(scope.var, False, b.o.span(idx[0])), ir.Layout.COL
    full = len(idx) == 2 and isinstance(idx[1], Tree) and idx[1].data == "full_slice"  # c[blk, :] reads the same
    if len(idx) not in (1, 2) or (len(idx) == 2 and not full) or not (
            isinstance(idx[0], Tree) and idx[0].data == "name" and str(idx[0].children[0]) == scope.var):
        raise b.err(E.INDEX, f"in a `with vector:` block, tensors are indexed by the block: {name}[{scope.var}]", e)
    if tuple(p.shape[-2:]) != (scope.m, scope.n) or len(p.shape) > len(scope.out_shape) or any(
            not (d == 1 or isinstance(d, str)) for d in p.shape[:-2]):
        raise b.err(E.INDEX, f"'{name}[{scope.var}]' needs a tensor shaped like the output "
                    f"[{', '.join(scope.out_shape)}] (batch dims may be 1, grouped or missing: shared); '{name}' has "
                    f"shape {list(p.shape)}", e)
    return name, ir.TileIndex(scope.var, True, b.o.span(idx[0])), ir.Layout.ROWS
