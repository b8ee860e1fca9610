"""Kernels of several launches: cut a kernel where its split loops change kind, one kernel per launch.

Goals: a kernel whose top-level split loops are of different kinds (a matmul or conv cube split storing a
workspace tensor, then vector split loops reading it with `load`; or vector loops before a cube loop) becomes
a LAUNCHES kernel: its body is `ir.Launch`es, each a normal kernel (the run of loops of one kind, with the
kernel-scope statements that belong to it) lowered by the whole pipeline unchanged, so every kind keeps
working. The cut points: a run of cube (matmul) loops is one launch (several of them chain inside it:
lowering/passes/plan_stages.py), a conv loop is one launch, a run of vector split loops with the accumulators,
scalars and scalar stores around them is one launch. A workspace tensor shared by two launches becomes a
parameter of both (the host allocates it, sized from the inputs' shapes, and runs the launches in order on
the same GM); one used inside a single launch stays that launch's own. The launches and the tensors between
them form a graph (networkx): a cycle, a workspace tensor read by a launch but written by none, written by
two, or never read are located KERNEL-STRUCTURE errors; the launches run in topological order (source order
among independent ones). Runs first; identity on a kernel of one launch.
Non-goals: fusing launches (a conv's relu/cast epilogue stays in its launch; chained cube stages stay one
kernel), emitting one kernel for several kinds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace

import networkx as nx

from ascend_dsl import ir
from ascend_dsl.diagnostics import DiagnosticSink, DslError
from ascend_dsl.diagnostics import ErrorCode as E

from ..context import PassContext

#: Statements that may be computed by any launch that uses their value (scalars from scalar parameters,
#: shape symbols, constants, or one element of an input).
_SHARED = (ir.ScalarAssign, ir.ScalarLoad)


def loop_kind(s: ir.Stmt) -> str | None:
    """"cube" (a matmul split), "conv" (a convolution split), "vector" (an AIV split loop), None (kernel scope)."""
    if isinstance(s, ir.CubeLoop):
        return "cube"
    if isinstance(s, ir.ConvLoop):
        return "conv"
    if isinstance(s, ir.SplitLoop):
        return "vector"
    return None


@dataclasses.dataclass
class Segment:
    """The statements of one launch (in source order) and its kind."""

    kind: str
    stmts: list[ir.Stmt]

    @property
    def span(self) -> ir.Span:
        return next(s.span for s in self.stmts if loop_kind(s))


def segments(kernel: ir.Kernel) -> tuple[list[ir.Stmt], list[Segment]]:
    """The leading scalar statements (shared by every launch that uses them) and the launches' statements."""
    body = list(kernel.body)
    first = next(i for i, s in enumerate(body) if loop_kind(s))
    prelude = [s for s in body[:first] if isinstance(s, _SHARED)]
    pending = [s for s in body[:first] if not isinstance(s, _SHARED)]
    segs: list[Segment] = []
    for s in body[first:]:
        kind = loop_kind(s)
        cur = segs[-1] if segs else None
        if kind is None:
            if cur is not None and cur.kind == "vector":
                cur.stmts.append(s)
            else:
                pending.append(s)
        elif cur is not None and kind == cur.kind and kind != "conv" and not pending:
            cur.stmts.append(s)
        else:
            if pending and kind != "vector":
                raise DslError.at(E.UNSUPPORTED, "kernel-scope statements between cube launches belong to no launch",
                                  pending[0].span, "move them next to the vector split loop that uses them")
            segs.append(Segment(kind, [*pending, s]))
            pending = []
    if pending:
        raise DslError.at(E.UNSUPPORTED, f"kernel-scope statements after a {segs[-1].kind} split loop belong to no "
                          "launch", pending[0].span, "compute them in a vector split loop's launch")
    return prelude, segs


def tensor_names(obj, params: set[str], out: set[str], skip_stores: bool) -> set[str]:
    """Tensor parameters `obj` (a statement, an expression or a tuple of them) names; with `skip_stores`,
    not the tensors it stores into."""
    if isinstance(obj, str):
        if obj in params:
            out.add(obj)
    elif isinstance(obj, tuple | list):
        for x in obj:
            tensor_names(x, params, out, skip_stores)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        stored = {"tensor"} if isinstance(obj, ir.Store | ir.ScalarStore) else {"out"} if isinstance(
            obj, ir.ConvLoop) else set()
        for f in dataclasses.fields(obj):
            if f.name in ("span", "type", "plan") or (skip_stores and f.name in stored):
                continue
            tensor_names(getattr(obj, f.name), params, out, skip_stores)
    return out


def writes_of(stmts: list[ir.Stmt]) -> set[str]:
    out = {s.tensor for s in ir.walk(tuple(stmts)) if isinstance(s, ir.Store | ir.ScalarStore)}
    return out | {s.out for s in stmts if isinstance(s, ir.ConvLoop)}


def first_use(stmts: list[ir.Stmt], name: str, params: set[str]) -> ir.Span:
    for s in ir.walk(tuple(stmts)):
        if name in tensor_names(s, params, set(), False) and not isinstance(s, ir.SplitLoop | ir.TileLoop):
            return s.span
    return stmts[0].span


