"""Single-pass row statistics for chunked rows: the centred second moment read with its mean (docs/design.md).

In the chunked variant (plan_chunks.py) every reduction gets a depth and pass k re-reads the row, so
`m = mean(v)` (pass k) followed by `q = sum((v - c) ** 2)` with `c` a per-row value of depth k + 1 (the
mean, `sum(v) / D`, ...) costs a pass of its own. This step recognises that pattern in the three-address
body (`q` reduces `d * d` or `d ** 2`, `d = v - c` or `c - v`; `m` and `q` are `sum` or `mean`; f32 `v`)
and folds `q` in the pass of `m`:

* per chunk (lowering/emit/chunk.py, snippet `chunk_moments`): the sums s1, s2 of the chunk's deviations
  from a shift K and of their squares are reduced on the vector unit (K: the first chunk's own mean, then the
  running mean of the chunks before); the scalar unit merges the chunk into the row's (count, mean, M2) one
  chunk later (so it never waits for the vector unit inside a chunk and the copies keep overlapping), by
  Chan, Golub and LeVeque's parallel formula: M2 = M2a + M2b + d^2 * na * nb / n with d = mean_b - mean_a
  = s1 / nb (K is mean_a: no difference of large means is formed) and the chunk's M2b = s2 - s1^2 / nb.
  Partials of a core group merge the same way (emit/row_groups.py).
* after the pass `m` is the row's mean (times the count for `sum`), and `q` is M2 + n * (mean - c)^2: the
  written `sum((v - c)^2)` for any per-row c (exactly M2 when c is `m` itself), a sum of non-negative
  terms, so no cancellation whatever the mean.

The pass of `q` loses that reduction and is dropped when nothing else is left in it: layer_norm and
instance_norm read x twice instead of three times.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

#: Reductions that may be the mean (first) or the second moment of a pair.
MOMENT_REDUCTIONS = ("reduce_sum", "reduce_mean")


@dataclass(frozen=True)
class Moments:
    """A single-pass pair: `mean` (a reduction of `value` in pass `k`) and `m2` (moved there from pass k + 1)."""

    mean: str
    m2: str
    value: ir.Ref
    k: int
    span: ir.Span

    @property
    def names(self) -> tuple[str, str]:
        return self.mean, self.m2


def mean_of(name: str) -> str:
    """The per-row value holding the running mean of pair `name`."""
    return f"{name}Mean"


def count_of(name: str) -> str:
    """The running element count (f32) of pair `name`."""
    return f"{name}Count"


def shift_of(name: str) -> str:
    """The shift K the current chunk's squared deviations are taken from."""
    return f"{name}Shift"


def pending_of(name: str) -> str:
    """The element count of the chunk reduced but not merged yet (0: none)."""
    return f"{name}Pend"


def row_values(m: Moments) -> tuple[str, ...]:
    """The scalar members a pair needs beside `mean` and `m2` themselves."""
    return mean_of(m.mean), count_of(m.mean), shift_of(m.mean), pending_of(m.mean)


def _square_of(e: ir.Expr, defs: dict[str, ir.Assign]) -> ir.Op | None:
    """`d` when `e` is `d * d` (also two equal subtractions `(v - c) * (v - c)`)."""
    s = defs.get(e.name) if isinstance(e, ir.Ref) else None
    if s is None or not (isinstance(s.value, ir.Op) and s.value.op == "mul"):
        return None
    a, b = s.value.args
    da = defs.get(a.name) if isinstance(a, ir.Ref) else None
    db = defs.get(b.name) if isinstance(b, ir.Ref) else None
    if da is None or db is None or not (da is db or da.value == db.value):
        return None
    return da.value if isinstance(da.value, ir.Op) and da.value.op == "sub" else None


