"""IR invariants checked after every pass (a failure is a compiler bug, reported as INTERNAL)."""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from ascend_dsl.diagnostics import ErrorCode as E
from ascend_dsl.dtypes import DType


def _fail(pass_name: str, msg: str, span) -> DslError:
    return DslError.at(E.INTERNAL, f"IR invalid after pass '{pass_name}': {msg}", span,
                       "this is a compiler bug; please report it with the DSL file")


def verify(kernel: ir.Kernel, pass_name: str) -> None:
    tensors = {p.name: p for p in kernel.tensors}
    for c in kernel.body:  # a cube loop's accumulator is read like an input tensor by its epilogue
        if isinstance(c, ir.CubeLoop):
            tensors[c.matmul.name] = ir.TensorParam(c.matmul.name, DType.F32, (c.m, c.n))
    for d in kernel.body:  # a slot accumulator's totals are read per row like a tensor (s[r])
        if isinstance(d, ir.SlotAccDecl):
            tensors[d.name] = ir.TensorParam(d.name, DType.F32, d.slots)
    scalars = ({p.name for p in kernel.scalars} | set(kernel.symbols)
               | {s.name for s in kernel.body if isinstance(s, (ir.AccDecl, ir.ScalarAssign, ir.ScalarLoad))})
    outputs = {p.name for p in kernel.outputs}
    for s in ir.walk(kernel.body):
        if s.span.line <= 0:
            raise _fail(pass_name, f"statement without a source span: {type(s).__name__}", kernel.span)
        if not isinstance(s, ir.TileLoop):
            continue
        _check_loop(s, scalars, tensors, outputs, pass_name)
        plan = s.shape.chunked if s.kind is ir.LoopKind.ROWS else None
        if isinstance(plan, ir.ChunkPlan):  # the passes of a chunked row loop read the per-row values
            rows = scalars | {ir.row_ref(n).name for n in plan.row_values}
            for k, p in enumerate(plan.passes):
                _check_loop(p.loop, rows, tensors, outputs, f"{pass_name} (chunk pass {k})")


def _check_loop(s: ir.TileLoop, scalars, tensors, outputs, pass_name: str) -> None:
    buffers = {b.name: b for b in s.buffers_decl}
    defined: set[str] = set()
    flat = [c for st in s.body for c in (st.body if isinstance(st, ir.Stage) else (st,))]
    for st in flat:
        if st.span.line <= 0:
            raise _fail(pass_name, f"statement without a source span: {type(st).__name__}", s.span)
        match st:
            case ir.Assign(name=n, value=v):
                _check_expr(v, defined, scalars, tensors, pass_name, st.span)
                if buffers and n not in buffers:
                    raise _fail(pass_name, f"'{n}' is not a declared buffer", st.span)
                defined.add(n)
            case ir.Store(tensor=t, value=v):
                _check_expr(v, defined, scalars, tensors, pass_name, st.span)
                if tensors[t].dtype is not v.type.dtype:
                    raise _fail(pass_name, f"store of {v.type.dtype} into {t}", st.span)
            case ir.Accumulate(value=v) | ir.SlotAccumulate(value=v):
                _check_expr(v, defined, scalars, tensors, pass_name, st.span)
            case ir.CopyIn(buffer=b, tensor=t):
                once = b in buffers and buffers[b].role is ir.BufferRole.ROW_VECTOR  # a TBuf filled once per core
                if b not in buffers or (buffers[b].position is not ir.Position.VECIN and not once) or t in outputs:
                    raise _fail(pass_name, f"bad CopyIn {b} <- {t}", st.span)
                defined.add(b)
            case ir.CopyOut(tensor=t, buffer=b):
                if b not in buffers or buffers[b].position is not ir.Position.VECOUT or b not in defined:
                    raise _fail(pass_name, f"bad CopyOut {t} <- {b}", st.span)
            case ir.VecOp() | ir.PerRow():
                for op in st.ops if isinstance(st, ir.PerRow) else (st,):
                    for o in op.srcs:
                        if isinstance(o, str) and (o not in buffers or o not in defined and o != op.dst):
                            raise _fail(pass_name, f"{op.api} reads undefined buffer '{o}'", op.span)
                    if op.dst not in buffers:
                        raise _fail(pass_name, f"{op.api} writes undeclared buffer '{op.dst}'", op.span)
                    defined.add(op.dst)
    if any(isinstance(st, ir.Stage) for st in s.body):
        kinds = [st.kind for st in s.body]
        if kinds != list(ir.StageKind):
            raise _fail(pass_name, f"stages out of order: {kinds}", s.span)


def _check_expr(e: ir.Expr, defined, scalars, tensors, pass_name, span) -> None:
    for x in ir.walk_expr(e):
        if isinstance(x, ir.Ref) and x.name not in defined and x.name not in scalars:
            raise _fail(pass_name, f"'{x.name}' used before definition", span)
        if isinstance(x, ir.Load) and x.tensor not in tensors:
            raise _fail(pass_name, f"load of unknown tensor '{x.tensor}'", span)
