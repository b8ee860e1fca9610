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

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: `import networkx` costs ~0.17 s of CPU at every CLI start
    import networkx as nx

from ascend_dsl import ir
from ascend_dsl.diagnostics import DiagnosticSink, DslError
from ascend_dsl.diagnostics import ErrorCode as E
from ascend_dsl.launches import (
    Segment,
    dependency_cycle,
    dependency_graph,
    first_use,
    is_launches,
    launch_kernel,
    launch_order,
    segments,
    shared_workspaces,
    tensor_names,
)

from ..context import PassContext


def check_workspaces(kernel: ir.Kernel, segs: list[Segment], g: nx.DiGraph, sink: DiagnosticSink) -> None:
    """A workspace tensor no launch uses, a shared one written by two launches or read but written by none."""
    params = {p.name for p in kernel.tensors}
    shared = shared_workspaces(kernel, segs)
    named = tensor_names(kernel.body, {v.name for v in kernel.views}, set(), False)
    for v in kernel.views:
        if v.name not in named:
            sink.error(E.KERNEL_STRUCTURE, f"view '{v.name}' is never written or read", v.span, "remove the declaration")
    for p in kernel.workspaces:
        if not any(p.name in tensor_names(s.stmts, params, set(), False) for s in segs):
            sink.error(E.KERNEL_STRUCTURE, f"workspace tensor '{p.name}' is never written or read", p.span,
                       "remove the declaration")
        users = [i for i, s in enumerate(segs) if p.name in tensor_names(s.stmts, params, set(), False)]
        if len(users) == 1 and segs[users[0]].kind != "cube":  # only chained cube stages share GM inside a launch
            i = users[0]
            if p.name not in g.nodes[i]["writes"]:
                sink.error(E.KERNEL_STRUCTURE, f"workspace tensor '{p.name}' is read before any split loop writes "
                           "it", first_use(segs[i].stmts, p.name, params),
                           f"store it in an earlier split loop: store({p.name}[blk], ...)")
            elif p.name not in g.nodes[i]["reads"]:
                sink.error(E.KERNEL_STRUCTURE, f"workspace tensor '{p.name}' is written but never read", p.span,
                           "store the result into an output tensor instead")
            else:
                sink.error(E.UNSUPPORTED, f"workspace tensor '{p.name}' is written and read by {segs[i].kind} split "
                           "loops of one launch", first_use(segs[i].stmts, p.name, params),
                           "only a launch of another kind may read it (a cube split loop, or vector loops after one)")
        if p.name not in shared:  # one cube launch's own tensor: checked with that launch (plan_stages.py)
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


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    """The LAUNCHES kernel of `kernel` (its launches in dependency order, each a kernel for the pipeline to lower);
    any kernel of one launch unchanged."""
    if not is_launches(kernel):
        return kernel
    prelude, segs = segments(kernel)
    sink = DiagnosticSink()
    g = dependency_graph(kernel, segs)
    check_workspaces(kernel, segs, g, sink)
    sink.raise_if_any()
    cycle = dependency_cycle(g, "launch")
    if cycle:
        raise DslError.at(E.KERNEL_STRUCTURE, "the launches depend on each other in a cycle: " + cycle[1],
                          segs[cycle[0]].span, "a workspace tensor is written by one split loop and read by a later one")
    shared = shared_workspaces(kernel, segs)
    launches = []
    for i in launch_order(g):
        node = g.nodes[i]
        sub = launch_kernel(kernel, i, prelude, segs[i], shared)
        launches.append(ir.Launch(i, sub, tuple(sorted(node["reads"] & shared)), tuple(sorted(node["writes"] & shared)),
                                  segs[i].span))
    return replace(kernel, body=tuple(launches), kind=ir.KernelKind.LAUNCHES)
