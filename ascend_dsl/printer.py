"""IR -> DSL-shaped text. The dump format of `--dump-after` and of pass golden files.

Surface kernels print as valid DSL (`parse(print(k)) == k`); lowered forms (stages, buffers,
vector ops) print in the same style with their own keywords.
"""

from __future__ import annotations

from . import ir
from .dtypes import DType
from .ops import BINARY_OPERATORS, COMPARE_OPERATORS, OPS, POOLS, Rule, grid_params
from .parser_scatter import named

_INFIX = {v: k for k, v in {**BINARY_OPERATORS, **COMPARE_OPERATORS}.items()}
#: The extra axis of the boxes of the tile loop being printed (box reductions print `axis=` with it).
_box_axis = [1]
_PREC = {"lt": 1, "le": 1, "gt": 1, "ge": 1, "eq": 1, "ne": 1, "add": 2, "sub": 2, "mul": 3, "div": 3}


def fmt_const(v: float | int) -> str:
    return repr(float(v)) if isinstance(v, float) else str(v)


def expr(e: ir.Expr, parent: int = 0) -> str:
    match e:
        case ir.Const(value=v):
            s = fmt_const(v)
            return f"({s})" if s.startswith("-") and parent else s
        case ir.Ref(name=n):
            return n
        case ir.RowLength():
            return "row_length"
        case ir.RowValue():
            return "row_value"
        case ir.VectorMath(op=op, args=args):
            return f"{op}({', '.join(expr(a) for a in args)})@vector"
        case ir.Load(tensor=t, index=i) if i.acc:  # a slot accumulator's totals, per row
            return f"{t}[{i}]"
        case ir.Load(tensor=t, index=i):
            return f"load({t}[{i}])"
        case ir.Op(op="broadcast_rows", args=(a,)):  # implicit in the text (parser_broadcast.py)
            return expr(a, parent)
        case ir.Op(op="neg", args=(a,)):
            return f"(-{expr(a, 4)})" if parent > 4 else f"-{expr(a, 4)}"
        case ir.Op(op="pow", args=(a, b)):
            s = f"{expr(a, 6)} ** {expr(b, 5)}"
            return f"({s})" if parent > 5 else s
        case ir.Op(op=op, args=(a,)) if OPS[op].rule is Rule.SCAN:
            flags = (", reverse=True" if OPS[op].reverse else "") + (", exclusive=True" if OPS[op].exclusive else "")
            return f"{OPS[op].call}({expr(a)}, axis=1{flags})"
        case ir.Op(op=op, args=(a, k, st, pad, dil)) if op in POOLS:
            dilation = "" if isinstance(dil, ir.Const) and dil.value == 1 else f", dilation={expr(dil)}"
            return f"{op}({expr(a)}, kernel={expr(k)}, stride={expr(st)}, padding={expr(pad)}{dilation})"
        case ir.Op(op=op, args=(a,)) if op.startswith("resize_") and "_aa" in op:
            return f"{OPS[op].call}({expr(a)}{', align_corners=True' if op.endswith('_ac') else ''}, antialias=True)"
        case ir.Op(op="resize_linear_ac" | "resize_cubic_ac" as op, args=(a,)):
            return f"{OPS[op].call}({expr(a)}, align_corners=True)"
        case ir.Op(op=op, args=(a, grid)) if OPS[op].rule is Rule.RESIZE:  # grid_sample: (plane, grid name)
            mode, padding, align = grid_params(op)
            return f"grid_sample({expr(a)}, {grid.value}, mode={mode!r}, padding_mode={padding!r}, align_corners={align})"
        case ir.Op(op=op, args=(a,)) if OPS[op].rule is Rule.RESIZE:
            return f"{op}({expr(a)})"
        case ir.Op(op=op, args=(a,)) if OPS[op].rule in (Rule.REDUCE, Rule.ARG_REDUCE):
            axis = _box_axis[-1] if a.type.layout is ir.Layout.BOX else 1
            return f"{OPS[op].call or op}({expr(a)}, axis={axis})"
        case ir.Op(op="gather_middle", args=(index, x, _, _)):
            return f"gather({x.value}, {expr(index)})"
        case ir.Op(op="index_select_cols", args=(index, x, _)):
            return f"{'gather' if index.type.layout is ir.Layout.ROWS else 'index_select'}({x.value}, {expr(index)})"
        case ir.Op(op=op, args=(a, index, src, _, alpha)) if OPS[op].rule is Rule.ROW_SCATTER:  # (rows, names, V, alpha)
            extra = {"index_add": "" if isinstance(alpha, ir.Const) and alpha.value == 1 else f", alpha={expr(alpha)}",
                     "index_put_acc": ", accumulate=True"}.get(op, "")
            return f"{OPS[op].call or op}({expr(a)}, {index.value}, {src.value if named(src) else expr(src)}{extra})"
        case ir.Op(op="col_minus_row"):
            return "col_index() - row_index()" if parent <= _PREC["sub"] else "(col_index() - row_index())"
        case ir.Op(op=op) if OPS[op].rule is Rule.POSITION:  # its operands are the loop's shapes
            return f"{op}()"
        case ir.Op(op="cast", args=(a,), type=ty):
            return f"cast({expr(a)}, {ty.dtype})"
        case ir.Op(op=op, args=(a, b)) if op in _INFIX:
            p = _PREC[op]
            s = f"{expr(a, p)} {_INFIX[op]} {expr(b, p + 1)}"
            return f"({s})" if p < parent else s
        case ir.Op(op=op, args=args):
            return f"{op}({', '.join(expr(a) for a in args)})"
    raise TypeError(e)


