"""Front end for CONV kernels: `for blk in split(N, K, *OUT, cores=AIC)` holding `with cube: acc = convNd(...)`.

Goals: resolve the convolution's operands (x `[N, C, *spatial]`, w `[K, C, *kernel]`, f16/bf16; for
conv_transposeNd w is `[C, K / groups, *kernel]`, nn.ConvTranspose's layout), its integer options (stride,
padding, dilation, output_padding: literals, one value for every spatial dim or a tuple of one per dim;
groups: a literal or a shape symbol), its f32 `bias=` tensor, and the
`with vector:` block,
which stores the f32 accumulator into an output `[N, K, *OUT]`, optionally through `relu` and a `cast`.
Non-goals: what the lowering supports (lowering/passes/select_kind.py reports that, located) and the
hardware capacities (lowering/passes/plan_conv.py).
"""

from __future__ import annotations

from lark import Tree

from . import ir
from .diagnostics import ErrorCode as E
from .dtypes import DType
from .intrinsics import Call, intrinsic

CONV_INPUT_DTYPES = (DType.F16, DType.BF16)
CONV_OPS = {"conv1d": 1, "conv2d": 2, "conv3d": 3, "conv_transpose1d": 1, "conv_transpose2d": 2, "conv_transpose3d": 3}
_CONV_KW = ("stride", "padding", "dilation")
_CONV_ARGS = (*_CONV_KW, "bias", "groups")
_EXAMPLE = ("for blk in split(N, K, OH, OW, cores=AIC):\n    with cube:\n        acc = conv2d(x[blk], w[blk])\n"
            "    with vector:\n        store(y[blk], acc)")


def _outside_cube(b, c: Call) -> ir.Expr:
    raise b.err(E.KERNEL_STRUCTURE, f"{c.name}(...) runs on the cube unit: it goes into a `with cube:` block", c.node,
                _EXAMPLE)


for _name in CONV_OPS:
    intrinsic(_name)(_outside_cube)


def is_conv_split(b, s: Tree) -> bool:
    """A cube split whose `with cube:` block calls a convolution."""
    for st in b.statements(s.children[2]):
        if isinstance(st, Tree) and st.data == "with_stmt" and str(st.children[0]) == "cube":
            for inner in b.statements(st.children[1]):
                if isinstance(inner, Tree) and inner.data == "assign" and isinstance(inner.children[1], Tree) \
                        and inner.children[1].data == "call" and b.call_name(inner.children[1]) in CONV_OPS:
                    return True
    return False


def conv_loop(b, s: Tree) -> ir.ConvLoop:
    var_tok, call, suite = s.children
    pos, kw = b.call_args(call)
    dims = []
    for d in pos:
        if not (isinstance(d, Tree) and d.data == "name") or str(d.children[0]) not in b.scope.symbols:
            raise b.err(E.ARGS, "a convolution's split takes the output's shape symbols: split(N, K, OH, OW, "
                        "cores=AIC)", d)
        dims.append(str(d.children[0]))
    if set(kw) != {"cores"}:
        raise b.err(E.ARGS, "split(N, K, OH, OW, cores=AIC) takes the output dims and cores=AIC", call)
    var = b.bind(var_tok)
    with b.scope.loop_var(var, "block"):
        blocks = _blocks(b, s)
        conv = _conv(b, blocks["cube"], var, tuple(dims), call)
        out, dtype, relu = _store(b, blocks["vector"], var, conv, tuple(dims))
    return ir.ConvLoop(var, tuple(dims), conv, out, dtype, relu, None, b.o.span(s))


def _blocks(b, s: Tree) -> dict[str, Tree]:
    blocks: dict[str, Tree] = {}
    for st in b.statements(s.children[2]):
        if not (isinstance(st, Tree) and st.data == "with_stmt") or str(st.children[0]) not in ("cube", "vector"):
            raise b.err(E.KERNEL_STRUCTURE, "the body of a convolution's split is a `with cube:` block and a "
                        "`with vector:` block", st, _EXAMPLE)
        kind = str(st.children[0])
        if kind in blocks or (kind == "vector" and "cube" not in blocks):
            raise b.err(E.KERNEL_STRUCTURE, "one `with cube:` block, then one `with vector:` block", st, _EXAMPLE)
        blocks[kind] = st
    if "vector" not in blocks:
        raise b.err(E.KERNEL_STRUCTURE, "a convolution's split needs a `with vector:` block that stores the "
                    "accumulator", s, _EXAMPLE)
    return blocks


