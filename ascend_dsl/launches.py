"""The launches of a kernel whose split loops are of different kinds, joined by workspace tensors.

A run of cube (matmul) loops is one launch (cut before a loop that uses a workspace tensor through another shape
than the run: a view), a conv loop is one launch, a run of vector split loops with the
kernel-scope statements around them (accumulators, scalars, scalar stores) is one launch, cut before a loop that
reads a workspace tensor an earlier loop of the run writes (its cores need every core's share); the leading scalars go
to every launch that uses them. A workspace tensor shared by two launches becomes a parameter of both (GM the host
allocates). Shared by the compiler (lowering/passes/partition_launches.py: the graph's checks, the order) and the
interpreter (which runs the launches in the same order).
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: `import networkx` costs ~0.17 s of CPU at every CLI start
    import networkx as nx

from . import ir
from .diagnostics import DslError
from .diagnostics import ErrorCode as E

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
    """The statements of one launch (in source order) and its kind; `shapes`: the workspace tensors it uses
    through a view (renamed to the tensor in `stmts`), with the view's dims."""

    kind: str
    stmts: list[ir.Stmt]
    shapes: dict[str, tuple] = dataclasses.field(default_factory=dict)

    @property
    def span(self) -> ir.Span:
        return next(s.span for s in self.stmts if loop_kind(s))


def segments(kernel: ir.Kernel) -> tuple[list[ir.Stmt], list[Segment]]:
    """The leading scalar statements (shared by every launch that uses them) and the launches' statements. A
    vector split loop that reads a workspace tensor an earlier vector loop of the run writes, or splits another
    extent, starts a launch of its own (with the kernel-scope statements just before it); so does a cube split loop
    that uses a workspace tensor through another shape (a view) than the earlier loops of its run."""
    body = list(kernel.body)
    first = next(i for i, s in enumerate(body) if loop_kind(s))
    prelude = [s for s in body[:first] if isinstance(s, _SHARED)]
    pending = [s for s in body[:first] if not isinstance(s, _SHARED)]
    segs: list[Segment] = []
    bases = {p.name: p.view.base for p in kernel.views} | {p.name: p.name for p in kernel.workspaces}
    shapes = {n: (b, n) for n, b in bases.items()}
    for s in body[first:]:
        kind = loop_kind(s)
        cur = segs[-1] if segs else None
        if kind is None:
            if cur is not None and cur.kind == "vector":
                cur.stmts.append(s)
            else:
                pending.append(s)
        elif cur is not None and kind == "vector" == cur.kind and (_reads_written(s, cur.stmts, bases) or
                                                                  s.extent != _first_loop(cur).extent):
            tail = []  # the kernel-scope statements just before it (declarations, scalars) go with it; one that
            while cur.stmts and not loop_kind(cur.stmts[-1]):  # reads a value of the run is then a located error
                tail.insert(0, cur.stmts.pop())
            segs.append(Segment(kind, [*tail, s]))
        elif cur is not None and kind == cur.kind and kind != "conv" and not pending and not (
                kind == "cube" and _other_shape(s, cur.stmts, shapes)):
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
    if kernel.views and len(segs) == 1:
        raise DslError.at(E.UNSUPPORTED, f"view '{kernel.views[0].name}' of a kernel of one launch", kernel.views[0].span,
                          "a view reads a workspace tensor in another launch than the one that writes it "
                          "(docs/language.md, \"Launches\"); within one launch, declare the workspace with the dims "
                          "you need")
    if kernel.views:
        for seg in segs:
            _through_views(kernel, seg)
    if len(segs) > 1:
        _check_local_names(segs)
    return prelude, segs


def _first_loop(seg: Segment) -> ir.Stmt:
    return next(t for t in seg.stmts if loop_kind(t))


def _other_shape(loop: ir.Stmt, stmts: list[ir.Stmt], shapes: dict[str, tuple[str, str]]) -> bool:
    """`loop` uses a workspace tensor through another shape (the tensor, or another view of it) than `stmts` do:
    a cube stage doing so starts a launch of its own (a launch sees one shape of each tensor)."""
    mine = {shapes[n] for n in tensor_names(loop, set(shapes), set(), False)}
    theirs = {shapes[n] for n in tensor_names(stmts, set(shapes), set(), False)}
    return any(b == b2 and n != n2 for b, n in mine for b2, n2 in theirs)


def _reads_written(loop: ir.Stmt, stmts: list[ir.Stmt], bases: dict[str, str]) -> bool:
    """`loop` reads a workspace tensor (or a view of one) that `stmts` write."""
    names = set(bases)
    written = {bases[n] for n in writes_of(stmts) if n in bases}
    return any(bases[n] in written for n in tensor_names(loop, names, set(), True))


def _through_views(kernel: ir.Kernel, seg: Segment) -> None:
    """Rename the views `seg` uses to their workspace tensors (seg.shapes: the view's dims). A launch that uses a
    tensor through two shapes is UNSUPPORTED, located at the second."""
    views = {p.name: p for p in kernel.views}
    bases = {p.name for p in kernel.workspaces}
    used = tensor_names(seg.stmts, set(views) | bases, set(), False)
    rename: dict[str, str] = {}
    for base in sorted(bases):
        shapes = sorted(n for n in used if n == base or (n in views and views[n].view.base == base))
        if len(shapes) > 1:
            raise DslError.at(E.UNSUPPORTED, f"one launch uses workspace tensor '{base}' through two shapes ("
                              + ", ".join(f"'{n}'" for n in shapes) + ")", first_use(seg.stmts, shapes[1], set(shapes)),
                              "a view is for another launch than the one that writes the tensor: read or write it "
                              "through one shape per launch")
        if shapes and shapes[0] in views:
            rename[shapes[0]] = base
            seg.shapes[base] = views[shapes[0]].shape
    if rename:
        seg.stmts = [_rename(s, rename) for s in seg.stmts]


