"""Multi-stage kernels: plan the stages of split loops joined by workspace tensors (`p = workspace(f16, Bt, M, N)`).

Goals: build the graph of the kernel's stages (its cube split loops) and the workspace tensors between
them with networkx, report what cannot run (a workspace tensor no stage writes, one written by two
stages, one never read, a cycle, more cube stages than one kernel can register) as located errors,
order the stages topologically (source order among independent stages) and place each
synchronisation (a `SyncAll` before a stage that reads what an earlier stage wrote, unless one already
separates them). The result is a CHAIN kernel whose body is `ir.ChainStage`s, each holding its stage
as a kernel of its own (not yet lowered: lowering/pipeline.py runs every stage through the pipeline,
and lowering/emit/chain.py renders the chain as one MIX kernel). Runs first; identity on a kernel that is not a
chain (`is_chain`). Non-goals: vector stages between cube stages (UNSUPPORTED for now) and fusing stages
(flash attention: lowering/passes/plan_flash.py, which runs next).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: `import networkx` costs ~0.17 s of CPU at every CLI start
    import networkx as nx

from ascend_dsl import ir
from ascend_dsl.diagnostics import DiagnosticSink
from ascend_dsl.diagnostics import ErrorCode as E
from ascend_dsl.launches import dependency_cycle

from ..context import PassContext

#: Matmul objects one kernel may register (REGIST_MATMUL_OBJ takes at most 4 pairs; CANN asc-devkit docs,
#: REGIST_MATMUL_OBJ "约束说明").
MAX_CUBE_STAGES = 4

def is_chain(kernel: ir.Kernel) -> bool:
    """A kernel with workspace tensors or more than one cube loop."""
    return bool(kernel.workspaces) or sum(isinstance(s, ir.CubeLoop) for s in kernel.body) > 1


def stage_tensors(loop: ir.Stmt) -> tuple[set[str], set[str], dict[str, ir.Span]]:
    """The tensors a stage reads and writes, and where it first uses each (for errors)."""
    reads: set[str] = set()
    writes: set[str] = set()
    where: dict[str, ir.Span] = {}
    if isinstance(loop, ir.CubeLoop):
        mm = loop.matmul
        for t in (mm.a, mm.b, mm.bias):
            if t is not None:
                reads.add(t)
                where.setdefault(t, mm.span)
    for s in ir.walk((loop,)):
        if isinstance(s, ir.Store):
            writes.add(s.tensor)
            where.setdefault(s.tensor, s.span)
        value = getattr(s, "value", None)
        if isinstance(s, ir.VALUE_STMTS) and value is not None:
            for e in ir.walk_expr(value):
                if isinstance(e, ir.Load) and not e.index.acc:
                    reads.add(e.tensor)
                    where.setdefault(e.tensor, e.span)
    if isinstance(loop, ir.CubeLoop):
        reads.discard(loop.matmul.name)
    return reads, writes, where


def stage_graph(kernel: ir.Kernel, sink: DiagnosticSink) -> tuple[nx.DiGraph, list[ir.Stmt]]:
    """Nodes: stage indices (source order) with their loop, reads and writes; an edge i -> j when stage j
    must run after stage i (it reads a workspace tensor i writes, or both touch a tensor one of them writes)."""
    loops = [s for s in kernel.body if isinstance(s, (ir.CubeLoop, ir.SplitLoop))]
    import networkx as nx

    g = nx.DiGraph()
    for i, loop in enumerate(loops):
        reads, writes, where = stage_tensors(loop)
        g.add_node(i, loop=loop, reads=reads, writes=writes, where=where)
    workspaces = {p.name: p for p in kernel.workspaces}
    for name, p in workspaces.items():
        writers = [i for i in g if name in g.nodes[i]["writes"]]
        readers = [i for i in g if name in g.nodes[i]["reads"]]
        if len(writers) > 1:
            sink.error(E.KERNEL_STRUCTURE, f"workspace tensor '{name}' is written by {len(writers)} stages",
                       g.nodes[writers[1]]["where"][name], "one stage writes a workspace tensor; later stages read it")
        if not writers:
            for i in readers:
                sink.error(E.KERNEL_STRUCTURE, f"workspace tensor '{name}' is read before any stage writes it",
                           g.nodes[i]["where"][name], f"store it in an earlier split loop: store({name}[blk], ...)")
            if not readers:
                sink.error(E.KERNEL_STRUCTURE, f"workspace tensor '{name}' is never written or read", p.span,
                           "remove the declaration")
        elif not readers:
            sink.error(E.KERNEL_STRUCTURE, f"workspace tensor '{name}' is written but never read", p.span,
                       "store the result into an output tensor instead")
        for w in writers[:1]:
            for r in readers:
                if r != w:
                    g.add_edge(w, r, tensor=name)
        for r in readers:
            if r in writers:
                sink.error(E.KERNEL_STRUCTURE, f"a stage reads the workspace tensor '{name}' it writes",
                           g.nodes[r]["where"][name], "read it in a later split loop")
    for i in g:  # tensors written by one stage and touched by another keep their source order
        for j in g:
            if i < j and name_clash(g.nodes[i], g.nodes[j], workspaces):
                g.add_edge(i, j, tensor=name_clash(g.nodes[i], g.nodes[j], workspaces))
    return g, loops


def name_clash(a: dict, b: dict, workspaces: dict) -> str | None:
    """A non-workspace tensor one stage writes and the other reads or writes (source order decides)."""
    shared = (a["writes"] & (b["reads"] | b["writes"])) | (b["writes"] & a["reads"])
    shared -= set(workspaces)
    return min(shared) if shared else None


def order_and_sync(g: nx.DiGraph) -> list[tuple[int, str]]:
    """Stages in topological order (source order among independent ones), each with the synchronisation
    that must precede it: "SyncAll" when a predecessor ran after the last SyncAll, else ""."""
    import networkx as nx

    order = list(nx.lexicographical_topological_sort(g, key=lambda i: i))
    pos = {s: k for k, s in enumerate(order)}
    last_sync = -1
    out = []
    for k, s in enumerate(order):
        preds = [pos[p] for p in g.predecessors(s)]
        sync = "SyncAll" if preds and max(preds) >= last_sync else ""
        if sync:
            last_sync = k
        out.append((s, sync))
    return out


def stage_kernel(kernel: ir.Kernel, index: int, loop: ir.Stmt, reads: set[str], writes: set[str]) -> ir.Kernel:
    """Stage `index` as a kernel of its own: the tensors it uses (workspace tensors as ordinary ones), every
    scalar parameter and the kernel-scope scalars (all computed at launch in a cube-only kernel)."""
    used = reads | writes
    tensors = tuple(replace(p, workspace=False) for p in kernel.tensors if p.name in used)
    scalars = tuple(kernel.scalars)
    prelude = tuple(s for s in kernel.body if isinstance(s, ir.ScalarAssign))
    return replace(kernel, name=f"{kernel.name}_s{index}", params=tensors + scalars, body=(*prelude, loop), kind=None)


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    """The CHAIN kernel of `kernel`: its stages in dependency order with their synchronisation, each stage a
    kernel of its own for the pipeline to lower; any other kernel unchanged."""
    if not is_chain(kernel):
        return kernel
    sink = DiagnosticSink()
    loops = [s for s in kernel.body if isinstance(s, (ir.CubeLoop, ir.SplitLoop))]
    for s in loops:
        if not isinstance(s, ir.CubeLoop):
            sink.error(E.UNSUPPORTED, "this version chains cube stages only (split(..., cores=AIC) loops joined by "
                       "workspace tensors)", s.span, "write the vector work as a cube stage's epilogue (with vector:)")
    if len(loops) > MAX_CUBE_STAGES:
        sink.error(E.UNSUPPORTED, f"{len(loops)} cube stages; one kernel registers at most {MAX_CUBE_STAGES} Matmul "
                   "objects", loops[MAX_CUBE_STAGES].span, "split the work into two kernels")
    sink.raise_if_any()
    g, loops = stage_graph(kernel, sink)
    sink.raise_if_any()
    cycle = dependency_cycle(g, "stage")
    if cycle:
        sink.error(E.KERNEL_STRUCTURE, "the stages depend on each other in a cycle: " + cycle[1], loops[cycle[0]].span,
                   "a workspace tensor is written by one stage and read by a later one")
        sink.raise_if_any()
    ws = {p.name for p in kernel.workspaces}
    stages = []
    for i, sync in order_and_sync(g):
        node = g.nodes[i]
        sub = stage_kernel(kernel, i, loops[i], node["reads"], node["writes"])
        stages.append(ir.ChainStage(i, sub, sync, tuple(sorted(node["reads"] & ws)),
                                    tuple(sorted(node["writes"] & ws)), loops[i].span))
    return replace(kernel, body=tuple(stages), kind=ir.KernelKind.CHAIN)