def _int_option(b, node, key: str, rank: int) -> tuple[int, ...]:
    """`key=v` (every spatial dim) or `key=(vd, vh, vw)` (one per spatial dim, PyTorch's order): integer literals."""
    least = 0 if key in ("padding", "output_padding") else 1
    is_tuple = isinstance(node, Tree) and node.data == "tuple_expr"
    items = node.children if is_tuple else [node]
    if is_tuple and len(items) != rank:
        raise b.err(E.ARGS, f"{key}= takes one integer or a tuple of {rank} (one per spatial dim); this one has "
                    f"{len(items)}", node)
    values = []
    for item in items:
        if not (isinstance(item, Tree) and item.data == "number" and str(item.children[0]).isdigit()
                and int(str(item.children[0])) >= least):
            raise b.err(E.ARGS, f"{key}= takes an integer literal >= {least} (one for every spatial dim) or a tuple "
                        f"of {rank}", item)
        values.append(int(str(item.children[0])))
    return tuple(values) * (rank if len(values) == 1 else 1)


def _operand(b, node, var: str, what: str) -> ir.TensorParam:
    if not (isinstance(node, Tree) and node.data == "subscript" and len(node.children) == 2
            and isinstance(node.children[1], Tree) and node.children[1].data == "name"
            and str(node.children[1].children[0]) == var):
        raise b.err(E.INDEX, f"the {what} of a convolution is a tensor indexed by the block: x[{var}]", node,
                    "the compiler derives the input rows and channels each output block needs")
    return b.tensor_param(node.children[0])


def _conv(b, block: Tree, var: str, dims: tuple[str, ...], split_call: Tree) -> ir.Conv:
    body = b.statements(block.children[1])
    ok = len(body) == 1 and body[0].data == "assign" and isinstance(body[0].children[1], Tree) \
        and body[0].children[1].data == "call" and b.call_name(body[0].children[1]) in CONV_OPS
    if not ok:
        raise b.err(E.KERNEL_STRUCTURE, "a convolution's `with cube:` block holds one assignment: "
                    "acc = conv2d(x[blk], w[blk])", body[0] if body else block, _EXAMPLE)
    name_tok, call = body[0].children
    acc = str(name_tok)
    if acc in b.scope.params or acc in b.scope.symbols or acc in b.scope.loops:
        raise b.err(E.DUPLICATE_NAME, f"cannot assign to '{acc}': it names a parameter or loop", name_tok)
    op = b.call_name(call)
    rank = CONV_OPS[op]
    transposed = op.startswith("conv_transpose")
    pos, kw = b.call_args(call)
    allowed = (*_CONV_ARGS, "output_padding") if transposed else _CONV_ARGS
    unknown = sorted(set(kw) - set(allowed))
    if len(pos) != 2 or unknown:
        form = "output_padding=0, " if transposed else ""
        raise b.err(E.ARGS, f"{op} takes an input and a weight" + (f"; unknown argument {', '.join(unknown)}"
                    if unknown else ""), call,
                    f"{op}(x[{var}], w[{var}], stride=1, padding=0, {form}dilation=1, groups=1, bias=b)")
    x = _operand(b, pos[0], var, "input")
    w = _operand(b, pos[1], var, "weight")
    for p, node in ((x, pos[0]), (w, pos[1])):
        if p.dtype not in CONV_INPUT_DTYPES:
            raise b.err(E.DTYPE_UNSUPPORTED, f"the cube unit multiplies f16 or bf16 operands; '{p.name}' is {p.dtype}",
                        node, f"declare '{p.name}' as Tensor[f16, ...] (the harness rounds the task's f32 data "
                        "to f16; the accumulator stays f32)")
    if x.dtype is not w.dtype:
        raise b.err(E.DTYPE_MISMATCH, f"{op} operands have dtypes {x.dtype} and {w.dtype}", call)
    if len(x.shape) != rank + 2:
        raise b.err(E.INDEX, f"'{x.name}' has rank {len(x.shape)}; the input of {op} is [N, C, "
                    f"{', '.join(['D', 'H', 'W'][3 - rank:])}]", pos[0])
    groups = _groups(b, kw["groups"]) if "groups" in kw else 1
    if transposed:
        _transposed_weight(b, op, x, w, groups, dims, pos[1], split_call)
    else:
        _weight(b, op, x, w, groups, dims, pos[1], split_call)
    opts = {k: _int_option(b, kw[k], k, rank) if k in kw else ((0,) if k == "padding" else (1,)) * rank
            for k in _CONV_KW}
    out_pad: tuple[int, ...] = ()
    if transposed:
        out_pad = _int_option(b, kw["output_padding"], "output_padding", rank) if "output_padding" in kw else (0,) * rank
        for i, (op_, st, dl) in enumerate(zip(out_pad, opts["stride"], opts["dilation"], strict=True)):
            if op_ >= max(st, dl):
                raise b.err(E.ARGS, f"output_padding={op_} must be smaller than the stride or the dilation (of spatial "
                            f"dim {i}; PyTorch's rule: it only picks among the output sizes the stride leaves open)",
                            kw["output_padding"])
    bias = _bias(b, kw["bias"], x, w, dims[1]) if "bias" in kw else None
    return ir.Conv(acc, x.name, w.name, rank, opts["stride"], opts["padding"], opts["dilation"], bias, groups,
                   b.o.span(body[0]), transposed, out_pad)