def _value(v: ir.Expr | str) -> str:
    return v if isinstance(v, str) else expr(v)


def operand(o: ir.Operand) -> str:
    return o if isinstance(o, str) else expr(o)


def stmt(s: ir.Stmt, ind: str) -> list[str]:
    match s:
        case ir.Assign(name=n, value=v):
            return [f"{ind}{n} = {expr(v)}"]
        case ir.Store(tensor=t, index=i, value=v):
            return [f"{ind}store({t}[{i}], {expr(v)})"]
        case ir.ChainStage(index=i, kernel=sub, sync=sync, reads=reads, writes=writes):
            head = [f"{ind}SyncAll()  # before stage {i}: it reads {', '.join(reads)}"] if sync else []
            note = f"{ind}# stage {i} ({sub.name}): reads {', '.join(reads) or '-'}, writes {', '.join(writes) or '-'}"
            return head + [note] + block(sub.body, ind)
        case ir.Launch(index=i, kernel=sub, reads=reads, writes=writes):
            note = (f"{ind}# launch {i} ({sub.name}, {sub.kind.value if sub.kind else 'not lowered'}): "
                    f"reads {', '.join(reads) or '-'}, writes {', '.join(writes) or '-'}")
            return [note] + block(sub.body, ind)
        case ir.FlashAttention(stages=stages, bq=bq, bk=bk, mask=mask, ring=ring):
            note = (f"{ind}# flash attention (the two stages below, fused): blocks of <= {bq} query rows x <= {bk} keys, "
                    f"online softmax{_flash_mask(mask)}")
            plan = [f"{ind}# {'ring' if ring.taken else 'no ring'}: {ring.why}"] if ring is not None else []
            return [note] + plan + block(stages, ind)
        case ir.SplitLoop(var=v, extent=ext, core_kind=kind, cores=c, body=body):
            cores = kind if c is None else str(c)
            return [f"{ind}for {v} in split({' * '.join(ext)}, cores={cores}):"] + block(body, ind + "    ")
        case ir.TileLoop(var=v, over=o, size=size, buffers=b, body=body, buffers_decl=decl, max_tile=mt, chunk=ch):
            chunk = "" if ch is None else f", chunk={ch}"
            head = [f"{ind}for {v} in tile({o}, size={'auto' if size is None else size}, buffers={b}{chunk}):"]
            inner = ind + "    "
            if mt is not None:
                head.append(f"{inner}# max_tile = {mt} elements")
            if s.kind is ir.LoopKind.ROWS and s.shape.chunked is not None:  # rows longer than UB (plan_chunks)
                head += [f"{inner}# {line}" for line in chunk_plan(s.shape.chunked)]
            plan = getattr(s.shape, "plan", None)  # box and window plans (plan_box, plan_windows)
            if isinstance(plan, ir.BoxPlan):
                head.append(f"{inner}# box rows {plan.pitch_granule}-element aligned; scratch trees for "
                            f"{', '.join(plan.reread) or 'none'}; whole-row shares: {plan.whole_row_shares}"
                            + ("; the whole extra axis per tile" if plan.whole_axis else ""))
            elif isinstance(plan, ir.WindowPlan):
                head.append(f"{inner}# window {', '.join(map(operand, plan.window))}; planes {list(plan.in_dims)} -> "
                            f"{list(plan.out_dims)}; outer taps as vector rows: {plan.rows_path}")
            for d in decl:
                lay = "" if d.layout is ir.Layout.FLAT else f", {d.layout.value}"
                head.append(f"{inner}# buffer {d.name}: {d.position.value} {d.dtype} x{d.num} ({d.bits} bit/elem{lay})")
            _box_axis.append(s.shape.axis if s.kind is ir.LoopKind.BOX else 1)
            try:
                return head + block(body, inner)
            finally:
                _box_axis.pop()
        case ir.Stage(kind=k, body=body):
            return [f"{ind}with {k.value}:"] + block(body, ind + "    ")
        case ir.CopyIn(buffer=b, tensor=t, index=i):
            return [f"{ind}{b} <- copy_in({t}[{i}])"]
        case ir.CopyOut(tensor=t, index=i, buffer=b):
            return [f"{ind}copy_out({t}[{i}], {b})"]
        case ir.AccDecl(name=n, init=v):
            return [f"{ind}{n} = {fmt_const(float(v))}"]
        case ir.SlotAccDecl(name=n, slots=slots):
            return [f"{ind}{n} = zeros({' * '.join(slots)})"]
        case ir.SlotAccumulate(name=n, value=v):
            return [f"{ind}{n}[{_row_var(s)}] += {_value(v)}"]
        case ir.Accumulate(name=n, reduce=r, value=v, moments=(mean, m2, step)):
            what = {"shift": f"the chunk before merged into ({mean}, {m2}); the shift", "sum": "the chunk's deviations",
                    "sq": "their squares"}[step]
            return [f"{ind}{n} += {OPS[r].call}({_value(v)})  # {what}"]
        case ir.Accumulate(name=n, combine=ir.Combine.ADD, reduce=r, value=v):
            return [f"{ind}{n} += {OPS[r].call}({_value(v)})" + _folded(s)]
        case ir.Accumulate(name=n, combine=c, reduce=r, value=v):
            return [f"{ind}{n} = {c.value}({n}, {OPS[r].call}({_value(v)}))" + _folded(s)]
        case ir.ScalarAssign(name=n, value=v, launch=launch):
            return [f"{ind}{n} = {expr(v)}" + ("  # at launch (host)" if launch else "")]
        case ir.ScalarLoad(name=n, tensor=t):
            return [f"{ind}{n} = load({t}[0])"]
        case ir.ScalarStore(tensor=t, value=v):
            return [f"{ind}store({t}[0], {expr(v)})"]
        case ir.VecOp(api=api, dst=d, srcs=srcs, attrs=attrs):
            extra = [f"{k}={v}" for k, v in attrs]
            return [f"{ind}{d} <- {api}({', '.join([operand(x) for x in srcs] + extra)})"]
        case ir.PerRow(col=c, ops=ops):
            head = f"{ind}per row" + (f" (row_value = {c}[i])" if c else "") + ":"
            return [head] + [line for op in ops for line in stmt(op, ind + "    ")]
        case ir.CubeLoop():
            return cube_loop(s, ind)
        case ir.ConvLoop():
            return conv_loop(s, ind)
        case ir.Convert5hd(x=x, w=w, x5hd=xo, w5hd=wo):  # compiler-written (lowering/passes/route_conv5hd.py)
            return [f"{ind}{xo}, {wo} = to_nc1hwc0({x}, {w})  # vector launch: NCHW -> [N][C1][H][W][16]"]
    raise TypeError(s)


