"""Fusing adjacent split loops (the `fuse.J` knob of lowering/assist/knobs.py): split loop J and split loop
J + 1 become one split loop whose tile loop runs both bodies, so every tile is visited once (a tensor both
bodies load is copied in once: the pipeline shares identical loads) and the kernel walks its cores'
shares once instead of twice.

A fusion is a kernel rewrite, so it is legal only where it cannot change what a loop reads. The loops
must be adjacent in the kernel (no scalar statement between them), split the same extent over the same
cores, each hold one tile loop of the same kind, shape and settings (size, buffers, chunk), and share no
data across cores: the second loop reads no accumulator or slot the first one folds (every core's share
must be added before it is read), and no tensor one of them stores is loaded or stored by the other (a
core would read or overwrite a tile another core has not written yet, or has). `fuse` says which rule a
pair breaks, for the model to read; what is left is judged like any proposal (the constraint checks of
the pipeline, the emulator against the reference, the cost model).
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir


class FuseError(Exception):
    """Why two split loops cannot be fused."""


def adjacent_pairs(kernel: ir.Kernel) -> list[int]:
    """J for every vector split loop J directly followed by vector split loop J + 1 (numbered as knobs.py
    numbers split loops)."""
    body = kernel.body
    splits = [i for i, s in enumerate(body) if isinstance(s, ir.SplitLoop)]
    return [j for j, (a, b) in enumerate(zip(splits, splits[1:], strict=False))
            if b == a + 1 and body[a].core_kind == body[b].core_kind == "AIV"]


def _tile_loop(split: ir.SplitLoop, j: int) -> ir.TileLoop:
    if len(split.body) != 1 or not isinstance(split.body[0], ir.TileLoop):
        raise FuseError(f"split loop {j} does not hold exactly one tile loop")
    return split.body[0]


def _reads(tl: ir.TileLoop) -> tuple[set[str], set[str]]:
    """(names the body reads: values, scalars, accumulators; tensors and slots it loads)."""
    names: set[str] = set()
    loads: set[str] = set()
    for s in tl.body:
        if not hasattr(s, "value"):
            continue
        for e in ir.walk_expr(s.value):
            if isinstance(e, ir.Ref):
                names.add(e.name)
            elif isinstance(e, ir.Load):
                loads.add(e.tensor)
                if e.index.by:
                    loads.add(e.index.by)
    return names, loads


def _writes(tl: ir.TileLoop) -> tuple[set[str], set[str]]:
    """(accumulators and slots the body folds into, tensors it stores)."""
    folds = {s.name for s in tl.body if isinstance(s, (ir.Accumulate, ir.SlotAccumulate))}
    stores = {s.tensor for s in tl.body if isinstance(s, ir.Store)}
    return folds, stores


def _check(j: int, a: ir.SplitLoop, b: ir.SplitLoop) -> tuple[ir.TileLoop, ir.TileLoop]:
    if (a.extent, a.core_kind) != (b.extent, b.core_kind):
        raise FuseError(f"split loops {j} and {j + 1} split different extents ({' * '.join(a.extent)} over "
                        f"{a.core_kind}, {' * '.join(b.extent)} over {b.core_kind})")
    if a.cores != b.cores:
        raise FuseError(f"split loops {j} and {j + 1} have different core caps ({a.cores or 'all'}, {b.cores or 'all'})")
    ta, tb = _tile_loop(a, j), _tile_loop(b, j + 1)
    if ta.kind is not tb.kind or ta.shape != tb.shape:
        raise FuseError(f"their tile loops tile differently ({ta.kind.value} tiles, {tb.kind.value} tiles)")
    settings = lambda t: (t.size, t.buffers, t.chunk)  # noqa: E731
    if settings(ta) != settings(tb):
        raise FuseError(f"their tile loops have different settings (size, buffers, chunk: {settings(ta)} and "
                        f"{settings(tb)}): set both the same first")
    folds_a, stores_a = _writes(ta)
    folds_b, stores_b = _writes(tb)
    names_b, loads_b = _reads(tb)
    _, loads_a = _reads(ta)
    crossing = sorted(folds_a & (names_b | loads_b))
    if crossing:
        raise FuseError(f"split loop {j + 1} reads {', '.join(map(repr, crossing))}, which split loop {j} folds "
                        "across cores: fused, a core would read it before every core has added its share")
    shared = sorted((stores_a & (loads_b | stores_b)) | (stores_b & loads_a))
    if shared:
        raise FuseError(f"both split loops access {', '.join(map(repr, shared))}, which one of them stores: fused, "
                        "a core could read or overwrite tiles of another core's share out of order")
    return ta, tb


def _renamed(tl: ir.TileLoop, var: str, taken: set[str]) -> ir.TileLoop:
    """`tl` with its tile variable called `var` and the values it assigns renamed away from `taken`."""
    names = {s.name for s in tl.body if isinstance(s, ir.Assign)}
    new: dict[str, str] = {}
    for n in sorted(names & taken):
        k = 2
        while f"{n}_{k}" in taken | names:
            k += 1
        new[n] = f"{n}_{k}"

    def expr(e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Ref) and e.name in new:
            return replace(e, name=new[e.name])
        if isinstance(e, ir.Load) and e.index.var == tl.var:
            return replace(e, index=replace(e.index, var=var))
        if isinstance(e, (ir.Op, ir.VectorMath)):
            return replace(e, args=tuple(expr(a) for a in e.args))
        return e

    body = []
    for s in tl.body:
        s = replace(s, value=expr(s.value))
        if isinstance(s, ir.Assign) and s.name in new:
            s = replace(s, name=new[s.name])
        if isinstance(s, ir.Store) and s.index.var == tl.var:
            s = replace(s, index=replace(s.index, var=var))
        body.append(s)
    return replace(tl, var=var, body=tuple(body))


def fuse(kernel: ir.Kernel, j: int) -> ir.Kernel:
    """`kernel` with split loops j and j + 1 fused; FuseError says why they cannot be."""
    if j not in adjacent_pairs(kernel):
        raise FuseError(f"split loop {j} is not a vector split loop directly followed by another one")
    at = [i for i, s in enumerate(kernel.body) if isinstance(s, ir.SplitLoop)][j]
    a, b = kernel.body[at], kernel.body[at + 1]
    ta, tb = _check(j, a, b)
    top = {s.name for s in kernel.body if isinstance(getattr(s, "name", None), str)}  # scalars, accumulators
    taken = {s.name for s in ta.body if isinstance(s, ir.Assign)} | {ta.var, a.var} | {p.name for p in kernel.params} | top
    tb = _renamed(tb, ta.var, taken)
    fused = replace(a, body=(replace(ta, body=ta.body + tb.body),))
    return replace(kernel, body=(*kernel.body[:at], fused, *kernel.body[at + 2:]))