def _spatial(rank: int, prefix: str) -> str:
    return ", ".join([prefix + a for a in ("D", "H", "W")][3 - rank:])


def _weight(b, op: str, x, w, groups, dims, node, split_call) -> None:
    """convNd: w is [K, C / groups, *kernel] and the split lists (N, K, *out)."""
    rank = len(x.shape) - 2
    if groups == 1 and (len(w.shape) != rank + 2 or w.shape[1] != x.shape[1]):
        raise b.err(E.INDEX, f"'{w.name}' has shape {list(w.shape)}; the weight of {op} is [K, {x.shape[1]}, "
                    f"{_spatial(rank, 'K')}] (its second dim is the input's channels)", node)
    if groups != 1 and (len(w.shape) != rank + 2 or w.shape[1] == x.shape[1]):
        raise b.err(E.INDEX, f"'{w.name}' has shape {list(w.shape)}; with groups= the weight of {op} is [K, CG, "
                    f"{_spatial(rank, 'K')}], CG = {x.shape[1]} / groups input channels per "
                    "group (its own size, 1 for depthwise)", node)
    want = (x.shape[0], w.shape[0])
    if len(dims) != rank + 2 or dims[:2] != want:
        raise b.err(E.ARGS, f"the split of {op} lists the output's dims: split({want[0]}, {w.shape[0]}, "
                    f"{_spatial(rank, 'O')}, cores=AIC)", split_call)


def _transposed_weight(b, op: str, x, w, groups, dims, node, split_call) -> None:
    """conv_transposeNd: w is [C, K / groups, *kernel] (nn.ConvTranspose*d's layout) and the split lists
    (N, K, *out); with groups= K is its own symbol (K = the weight's dim 1 x groups, checked at launch)."""
    rank = len(x.shape) - 2
    if len(w.shape) != rank + 2 or w.shape[0] != x.shape[1]:
        raise b.err(E.INDEX, f"'{w.name}' has shape {list(w.shape)}; the weight of {op} is [{x.shape[1]}, "
                    f"{'K' if groups == 1 else 'KG'}, {_spatial(rank, 'K')}] (its first dim is the input's channels, "
                    "as nn.ConvTranspose stores it)", node)
    if len(dims) != rank + 2 or dims[0] != x.shape[0]:
        raise b.err(E.ARGS, f"the split of {op} lists the output's dims: split({x.shape[0]}, K, "
                    f"{_spatial(rank, 'O')}, cores=AIC)", split_call)
    if groups == 1 and dims[1] != w.shape[1]:
        raise b.err(E.ARGS, f"the output channels of {op} are the weight's dim 1: split({x.shape[0]}, {w.shape[1]}, "
                    f"{_spatial(rank, 'O')}, cores=AIC)", split_call)
    if groups != 1 and dims[1] == w.shape[1]:
        raise b.err(E.ARGS, f"with groups= the output of {op} has {w.shape[1]} x groups channels: give them their own "
                    f"symbol, split({x.shape[0]}, K, {_spatial(rank, 'O')}, cores=AIC) with y [N, K, ...]", split_call)


def _groups(b, node) -> int | str:
    """`groups=G`: an integer literal >= 1, or a shape symbol (groups=C: depthwise for any channel count)."""
    if isinstance(node, Tree) and node.data == "number" and str(node.children[0]).isdigit() \
            and int(str(node.children[0])) >= 1:
        return int(str(node.children[0]))
    if isinstance(node, Tree) and node.data == "name" and str(node.children[0]) in b.scope.symbols:
        return str(node.children[0])
    raise b.err(E.ARGS, "groups= takes an integer literal >= 1 or a shape symbol (groups=C for depthwise)", node)


