"""Random row kernels with two-sided broadcasts (ascend_dsl/parser_broadcast.py), for the fuzzer.

A row loop over `split(A * B)` or `split(A * B * C)` of `[A, B(, C), D]` tensors reads, besides whole rows:
rows of tensors over a contiguous proper run of the split's symbols (`[A, D]`, `[B, D]`, `[B, C, D]`: row q reads
row (q / stride) % period), per-row values over such runs (`[A]`, `[B]`, `[A, B]` of three), and a row vector;
the element-wise expressions mix them, and comparisons / selects take per-row values and row vectors next to
whole rows (a per-row mask between whole rows: torch.where with a [.., 1] condition), and rows gathered along the middle dim of a [.., R, D] table
(index_select / take_along_dim; torch.gather of single elements). Rows of up to 1500
elements, or (long) longer than UB in chunked passes. Drawn by gen.py's row kinds from a side stream, so the
other programs of a seed stay the same.
"""

from __future__ import annotations

import random

from .exprs import COMPARE, Exprs, Scope, leaf
from .program import Loop, Node, Stmt


def _run(rng: random.Random, syms: list[str]) -> list[str]:
    """A contiguous proper sub-run of the split's symbols."""
    n = rng.randint(1, len(syms) - 1)
    start = rng.randint(0, len(syms) - n)
    return syms[start:start + n]


def build(rng: random.Random, k, kind: str, length) -> dict:
    """Fill `k` (gen._Kernel) with one broadcast row loop; returns the sizes."""
    long = kind == "long_rows"
    t = rng.choice(("f32", "f16"))
    k.dtype_vars = {"T": t} if rng.random() < 0.7 else {}
    tname = "T" if k.dtype_vars else t
    compute = rng.choice((t, "f32"))
    syms = ["A", "B"] if rng.random() < 0.6 else ["A", "B", "C"]
    sizes = {s: rng.randint(1, 7) for s in syms}
    sizes["D"] = rng.randint(12000, 40000) if long else length(rng, 1, 1500)
    full = ", ".join(syms)
    scope = Scope(scalars=k.scope_scalars([*syms, "D"]))
    body: list[Stmt] = []

    def cast(e: Node, to: str, layout: str) -> Node:
        return e if e.dtype == to else Node(f"cast({{0}}, {to})", (e,), to, layout)

    def load(text: str, layout: str) -> None:
        v = k.fresh("v")
        body.append(Stmt(f"{v} = {{0}}", cast(leaf(text, t, layout), compute, layout), v))
        scope.tiles.append(leaf(v, compute, layout))

    loads = []
    if rng.random() < 0.6:
        loads.append((k.tensor("x", tname, f"{full}, D"), "rows"))
    for _ in range(rng.randint(1 if not loads else 0, 2)):
        loads.append((k.tensor("a", tname, f"{', '.join(_run(rng, syms))}, D"), "rows"))
    for _ in range(rng.randint(0, 2)):
        loads.append((k.tensor("c", tname, ", ".join(_run(rng, syms))), "col"))
    if rng.random() < 0.3:
        loads.append((k.tensor("w", tname, "D"), "row"))
    for name, layout in loads:
        load(f"load({name}[r, :])" if layout == "rows" else f"load({name}[:])" if layout == "row"
             else f"load({name}[r])", layout)
    middle = random.Random(hash(rng.getstate()[1]) ^ 0x3D1)  # its own stream: the other draws stay as they were
    if not long and middle.random() < 0.25:  # rows gathered along the middle dim R of a [.., R, D] table
        per_row = middle.random() < 0.5  # idx over the loop's rows (take_along_dim) or over the last symbol
        table = k.tensor("g", tname, f"{', '.join(syms[:-1])}, R, D")
        index = k.tensor("n", middle.choice(("i32", "i64")), full if per_row else syms[-1])
        sizes["R"] = middle.randint(1, 9)
        load(f"load({table}[{index}[r], :])", "rows")
        if middle.random() < 0.5:  # single elements along R too (torch.gather(g, dim, e), e like the output)
            each = k.tensor("e", middle.choice(("i32", "i64")), f"{full}, D")
            load(f"gather({table}, load({each}[r, :]))", "rows")
    ex = Exprs(rng, scope, rows=True)
    for _ in range(rng.randint(0, 2)):
        v = k.fresh("v")
        body.append(Stmt(f"{v} = {{0}}", ex.tile(compute, "rows", rng.randint(1, 3)), v))
        scope.tiles.append(leaf(v, compute, "rows"))
    narrow = [n for n in scope.tiles if n.dtype == compute and n.layout in ("col", "row")]
    if narrow and rng.random() < 0.7:  # a per-row mask / row-vector mask between whole rows (or per-row values)
        m = rng.choice(narrow)
        rhs = ex.scalar(0) if rng.random() < 0.6 else rng.choice(scope.of(compute, m.layout))
        mask = Node(f"({{0}} {rng.choice(COMPARE)} {{1}})", (m, rhs), "bool", m.layout)
        picks = [rng.choice(scope.of(compute, "rows") + narrow) for _ in range(2)]
        if all(p.layout != "rows" for p in picks):
            picks[0] = rng.choice(scope.of(compute, "rows"))
        if rng.random() < 0.3:
            picks[1] = ex.scalar(0)
        v = k.fresh("v")
        body.append(Stmt(f"{v} = {{0}}", Node("select({0}, {1}, {2})", (mask, *picks), compute, "rows"), v))
        scope.tiles.append(leaf(v, compute, "rows"))
    y = k.tensor("y", tname, f"{full}, D")
    body.append(Stmt(f"store({y}[r, :], {{0}})", cast(ex.tile(compute, "rows", rng.randint(0, 2)), tname, "rows")))
    if rng.random() < 0.3:
        z = k.tensor("z", tname, full)
        body.append(Stmt(f"store({z}[r], {{0}})", cast(ex.tile(compute, "col", rng.randint(0, 2)), tname, "col")))
    size = f"size={rng.choice((1, 2, 4, 8))}" if rng.random() < 0.3 else "size=auto"
    k.body.append(Loop(f"for blk in split({' * '.join(syms)}, cores=AIV):",
                       f"for r in tile(blk, {size}, buffers={rng.choice((1, 2))}):", tuple(body)))
    return sizes