def launch_graph(kernel: ir.Kernel, segs: list[Segment], sink: DiagnosticSink) -> nx.DiGraph:
    """Nodes: launch indices (source order) with the tensors each reads and writes; an edge i -> j when launch
    j must run after launch i (it reads a workspace tensor i writes, or both touch a tensor one of them writes)."""
    params = {p.name for p in kernel.tensors}
    g = nx.DiGraph()
    for i, seg in enumerate(segs):
        g.add_node(i, reads=tensor_names(seg.stmts, params, set(), True), writes=writes_of(seg.stmts), seg=seg)
    shared = shared_workspaces(kernel, segs)
    for p in kernel.workspaces:
        if not _used(segs, p.name, params):
            sink.error(E.KERNEL_STRUCTURE, f"workspace tensor '{p.name}' is never written or read", p.span,
                       "remove the declaration")
        if p.name not in shared:  # one launch's own tensor: checked with that launch (plan_stages.py)
            continue
        writers = [i for i in g if p.name in g.nodes[i]["writes"]]
        readers = [i for i in g if p.name in g.nodes[i]["reads"] and i not in writers]
        if len(writers) > 1:
            sink.error(E.KERNEL_STRUCTURE, f"workspace tensor '{p.name}' is written by {len(writers)} launches",
                       first_use(segs[writers[1]].stmts, p.name, params),
                       "one launch writes a workspace tensor; later ones read it")
        elif not writers:
            sink.error(E.KERNEL_STRUCTURE, f"workspace tensor '{p.name}' is read before any split loop writes it",
                       first_use(segs[readers[0]].stmts, p.name, params),
                       f"store it in an earlier split loop: store({p.name}[blk], ...)")
        for w in writers[:1]:
            for r in readers:
                g.add_edge(w, r, tensor=p.name)
    ws = {p.name for p in kernel.workspaces}
    for i in g:  # tensors written by one launch and touched by another keep their source order
        for j in g:
            a, b = g.nodes[i], g.nodes[j]
            clash = ((a["writes"] & (b["reads"] | b["writes"])) | (b["writes"] & a["reads"])) - ws
            if i < j and clash:
                g.add_edge(i, j, tensor=min(clash))
    return g


def _used(segs: list[Segment], name: str, params: set[str]) -> bool:
    return any(name in tensor_names(s.stmts, params, set(), False) for s in segs)


def shared_workspaces(kernel: ir.Kernel, segs: list[Segment]) -> set[str]:
    """Workspace tensors used by more than one launch (parameters of each; the host allocates them)."""
    params = {p.name for p in kernel.tensors}
    uses = [tensor_names(s.stmts, params, set(), False) for s in segs]
    return {p.name for p in kernel.workspaces if sum(p.name in u for u in uses) > 1}


def launch_kernel(kernel: ir.Kernel, index: int, prelude: list[ir.Stmt], seg: Segment, shared: set[str]) -> ir.Kernel:
    """Launch `index` as a kernel of its own: the tensors its statements use (a shared workspace tensor as an
    ordinary one), every scalar parameter, and the prelude scalars it needs (transitively)."""
    params = {p.name for p in kernel.tensors}
    needed = _scalar_refs(seg.stmts)
    scalars = []
    for s in reversed(prelude):
        if s.name in needed:
            scalars.insert(0, s)
            needed |= _scalar_refs([s])
    body = (*scalars, *seg.stmts)
    used = tensor_names(body, params, set(), False)
    tensors = tuple(replace(p, workspace=False) if p.name in shared else p for p in kernel.tensors if p.name in used)
    name = f"{kernel.name}_l{index}"
    return replace(kernel, name=name, params=tensors + tuple(kernel.scalars), body=body, kind=None)


def _scalar_refs(stmts) -> set[str]:
    """Names referenced (Ref) anywhere in `stmts`: a superset of the kernel-scope scalars they read."""
    out: set[str] = set()

    def visit(obj):
        if isinstance(obj, ir.Ref):
            out.add(obj.name)
        if isinstance(obj, tuple | list):
            for x in obj:
                visit(x)
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            for f in dataclasses.fields(obj):
                if f.name not in ("span", "type", "plan"):
                    visit(getattr(obj, f.name))
    visit(tuple(stmts))
    return out


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    """The LAUNCHES kernel of `kernel` (its launches in dependency order, each a kernel for the pipeline to lower);
    any kernel of one launch unchanged."""
    if not kernel.workspaces or not any(loop_kind(s) for s in kernel.body):
        return kernel
    prelude, segs = segments(kernel)
    if len(segs) < 2:
        return kernel
    sink = DiagnosticSink()
    g = launch_graph(kernel, segs, sink)
    sink.raise_if_any()
    try:
        cycle = nx.find_cycle(g)
    except nx.NetworkXNoCycle:
        cycle = None
    if cycle:
        raise DslError.at(E.KERNEL_STRUCTURE, "the launches depend on each other in a cycle: " + " -> ".join(
            f"launch {a} ({g.edges[a, b]['tensor']})" for a, b in cycle), segs[cycle[0][0]].span,
            "a workspace tensor is written by one split loop and read by a later one")
    shared = shared_workspaces(kernel, segs)
    launches = []
    for i in nx.lexicographical_topological_sort(g, key=lambda n: n):
        node = g.nodes[i]
        sub = launch_kernel(kernel, i, prelude, segs[i], shared)
        launches.append(ir.Launch(i, sub, tuple(sorted(node["reads"] & shared)), tuple(sorted(node["writes"] & shared)),
                                  segs[i].span))
    return replace(kernel, body=tuple(launches), kind=ir.KernelKind.LAUNCHES)