def find(tl: ir.TileLoop, reductions: dict, defs: dict, layout: dict, depth: dict) -> list[tuple[Moments, ir.Ref]]:
    """The pairs of `reductions` (pass -> [(name, op, operand, statement index)]) this step folds in one pass,
    each with its centre `c`; moves each `m2` out of pass k + 1 (the caller builds it into pass k)."""
    found: list[tuple[Moments, ir.Ref]] = []
    used: set[str] = set()
    for k in sorted(reductions):
        if k == 0:
            continue
        means = {a.name: (name, i) for name, op, a, i in reductions.get(k - 1, [])
                 if op in MOMENT_REDUCTIONS and isinstance(tl.body[i], ir.Assign) and a.type.dtype is DType.F32}
        for entry in list(reductions[k]):
            name, op, sq, i = entry
            if op not in MOMENT_REDUCTIONS or not isinstance(tl.body[i], ir.Assign):
                continue
            d = _square_of(sq, defs)
            if d is None:
                continue
            a, b = d.args
            v, c = (a, b) if isinstance(a, ir.Ref) and a.name in means else (b, a)
            if not (isinstance(v, ir.Ref) and v.name in means and isinstance(c, ir.Ref)
                    and layout.get(c.name) is ir.Layout.COL and layout.get(v.name) is ir.Layout.ROWS
                    and depth[v.name] == k - 1 and d.type.dtype is DType.F32):
                continue
            mean, _ = means[v.name]
            if mean in used:
                continue
            used.add(mean)
            reductions[k].remove(entry)
            found.append((Moments(mean, name, v, k - 1, tl.body[i].span), c))
        if k in reductions and not reductions[k]:
            del reductions[k]
    return found


def row_steps(m: Moments, centre: ir.Ref, mean_op: str, steps_at: dict[int, list]) -> None:
    """The per-row steps after the pair's pass: `mean` from the running mean (and count, for a sum), and the
    written sum of squared deviations from `centre`, M2 + n * (mean - c)^2 (M2 alone when c is the mean)."""
    f32 = ir.scalar_of(DType.F32)

    def ref(name: str) -> ir.Ref:
        return ir.row_ref(name, m.span)

    def op(name: str, *args: ir.Expr) -> ir.Op:
        return ir.Op(name, args, f32, m.span)

    steps = steps_at.setdefault(m.k + 1, [])
    if mean_op == "reduce_mean":  # plan_chunks scaled the folded sum by 1 / D: the mean is known
        at = next(j for j, st in enumerate(steps) if isinstance(st, ir.RowScalar) and st.name == m.mean)
        steps[at] = ir.RowScalar(m.mean, ref(mean_of(m.mean)), m.span)
    else:
        steps.insert(0, ir.RowScalar(m.mean, op("mul", ref(mean_of(m.mean)), ref(count_of(m.mean))), m.span))
    if centre.name == m.mean and mean_op == "reduce_mean":
        return
    e = op("sub", ref(mean_of(m.mean)), ref(centre.name))
    steps.append(ir.RowScalar(m.m2, op("add", ref(m.m2), op("mul", ref(count_of(m.mean)), op("mul", e, e))), m.span))


def pass_statements(m: Moments, flat_value: ir.Expr) -> list[ir.Stmt]:
    """The statements of the pair in pass k, in place of `mean`'s reduction: the merge of the chunk before and
    the shift (step "shift"), the chunk's deviations from the shift and their sum ("sum"), their squares and
    the sum of those ("sq")."""
    t = ir.tile_of(DType.F32)
    dev, sq = f"_{m.mean}Dev", f"_{m.mean}Sq"
    shift = ir.row_ref(shift_of(m.mean), m.span)
    dev_ref, sq_ref = ir.Ref(dev, t, m.span), ir.Ref(sq, t, m.span)
    return [ir.Accumulate(m.mean, ir.Combine.ADD, "reduce_sum", flat_value, None, m.span, (*m.names, "shift")),
            ir.Assign(dev, ir.Op("sub", (flat_value, shift), t, m.span), m.span),
            ir.Accumulate(m.mean, ir.Combine.ADD, "reduce_sum", dev_ref, None, m.span, (*m.names, "sum")),
            ir.Assign(sq, ir.Op("mul", (dev_ref, dev_ref), t, m.span), m.span),
            ir.Accumulate(m.m2, ir.Combine.ADD, "reduce_sum", sq_ref, None, m.span, (*m.names, "sq"))]
