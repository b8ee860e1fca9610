"""Front end for intermediate GM tensors: `p = workspace(f16, Bt, M, N)` at kernel scope.

The kernel declares a GM tensor of its own, shaped by shape symbols of its tensor parameters. One
stage (split loop) stores it, a later one loads it; it lives in the launch workspace (sized by the
host tiling) and is never bound to the task. The stages and the tensors between them are ordered and
synchronised by lowering/passes/plan_stages.py.
"""

from __future__ import annotations

from lark import Tree

from . import ir
from .diagnostics import ErrorCode as E

EXAMPLE = "p = workspace(f16, Bt, M, N)"


def workspace_decl(b, name: str, st: Tree, call: Tree) -> ir.TensorParam:
    """Declare workspace tensor `name`; it joins the kernel's tensors (ir.TensorParam.workspace)."""
    pos, kw = b.call_args(call)
    if len(pos) < 2 or kw:
        raise b.err(E.ARGS, "workspace takes a dtype and the tensor's dims (shape symbols)", call, EXAMPLE)
    if not (isinstance(pos[0], Tree) and pos[0].data == "name"):
        raise b.err(E.ARGS, "the first argument of workspace is a dtype (f16, f32, or a dtype variable)", pos[0],
                    EXAMPLE)
    dtype = b.dtype(pos[0].children[0])
    dims: list[str] = []
    for d in pos[1:]:
        if not (isinstance(d, Tree) and d.data == "name"):
            raise b.err(E.ARGS, "a workspace dim is a shape symbol of a tensor parameter", d, EXAMPLE)
        sym = str(d.children[0])
        if sym not in b.scope.symbols:
            raise b.undefined(d.children[0], sorted(b.scope.symbols), "a shape symbol of a tensor parameter")
        dims.append(sym)
    param = ir.TensorParam(name, dtype, tuple(dims), workspace=True, span=b.o.span(st))
    b.scope.params[name] = param
    return param