def _rename(obj, names: dict[str, str]):
    """`obj` with every string field (tensor names) in `names` replaced (names are unique in a kernel)."""
    if isinstance(obj, str):
        return names.get(obj, obj)
    if isinstance(obj, tuple):
        return tuple(_rename(x, names) for x in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {f.name: _rename(getattr(obj, f.name), names) for f in dataclasses.fields(obj)
                   if f.name not in ("span", "type", "plan")}
        return replace(obj, **{k: v for k, v in changes.items() if v is not getattr(obj, k)})
    return obj


def _defined(stmts: list[ir.Stmt]) -> set[str]:
    return {s.name for s in stmts if isinstance(s, ir.AccDecl | ir.SlotAccDecl | ir.ScalarAssign | ir.ScalarLoad)}


def _check_local_names(segs: list[Segment]) -> None:
    """A value computed in one launch (an accumulator, a slot accumulator, a scalar after a loop) read by
    another is UNSUPPORTED: launches share only GM tensors."""
    owner = {n: i for i, seg in enumerate(segs) for n in _defined(seg.stmts)}
    for j, seg in enumerate(segs):
        mine = _defined(seg.stmts)
        for s in ir.walk(tuple(seg.stmts)):
            if isinstance(s, ir.SplitLoop | ir.TileLoop | ir.CubeLoop):
                continue
            for n in sorted(_strings(s) - mine):
                if n in owner and owner[n] != j:
                    raise DslError.at(E.UNSUPPORTED, f"'{n}' is computed in launch {owner[n]} and read in launch {j}: "
                                      "launches share only GM tensors", s.span,
                                      "store it in a workspace tensor, or compute it in the launch that reads it")


def _strings(obj, out: set[str] | None = None) -> set[str]:
    out = set() if out is None else out
    if isinstance(obj, str):
        out.add(obj)
    elif isinstance(obj, tuple | list):
        for x in obj:
            _strings(x, out)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            if f.name not in ("span", "type", "plan", "body"):
                _strings(getattr(obj, f.name), out)
    return out


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
    tensors = tuple(replace(p, workspace=False, shape=seg.shapes.get(p.name, p.shape)) if p.name in shared else
                    replace(p, shape=seg.shapes.get(p.name, p.shape)) for p in kernel.tensors
                    if p.name in used and p.view is None)
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


def dependency_graph(kernel: ir.Kernel, segs: list[Segment]) -> nx.DiGraph:
    """Nodes: launch indices (source order) with the tensors each reads and writes; an edge i -> j (with the
    tensor) when launch j must run after launch i: it reads a shared workspace tensor i writes, or both touch a
    bound tensor one of them writes (source order)."""
    params = {p.name for p in kernel.tensors}
    import networkx as nx

    g = nx.DiGraph()
    for i, seg in enumerate(segs):
        g.add_node(i, reads=tensor_names(seg.stmts, params, set(), True), writes=writes_of(seg.stmts))
    for name in shared_workspaces(kernel, segs):
        writers = [i for i in g if name in g.nodes[i]["writes"]]
        for w in writers[:1]:
            for r in g:
                if r not in writers and name in g.nodes[r]["reads"]:
                    g.add_edge(w, r, tensor=name)
    ws = {p.name for p in kernel.workspaces}
    for i in g:
        for j in g:
            a, b = g.nodes[i], g.nodes[j]
            clash = ((a["writes"] & (b["reads"] | b["writes"])) | (b["writes"] & a["reads"])) - ws
            if i < j and clash:
                g.add_edge(i, j, tensor=min(clash))
    return g


def is_launches(kernel: ir.Kernel) -> bool:
    """Workspace tensors and split loops of more than one launch."""
    return bool(kernel.workspaces) and any(loop_kind(s) for s in kernel.body) and len(segments(kernel)[1]) > 1


def launch_order(g: nx.DiGraph) -> list[int]:
    """The launches in dependency order, source order among independent ones (the graph must be acyclic)."""
    import networkx as nx

    return list(nx.lexicographical_topological_sort(g, key=lambda n: n))


def launch_kernels(kernel: ir.Kernel) -> list[ir.Kernel]:
    """The kernels of `kernel`'s launches in the order they run (a LAUNCHES kernel: is_launches)."""
    prelude, segs = segments(kernel)
    shared = shared_workspaces(kernel, segs)
    return [launch_kernel(kernel, i, prelude, segs[i], shared) for i in launch_order(dependency_graph(kernel, segs))]


def dependency_cycle(g: nx.DiGraph, unit: str) -> tuple[int, str] | None:
    """The first cycle of a graph of stages or launches whose edges name the tensor they pass: its first node and
    `unit a (t) -> unit b (u) -> ...`; None without a cycle."""
    import networkx as nx

    try:
        cycle = nx.find_cycle(g)
    except nx.NetworkXNoCycle:
        return None
    return cycle[0][0], " -> ".join(f"{unit} {a} ({g.edges[a, b]['tensor']})" for a, b in cycle)