def _per_dim(v: tuple[int, ...]) -> str:
    """A convolution option as written: one value for every spatial dim, or a tuple."""
    return str(v[0]) if len(set(v)) == 1 else f"({', '.join(map(str, v))})"


def conv_loop(s: ir.ConvLoop, ind: str) -> list[str]:
    c = s.conv
    dims = ", ".join(s.dims)
    opts = ", ".join(f"{k}={_per_dim(v)}" for k, v in (("stride", c.stride), ("padding", c.padding),
                                                         ("dilation", c.dilation)))
    if c.transposed:
        opts += f", output_padding={_per_dim(c.output_padding)}"
    opts += (f", groups={c.groups}" if c.groups != 1 else "") + (f", bias={c.bias}" if c.bias else "")
    op = f"conv_transpose{c.rank}d" if c.transposed else f"conv{c.rank}d"
    inner = ind + "    "
    value = f"relu({c.name})" if s.relu else c.name
    value = value if s.out_dtype is DType.F32 else f"cast({value}, {s.out_dtype})"
    lines = [f"{ind}for {s.var} in split({dims}, cores=AIC):", f"{inner}with cube:",
             f"{inner}    {c.name} = {op}({c.x}[{s.var}], {c.w}[{s.var}], {opts})"
             + (f"  # NC1HWC0 route: reads {c.x5hd}, {c.w5hd}" if c.x5hd else "")]
    if s.plan is not None:
        p = s.plan
        lines.append(f"{inner}    # tiles <= {p.max_m} out channels x {p.max_n} pixels x {p.max_k} depth")
    return lines + [f"{inner}with vector:", f"{inner}    store({s.out}[{s.var}], {value})"]