def _bias(b, node, x: ir.TensorParam, w: ir.TensorParam, k) -> str:
    """`bias=conv_bias`: an f32 [K] tensor, K the output channels (`nn.Conv2d(..., bias=True)` binds `conv_bias`)."""
    if not (isinstance(node, Tree) and node.data == "name"):
        raise b.err(E.ARGS, "bias= takes a tensor parameter: bias=conv_bias", node)
    p = b.tensor_param(node.children[0])
    if p.name in (x.name, w.name):
        raise b.err(E.ARGS, f"bias= takes its own [{k}] tensor, not '{p.name}'", node)
    if p.dtype is not DType.F32:
        raise b.err(E.DTYPE_UNSUPPORTED, f"the convolution's bias is added in f32; '{p.name}' is {p.dtype}", node,
                    f"declare '{p.name}' as Tensor[f32, \"{k}\"] (the harness passes the task's f32 bias as is)")
    if tuple(p.shape) != (k,):
        raise b.err(E.INDEX, f"'{p.name}' has shape {list(p.shape)}; the bias of a convolution is [{k}] (one "
                    "value per output channel)", node)
    return p.name


def _store(b, block: Tree, var: str, conv: ir.Conv, dims: tuple[str, ...]) -> tuple[str, DType, bool]:
    """`store(y[blk], E)` with E one of acc, relu(acc), cast(acc, T), cast(relu(acc), T)."""
    body = b.statements(block.children[1])
    form = f"store(y[{var}], {conv.name}), relu({conv.name}) or cast(relu({conv.name}), f16)"
    ok = len(body) == 1 and body[0].data == "expr_stmt" and isinstance(body[0].children[0], Tree) \
        and body[0].children[0].data == "call" and b.call_name(body[0].children[0]) == "store"
    if not ok:
        raise b.err(E.UNSUPPORTED, "a convolution's `with vector:` block is one store of the accumulator in this "
                    f"version: {form}", body[0] if body else block,
                    "bias, other activations, norms and pools after a convolution are not lowered yet")
    pos, kw = b.call_args(body[0].children[0])
    if len(pos) != 2 or kw:
        raise b.err(E.ARGS, f"store takes a destination and a value: store(y[{var}], {conv.name})", body[0])
    out = _operand(b, pos[0], var, "output")
    if out.name in (conv.x, conv.w, conv.bias):
        raise b.err(E.KERNEL_STRUCTURE, f"'{out.name}' is both loaded and stored", pos[0],
                    "a tensor is an input or an output: store into another tensor")
    if tuple(out.shape) != dims:
        raise b.err(E.INDEX, f"'{out.name}' has shape {list(out.shape)}; the convolution's output is "
                    f"[{', '.join(dims)}] (the split's dims)", pos[0])
    dtype, relu, e = DType.F32, False, pos[1]
    if isinstance(e, Tree) and e.data == "call" and b.call_name(e) == "cast":
        cpos, ckw = b.call_args(e)
        if len(cpos) != 2 or ckw:
            raise b.err(E.ARGS, "cast takes a value and a dtype: cast(acc, f16)", e)
        dtype, e = b.dtype(cpos[1].children[0] if isinstance(cpos[1], Tree) else cpos[1]), cpos[0]
        if dtype not in (DType.F16, DType.BF16, DType.F32):
            raise b.err(E.DTYPE_UNSUPPORTED, f"the convolution's f32 result is stored as f32, f16 or bf16, not {dtype}",
                        cpos[1])
    if isinstance(e, Tree) and e.data == "call" and b.call_name(e) == "relu":
        rpos, _ = b.call_args(e)
        relu, e = True, rpos[0] if len(rpos) == 1 else e
    if not (isinstance(e, Tree) and e.data == "name" and str(e.children[0]) == conv.name):
        raise b.err(E.UNSUPPORTED, f"this version stores the accumulator as {form}", pos[1],
                    "bias, scaling and other activations after a convolution are not lowered yet")
    if out.dtype is not dtype:
        raise b.err(E.DTYPE_MISMATCH, f"'{out.name}' is {out.dtype} but the stored value is {dtype}", pos[1],
                    f"store(y[{var}], cast({conv.name}, {out.dtype}))" if out.dtype in (DType.F16, DType.BF16)
                    else f"declare '{out.name}' as Tensor[{dtype}, ...]")
    return out.name, dtype, relu