def chunk_plan(plan: ir.ChunkPlan | ir.NoChunk) -> list[str]:
    """What runs per row when rows are longer than UB (lowering/passes/plan_chunks.py), or why nothing
    can; each pass's tile loop follows its summary line."""
    if isinstance(plan, ir.NoChunk):
        return [f"rows longer than UB: no chunked mode: {plan.reason}"]
    lines = [f"rows longer than UB: {len(plan.passes)} chunked pass(es) per row:"]
    lines += ["  fewer rows than cores: a group of cores shares each row (plan_row_groups)"] if plan.row_groups else []
    for st in plan.steps:
        match st:
            case ir.RunPass(index=i):
                p = plan.passes[i]
                stores = [s.tensor for s in ir.walk(p.loop.body) if isinstance(s, (ir.Store, ir.CopyOut))]
                what = [f"folds {', '.join(f'{f.name} ({_fold(f)})' for f in p.reductions)}"] if p.reductions else []
                what += [f"stores {', '.join(stores)}"] if stores else []
                lines.append(f"  pass {i}: {'; '.join(what)}; chunks <= {p.max_chunk} elements")
                lines += stmt(p.loop, "    ")
            case ir.RowLoad(slot=True):
                lines.append(f"  {st.name}Row = {st.tensor}[r]")
            case ir.RowLoad():
                lines.append(f"  {st.name}Row = load({st.tensor}[r])")
            case ir.RowScalar():
                lines.append(f"  {st.name}Row = {expr(st.value)}")
            case ir.RowSlotAccumulate():
                lines.append(f"  {st.name}[r] += {expr(st.value)}")
            case ir.RowAccumulate():
                lines.append(f"  {st.name} <- {st.combine.value}({st.name}, {expr(st.value)})")
            case ir.RowStore():
                lines.append(f"  store({st.tensor}[r], {expr(st.value)})")
    return lines


def _fold(f: ir.Fold) -> str:
    if f.moments:
        return f"{'mean' if f.name == f.moments[0] else 'm2'}:{'/'.join(f.moments)}"
    return f"online_max:{f.online_sum}" if f.online_sum else f.combine.value


def _folded(s: ir.Accumulate) -> str:
    return "  # halves folded in place" if s.fold_in_place else ""


def _row_var(s: ir.SlotAccumulate) -> str:
    """The row tile variable of a slot accumulation: that of its value's loads (surface IR); after
    lowering the value is a buffer name and the dump writes `r`."""
    if not isinstance(s.value, str):
        for e in ir.walk_expr(s.value):
            if isinstance(e, ir.Load) and e.index.var:
                return e.index.var
    return "r"


def cube_loop(s: ir.CubeLoop, ind: str) -> list[str]:
    mm, epi = s.matmul, s.epilogue
    dims = ", ".join(d for d in (" * ".join(s.batch), s.m, s.n) if d)
    args = [f"{mm.a}[{s.var}]", f"{mm.b}[{s.var}]"]
    args += [f"bias={mm.bias}"] if mm.bias else []
    args += [f"transpose_a={mm.transpose_a}"] if mm.transpose_a else []
    args += [f"transpose_b={mm.transpose_b}"] if mm.transpose_b else []
    args += [f"{k}={v}" for k, v in zip(("base_m", "base_n", "base_k"), mm.base, strict=True) if v is not None]
    inner = ind + "    "
    lines = [f"{ind}for {s.var} in split({dims}, cores=AIC):", f"{inner}with cube:",
             f"{inner}    {mm.name} = matmul({', '.join(args)})"]
    if s.plan is not None:
        p = s.plan
        lines.append(f"{inner}    # base blocks <= {p.base_m} x {p.base_n} x {p.base_k}"
                     + (", whole rows" if p.whole_rows else "") + (", IterateAll to GM" if p.direct else "")
                     + (f", split-K (slices >= {p.split_k_min})" if p.split_k_min else ""))
    lines.append(f"{inner}with vector:")
    for d in epi.buffers_decl:
        lay = "" if d.layout is ir.Layout.FLAT else f", {d.layout.value}"
        lines.append(f"{inner}    # buffer {d.name}: {d.position.value} {d.dtype} x{d.num} ({d.bits} bit/elem{lay})")
    body = [b for b in epi.body if not (isinstance(b, ir.Assign) and b.name == mm.name and isinstance(b.value, ir.Load))]
    return lines + block(tuple(body), inner + "    ")


def _flash_mask(mask: ir.FlashMask | None) -> str:
    if mask is None:
        return ""
    if mask.tensor:
        return f", mask {mask.tensor}"

    def bound(b: ir.FlashBound) -> str:
        return str(b.const) + "".join(f" {'+' if s > 0 else '-'} {n}" for s, n in b.params) if b.params else str(b.const)

    lo = f"max({', '.join(map(bound, mask.lo))})" if len(mask.lo) > 1 else "".join(map(bound, mask.lo))
    hi = f"min({', '.join(map(bound, mask.hi))})" if len(mask.hi) > 1 else "".join(map(bound, mask.hi))
    band = f"{lo + ' <= ' if lo else ''}key - query{' <= ' + hi if hi else ''}"
    return f", band {band} from positions (key blocks outside it skipped)"


def block(body: tuple[ir.Stmt, ...], ind: str) -> list[str]:
    out: list[str] = []
    for s in body:
        out += stmt(s, ind)
    return out or [f"{ind}pass"]


def param(p: ir.Param) -> str:
    if isinstance(p, ir.TensorParam):
        return f'{p.name}: Tensor[{p.dtype}, "{", ".join(map(str, p.shape))}"]'
    default = "" if p.default is None else f" = {fmt_const(p.default)}"
    return f"{p.name}: {p.dtype}{default}"


def kernel(k: ir.Kernel) -> str:
    kind = [f"    # kernel kind: {k.kind.value}"] if k.kind is not None else []  # lowering/passes/select_kind.py
    params = ", ".join(param(p) for p in k.params if not getattr(p, "workspace", False))
    # in declaration order: a workspace tensor may take the symbols an earlier view defines
    workspaces = [f"    {p.name} = view({p.view.base}, {_view_dims(p)})" if p.view is not None else
                  f"    {p.name} = workspace({p.dtype}, {', '.join(map(str, p.shape))})"
                  for p in k.params if getattr(p, "workspace", False)]
    lines = ["@kernel", f"def {k.name}({params}):", *kind, *workspaces] + block(k.body, "    ")
    return "\n".join(lines) + "\n"


def _view_dims(p) -> str:
    """`M, G=num_groups, L=N / num_groups`: a view's dims, the symbols it defines as NAME=EXPR."""
    defs = {d.name: d for d in p.view.defs}

    def expr(d) -> str:
        return " * ".join(map(str, d.num)) + "".join(f" / {f}" for f in d.den)
    return ", ".join(f"{d}={expr(defs[d])}" if d in defs else str(d) for d in p.shape)
