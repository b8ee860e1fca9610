"""Focused programs for the lowering forms of sessions 30-32, which the main stream draws rarely or never.

Each builder aims at one form's code path with the sizes that decide it (the host tiling's choice) and its edges:
odd lengths and tails, one row, rows = cores +- 1, f16 / bf16 / f32 / i32 data where the form takes it.

- `slot_rows`: slot accumulators over many short planes (`x * s[r]` on short rows: the Brcb form of per-row values);
- `middim`: a box reduction with fewer rows of positions than half the cores (the reduced axis split over cores),
  every reduction op, up to cores / 2 - 1 rows;
- `norm1pass`: layer_norm / rms_norm over rows longer than 1 MB with rows >= cores (core groups walking rows);
- `row_values`: many short rows against per-row values (`x op load(c[r])`, `load(c[r]) op x`, a row's reduction
  against its row), more than 255 and sometimes more than 2032 rows per tile;
- `gather_narrow`: torch.gather(t, -1, idx) with an index narrower or wider than t's rows;
- `gather_middle`: torch.gather(g, dim, e) along the middle dim alone in its loop (session 35's vector form: x's
  column slabs in UB), R past one copy (4095 rows) and past UB (the scalar walk), C off the column block, K = 1;
- `scatter_dim0`: x.scatter(0, idx, value) / scatter / scatter_add along dim 0 with [K, D] indices;
- `scatter_shared` (session 36): index_copy / index_add along the last dim by one index row shared by every row, alone in its loop
  (the vector form: the index's inverse by Sort32 + MrgSort), D off 64 and 32 bytes, up to 4096 and past it (the
  scalar walk), rows near the cores, indices with repeats;
- `flat_sums`: flat loops that only accumulate sums (one tile per core, the tree combine over odd core counts);
- `batched_gemm`: batched matmuls with several M blocks per batch entry and a shared or batched B;
- `activations` (session 35): tanh and a * sigmoid(z) over flat tiles, arguments from near 0 into saturation; since
  session 36 also the GELU form k x (1 + erf(c x)) (legalize.py's _gelu_form);
- `softmax_rows` (session 36): e / sum(e, axis=1) with e = exp(v - max(v, axis=1)) of f16 rows (kept in f16:
  lowering/passes/softmax_division.py), rows short, long and chunked, logits from near-equal to widely spread, now and
  then a numerator or max that breaks the pattern (the f32 form);
- `flash_ring` (session 35): flash attention at the shapes the AIC-driven ring takes (f16, causal or no mask, head
  dims multiples of 16 up to 128), tails of one and several blocks, now and then a head dim it does not take;
- `scans` (session 36): whole-row cumsum / cumprod on rows that fill the scan's matrix (direct and 16-bit
  transposes, the square matrix's shared table) or fall short of it, f32 / f16 / bf16, a second f32 scan now and then.

Drawn by `gen.generate_recent` from a stream of its own (npu_harness.fuzz.campaign), so the main and multi-stage
streams, and with them every fixed-seed slice, are unchanged.
"""

from __future__ import annotations

import random

from .exprs import Exprs, Scope, leaf
from .program import Loop, Node, Stmt

RECENT_KINDS = {"slot_rows": 3, "middim": 3, "norm1pass": 2, "row_values": 3, "gather_narrow": 2, "gather_middle": 2,
                "scatter_dim0": 2, "scatter_shared": 2, "flat_sums": 2, "batched_gemm": 2, "activations": 3, "flash_ring": 3,
                "scans": 3, "softmax_rows": 3}

ROW_OPS = ("({0} + {1})", "({0} - {1})", "({1} - {0})", "({0} * {1})", "({0} / {1})", "({1} / (1.5 + abs({0})))",
           "max({0}, {1})", "min({1}, {0})")
INT_OPS = ("({0} + {1})", "({0} - {1})", "({1} - {0})", "({0} * {1})", "max({0}, {1})", "min({1}, {0})")


def _cast(e: Node, to: str) -> Node:
    return e if e.dtype == to else Node(f"cast({{0}}, {to})", (e,), to, e.layout)


def _near(r: random.Random, cores: int, lo: int = 1) -> int:
    """A count at an edge of the core count (cores - 1, cores, cores + 1) or 1, else anything up to 3 x cores."""
    return max(lo, r.choice((1, cores - 1, cores, cores + 1, r.randint(1, 3 * cores))))


def _slot_rows(r: random.Random, k, cores: int) -> dict:
    """group_norm / instance_norm-like slot accumulators over many short planes: s[r] per row of the second loop."""
    t = r.choice(("f32", "f16", "bf16"))
    k.dtype_vars = {"T": t}
    c = r.randint(1, 8)
    g = r.choice([d for d in range(1, c + 1) if c % d == 0])
    planes = r.choice((cores - 1, cores + 1, r.randint(3 * cores, 60 * cores), r.randint(3 * cores, 400 * cores)))
    sizes = {"N": max(1, planes // c), "C": c, "H": r.randint(1, 4), "W": r.choice((1, 3, 7, 8, 16, 17, 31, 64))}
    x, y = k.tensor("x", "T", "N, C, H, W"), k.tensor("y", "T", "N, C, H, W")
    grouped = r.random() < 0.5
    if grouped:
        k.params.append(f"g: i32 = {g}")
    k.body.append(Stmt(f"s = zeros({'N * g' if grouped else 'C'})"))
    ex1 = Exprs(r, Scope([leaf("xt", "f32", "rows")], k.scope_scalars([])), rows=True)
    body1 = (Stmt(f"xt = cast(load({x}[r, :]), f32)", None, "xt"),
             Stmt("s[r] += sum({0}, axis=1)", ex1.tile("f32", "rows", r.randint(0, 1))))
    k.body.append(Loop("for blk in split(N * C, cores=AIV):", "for r in tile(blk, size=auto, buffers=2):", body1))
    scope = Scope([leaf("xt", "f32", "rows")], k.scope_scalars([]))
    body2 = [Stmt(f"xt = cast(load({x}[r, :]), f32)", None, "xt")]
    if r.random() < 0.5:  # a per-channel weight: a per-row value of period C (group_norm's affine)
        w = k.tensor("w", "T", "C")
        body2.append(Stmt(f"wt = cast(load({w}[r]), f32)", None, "wt"))
        scope.tiles.append(leaf("wt", "f32", "col"))
    e = Exprs(r, scope, rows=True).tile("f32", "rows", r.randint(0, 2))
    e = Node(r.choice(ROW_OPS), (e, leaf("s[r]", "f32", "col")), "f32", "rows")
    if len(scope.tiles) > 1 and "wt" not in e.render():
        e = Node(r.choice(ROW_OPS), (e, leaf("wt", "f32", "col")), "f32", "rows")
    body2.append(Stmt(f"store({y}[r, :], cast({{0}}, T))", e))
    k.body.append(Loop("for blk in split(N * C, cores=AIV):", "for r in tile(blk, size=auto, buffers=2):",
                       tuple(body2)))
    return sizes


def _middim(r: random.Random, k, cores: int) -> dict:
    """A box reduction over dim 1 (or 0) with 1 .. cores / 2 - 1 rows of positions and a long reduced axis (i32 boxes:
    sum / max / min of the loaded values)."""
    t = r.choice(("f32", "f16", "bf16", "i32"))
    k.dtype_vars = {"T": t}
    dim0 = r.random() < 0.3
    rows = 1 if dim0 else r.choice((1, 2, 3, max(1, cores // 2 - 1), max(1, cores // 2 - 2), r.randint(1, cores // 2)))
    c = r.choice((16, 32, 64, 96, 100, 128, 256, 7, 33, 250))
    red = r.randint(max(20, 8192 // c), max(40, min(2000, 600_000 // (rows * c))))
    sizes = {"A": red if dim0 else rows, "R": r.randint(1, 3) if dim0 else red, "C": c}
    split, axis, out_shape = ("R * C", 0, "R, C") if dim0 else ("A * C", 1, "A, C")
    x, y = k.tensor("x", "T", "A, R, C"), k.tensor("y", "T", out_shape)
    compute = "f32" if t == "bf16" or (t != "i32" and r.random() < 0.5) else t
    op = r.choice(("sum", "max", "min") if t == "i32" else ("sum", "mean", "max", "min", "prod", "sum"))
    inner = leaf("xb", compute, "box") if t == "i32" else \
        Exprs(r, Scope([leaf("xb", compute, "box")], k.scope_scalars([]))).tile(compute, "box", r.randint(0, 1))
    if op == "prod":
        inner = Node("(0.5 + 0.5 * sigmoid({0}))", (inner,), compute, "box")
    body = [Stmt("xb = {0}", _cast(leaf(f"load({x}[t])", t, "box"), compute), "xb"),
            Stmt(f"m = {op}({{0}}, axis={axis})", inner, "m")]
    if t != "i32" and r.random() < 0.3:  # a second reduction combined in the same partials
        op2 = r.choice(("sum", "max", "min"))
        body.append(Stmt(f"m2 = {op2}(xb, axis={axis})", None, "m2"))
        out = Node("({0} - m2)", (leaf("m", compute, "flat"),), compute, "flat")
    else:
        out = leaf("m", compute, "flat") if t == "i32" else \
            Exprs(r, Scope([leaf("m", compute, "flat")], k.scope_scalars([]))).tile(compute, "flat", r.randint(0, 1))
        if "m" not in out.render():
            out = leaf("m", compute, "flat")
    body.append(Stmt(f"store({y}[t], {{0}})", _cast(out, "T")))
    k.body.append(Loop(f"for blk in split({split}, cores=AIV):", "for t in tile(blk, size=auto, buffers=2):",
                       tuple(body)))
    return sizes


def _norm1pass(r: random.Random, k, cores: int) -> dict:
    """layer_norm / rms_norm over rows of 262,200-300,000 elements, rows >= cores (groups of cores per row)."""
    t = r.choice(("f32", "f16", "bf16"))
    k.dtype_vars = {"T": t}
    sizes = {"B": r.choice((cores, cores + 1, 2 * cores, 2 * cores - 1 if cores > 1 else 3)),
             "D": r.randint(262_200, 300_000)}
    x, y = k.tensor("x", "T", "B, D"), k.tensor("y", "T", "B, D")
    w = k.tensor("w", "T", "D") if r.random() < 0.6 else None
    b = k.tensor("b", "T", "D") if w is not None and r.random() < 0.6 else None
    body = [Stmt(f"v = cast(load({x}[r, :]), f32)", None, "v")]
    if r.random() < 0.6:
        body.append(Stmt(r.choice(("mu = mean(v, axis=1)", "mu = sum(v, axis=1) / D")), None, "mu"))
        body.append(Stmt("d = v - mu", None, "d"))
        body.append(Stmt(r.choice(("var = mean(d * d, axis=1)", "var = sum(d ** 2, axis=1) / D")), None, "var"))
        e = "d * rsqrt(var + 0.00001)"
    else:
        e = "v * rsqrt(mean(v * v, axis=1) + 0.000001)"
    if w is not None:
        body.append(Stmt(f"wt = cast(load({w}[:]), f32)", None, "wt"))
        e = f"({e}) * wt"
    if b is not None:
        body.append(Stmt(f"bt = cast(load({b}[:]), f32)", None, "bt"))
        e = f"{e} + bt"
    body.append(Stmt(f"store({y}[r, :], cast({e}, T))"))
    k.body.append(Loop("for blk in split(B, cores=AIV):", "for r in tile(blk, size=auto, buffers=2):", tuple(body)))
    return sizes


def _row_values(r: random.Random, k, cores: int) -> dict:
    """Many short rows against per-row values: x op load(c[r]) either way round, a row reduction against its row."""
    t = r.choice(("f32", "f16", "bf16", "i32"))
    k.dtype_vars = {"T": t}
    compute = "f32" if t == "bf16" or (t != "i32" and r.random() < 0.5) else t
    ops = ROW_OPS if t != "i32" else INT_OPS
    d = r.choice((1, 2, 7, 8, 16, 17, 31, 63, 64, 65, 100, 127, 128, 129, 200, 255, 256))
    per_core = r.choice((3, 4, 9, r.randint(3, 300), r.randint(256, 600)) + ((r.randint(2033, 2600),) if d <= 16 else ()))
    sizes = {"B": per_core * cores + r.choice((0, 1, -1, r.randint(0, cores))), "D": d}
    split, shape = "B", "B"
    if r.random() < 0.35:  # over split(A * B): per-row values of [A] (row q reads q / B), [B] (q % B) or [A, B]
        a = r.choice((2, 3, 7, r.randint(2, 40)))
        sizes.update(A=a, B=max(1, sizes["B"] // a))
        split, shape = "A * B", r.choice(("A", "B", "A, B"))
    rows = "A, B" if split != "B" else "B"
    x, c, y = k.tensor("x", "T", f"{rows}, D"), k.tensor("c", "T", shape), k.tensor("y", "T", f"{rows}, D")
    body = [Stmt("v = {0}", _cast(leaf(f"load({x}[r, :])", t, "rows"), compute), "v"),
            Stmt("cv = {0}", _cast(leaf(f"load({c}[r])", t, "col"), compute), "cv")]
    v, cv = leaf("v", compute, "rows"), leaf("cv", compute, "col")
    e = Node(r.choice(ops), (v, cv), compute, "rows")
    if t != "i32" and r.random() < 0.4:  # more element-wise work on either side (per-row values included)
        more = Exprs(r, Scope([v, cv], k.scope_scalars(["B", "D"])), rows=True).tile(compute, r.choice(("rows", "col")),
                                                                                   r.randint(1, 2))
        e = Node(r.choice(ops), (e, more) if more.layout == "rows" or r.random() < 0.5 else (more, e), compute, "rows")
    if t != "i32" and r.random() < 0.4:  # a row's reduction against its row (softmax-like; i32 rows: none, A2's
        red = Node(f"{r.choice(('max', 'sum', 'min', 'mean'))}({{0}}, axis=1)", (v,), compute, "col")  # ReduceSum
        e = Node(r.choice(ops), (e, red), compute, "rows")  # & co. take half and float)
    if r.random() < 0.3:  # and a row vector
        w = k.tensor("w", "T", "D")
        body.append(Stmt("wv = {0}", _cast(leaf(f"load({w}[:])", t, "row"), compute), "wv"))
        e = Node(r.choice(ops[:4]), (e, leaf("wv", compute, "row")), compute, "rows")
    body.append(Stmt(f"store({y}[r, :], {{0}})", _cast(e, "T")))
    k.body.append(Loop(f"for blk in split({split}, cores={r.choice(('AIV', 'AIV', str(cores)))}):",
                       f"for r in tile(blk, size=auto, buffers={r.choice((1, 2))}):", tuple(body)))
    return sizes


def _gather_narrow(r: random.Random, k, cores: int) -> dict:
    """torch.gather(t, -1, p) with p [B, D] and t [B, E] (D != E either way), or index_select(t, -1, p[D])."""
    t = r.choice(("f32", "f16", "i32"))
    k.dtype_vars = {"T": t}
    sizes = {"B": _near(r, cores), "D": r.choice((1, 5, 8, 13, 64, 100, 257, r.randint(1, 700))),
             "E": r.choice((1, 3, 16, 77, 300, r.randint(1, 900)))}
    tt = k.tensor("t", "T", "B, E")
    whole = r.random() < 0.7
    p = k.tensor("p", r.choice(("i32", "i64")), "B, D" if whole else "D")
    y = k.tensor("y", "T", "B, D")
    call = f"gather({tt}, load({p}[r, :]))" if whole else f"index_select({tt}, load({p}[:]))"
    body = [Stmt(f"g = {call}", None, "g")]
    e: Node = leaf("g", t, "rows")
    if r.random() < 0.5:
        x = k.tensor("x", "T", "B, D")
        body.append(Stmt(f"xv = load({x}[r, :])", None, "xv"))
        e = Node(r.choice(INT_OPS if t == "i32" else ROW_OPS[:4]), (e, leaf("xv", t, "rows")), t, "rows")
    body.append(Stmt(f"store({y}[r, :], {{0}})", e))
    k.body.append(Loop("for blk in split(B, cores=AIV):", f"for r in tile(blk, size=auto, buffers={r.choice((1, 2))}):",
                       tuple(body)))
    return sizes


def _gather_middle(r: random.Random, k, cores: int) -> dict:
    """torch.gather(g, dim, e) along the middle dim R of g [A.., R, C], alone in its loop (lowering/passes/
    plan_gather_middle.py: the vector form): the column blocks' edges (C off 32 bytes, C = 1), K = 1, one or two
    group dims, a group count near the cores; R long enough for several slab copies or for the scalar walk."""
    t = r.choice(("f32", "f16", "i32"))
    k.dtype_vars = {"T": t}
    long = r.random() < 0.15  # R past 4095 rows (one copy) or past UB (the scalar walk): few columns and rows
    sizes = {"A": r.choice((1, 2)) if long else r.choice((1, 2, 5, _near(r, cores))),
             "R": r.choice((4100, 6000, r.randint(4096, 7000))) if long else r.choice((1, 2, 9, 64, 256, r.randint(1, 600))),
             "C": r.choice((1, 5, 8, 13)) if long else r.choice((1, 5, 8, 13, 16, 64, 100, 257, r.randint(1, 700))),
             "K": r.choice((1, 2, 3)) if long else r.choice((1, 2, 7, 33, r.randint(1, 80)))}
    lead = "A"
    if not long and r.random() < 0.3:
        lead, sizes["H"] = "A, H", r.randint(1, 3)
    g = k.tensor("g", "T", f"{lead}, R, C")
    e = k.tensor("e", r.choice(("i32", "i64")), f"{lead}, K, C")
    y = k.tensor("y", "T", f"{lead}, K, C")
    k.body.append(Loop(f"for blk in split({lead.replace(', ', ' * ')} * K, cores=AIV):",
                       f"for r in tile(blk, size=auto, buffers={r.choice((1, 2))}):",
                       (Stmt(f"store({y}[r, :], gather({g}, load({e}[r, :])))"),)))
    return sizes


def _scatter_dim0(r: random.Random, k, cores: int) -> dict:
    """x.scatter(0, g, value) / scatter(x, 0, g, src) / scatter_add with [K, D] indices into [B, D] rows."""
    t = r.choice(("f32", "f16", "i32"))
    k.dtype_vars = {"T": t}
    sizes = {"B": _near(r, cores), "D": r.choice((1, 7, 16, 33, 100, r.randint(1, 300))), "K": r.randint(1, 50)}
    x, y = k.tensor("x", "T", "B, D"), k.tensor("y", "T", "B, D")
    g = k.tensor("g", r.choice(("i32", "i64")), "K, D")
    form = r.choice(("value", "value", "scatter", "scatter_add"))
    if form == "value":
        call = f"scatter(v, {g}, {r.choice(('-3', '0', '7') if t == 'i32' else ('-2.5', '0.0', '3.0', '1e-3'))})"
    else:
        call = f"{form}(v, {g}, {k.tensor('s', 'T', 'K, D')})"
    body = (Stmt(f"v = load({x}[r, :])", None, "v"), Stmt(f"store({y}[r, :], {call})"))
    k.body.append(Loop("for blk in split(B, cores=AIV):", "for r in tile(blk, size=auto, buffers=2):", body))
    return sizes


def _scatter_shared(r: random.Random, k, cores: int) -> dict:
    """scatter(x, load(u[:]), src) / scatter_add (index_copy / index_add along the last dim by one shared index row)
    alone in its loop (lowering/passes/plan_scatter_shared.py: the vector form when D <= 4096, else the host's scalar
    walk)."""
    t = r.choice(("f32", "f16"))
    k.dtype_vars = {"T": t}
    long = r.random() < 0.1
    d = r.choice((4097, 4160, r.randint(4097, 6000))) if long else \
        r.choice((1, 7, 64, 100, 257, 1000, 2048, 4096, r.randint(1, 4096)))
    sizes = {"B": r.choice((1, 2, 3)) if long else _near(r, cores), "D": d}
    x, s, y = k.tensor("x", "T", "B, D"), k.tensor("s", "T", "B, D"), k.tensor("y", "T", "B, D")
    u = k.tensor("u", r.choice(("i32", "i64")), "D")
    src = f"load({s}[r, :])"
    if r.random() < 0.5:  # index_add: repeats add in column order, the source now and then scaled (alpha=)
        call = "scatter_add"
        src += r.choice(("", "", " * 0.5", " * -3.0"))
    else:  # index_copy: the last source wins
        call = "scatter"
    k.body.append(Loop("for blk in split(B, cores=AIV):", f"for r in tile(blk, size=auto, buffers={r.choice((1, 2))}):",
                       (Stmt(f"store({y}[r, :], {call}(load({x}[r, :]), load({u}[:]), {src}))"),)))
    return sizes


def _flat_sums(r: random.Random, k, cores: int) -> dict:
    """Losses' shape: flat loops that only accumulate sums (one tile when the share fits), the totals stored."""
    t = r.choice(("f32", "f16", "bf16"))
    k.dtype_vars = {"T": t}
    sizes = {"N": r.choice((1, 255, 257, cores * 256 - 1, cores * 256 + 1, r.randint(1, 20000), r.randint(1, 200_000)))}
    xs = [k.tensor("x", "T", "N") for _ in range(r.randint(1, 2))]
    o = k.tensor("o", "f32", "1")
    body = [Stmt(f"v{i} = cast(load({x}[t]), f32)", None, f"v{i}") for i, x in enumerate(xs)]
    scope = Scope([leaf(f"v{i}", "f32", "flat") for i in range(len(xs))], k.scope_scalars(["N"]))
    accs = [k.fresh("a") for _ in range(r.randint(1, 3))]
    for a in accs:
        body.append(Stmt(f"{a} += sum({{0}})", Exprs(r, scope).tile("f32", "flat", r.randint(0, 2))))
        k.body.append(Stmt(f"{a} = 0.0"))
    k.body.append(Loop(f"for blk in split(N, cores={r.choice(('AIV', 'AIV', str(cores)))}):",
                       f"for t in tile(blk, size=auto, buffers={r.choice((1, 2))}):", tuple(body)))
    total = " + ".join(accs) if r.random() < 0.5 else f"{accs[0]} / N"
    k.body.append(Stmt(f"store({o}[0], {total})"))
    return sizes


def _batched_gemm(r: random.Random, k, cores: int) -> dict:
    """matmul over [Bt, M, K] x [Bt?, K, N] with several M and N blocks per batch entry, an epilogue, T or f32 out."""
    t = r.choice(("f16", "bf16"))
    k.dtype_vars = {"T": t}
    sizes = {"Bt": r.randint(2, 5), "M": r.randint(100, 400), "N": r.randint(1, 400), "K": r.randint(1, 300)}
    tb = r.random() < 0.3
    a = k.tensor("a", "T", "Bt, M, K")
    b = k.tensor("b", "T", ("Bt, " if r.random() < 0.7 else "") + ("N, K" if tb else "K, N"))
    out_t = r.random() < 0.4
    c = k.tensor("c", "T" if out_t else "f32", "Bt, M, N")
    e = Exprs(r, Scope([leaf("acc", "f32", "rows")], k.scope_scalars([]))).tile("f32", "rows", r.randint(0, 2))
    if "acc" not in e.render():
        e = Node("({0} + acc)", (e,), "f32", "rows")
    opts = ", transpose_b=True" if tb else ""
    k.body.append(Loop("for blk in split(Bt, M, N, cores=AIC):", "with vector:",
                       (Stmt(f"store({c}[blk], {{0}})", _cast(e, "T") if out_t else e),),
                       cube_prefix=("with cube:", f"    acc = matmul({a}[blk], {b}[blk]{opts})")))
    return sizes


def _activations(r: random.Random, k, cores: int) -> dict:
    """Session 35's expansions: tanh (series near 0, the clamp) and a * sigmoid(z) as a / (1 + exp(-z)) (z = a,
    a scaled a, or another tile; f16 in f32), arguments scaled from near 0 into saturation and exp overflow."""
    t = r.choice(("f32", "f16", "bf16"))
    k.dtype_vars = {"T": t}
    compute = "f32" if t == "bf16" or r.random() < 0.25 else t
    sizes = {"N": r.choice((1, 255, 257, cores * 256 + 1, r.randint(1, 20000)))}
    x, y = k.tensor("x", "T", "N"), k.tensor("y", "T", "N")
    body = [Stmt("v = {0}", _cast(leaf(f"load({x}[t])", t, "flat"), compute), "v")]
    v = leaf("v", compute, "flat")
    z = Node(f"({{0}} * {r.choice(('0.01', '0.2', '1.0', '8.0', '60.0'))})", (v,), compute, "flat")
    e = Exprs(r, Scope([v], k.scope_scalars(["N"]))).tile(compute, "flat", r.randint(0, 1))
    form = r.choice(("tanh({0})", "tanh({1})", "({1} * sigmoid({0}))", "(sigmoid({0}) * {1})", "({0} * sigmoid({0}))",
                     "(v * sigmoid({0}))", "(0.5 * {0} * (1.0 + erf({0} * 0.7071067811865476)))",  # GELU (session 36)
                     "((erf(2.0 * {1}) + 1.0) * ({1} * 3.0))"))
    body.append(Stmt(f"store({y}[t], {{0}})", _cast(Node(form, (z, e), compute, "flat"), "T")))
    k.body.append(Loop(f"for blk in split(N, cores={r.choice(('AIV', 'AIV', str(cores)))}):",
                       f"for t in tile(blk, size=auto, buffers={r.choice((1, 2))}):", tuple(body)))
    return sizes


def _scans(r: random.Random, k, cores: int) -> dict:
    """Session 36's whole-row scans that transpose straight from the row (lowering/vector_scan.py): rows that fill the
    L x P matrix (D = 512 m; 4096: P = L, the forward table taken back), rows a few elements short of it and any
    row of 3,585-4,608 (the padded path), cumsum / cumprod either way, inclusive or exclusive, on T's own rows
    (f16 / bf16: 16-bit Gathers) and now and then a second scan on the row cast to f32 in the same loop (one scratch,
    mixed element sizes: 4-byte tables)."""
    t = r.choice(("f32", "f16", "bf16"))
    k.dtype_vars = {"T": t}
    m = r.randint(1, 9)
    sizes = {"B": r.choice((1, 3, cores - 1, cores + 1, r.randint(1, 3 * cores))),
             "D": r.choice((512 * m, 512 * m, 4096, 512 * m - r.randint(1, 7), r.randint(3585, 4608)))}
    x, y = k.tensor("x", "T", "B, D"), k.tensor("y", "T", "B, D")
    body = [Stmt(f"v = load({x}[r, :])", None, "v")]

    def scan(arg: str) -> str:
        call = r.choice(("cumsum", "cumprod") if t != "bf16" else ("cumsum",))  # bf16: no arithmetic for cumprod's range
        flags = "".join(f", {f}=True" for f in ("reverse", "exclusive") if r.random() < 0.5)
        return f"{call}({arg if call == 'cumsum' else f'(0.5 + 0.5 * sigmoid({arg}))'}, axis=1{flags})"

    body.append(Stmt(f"store({y}[r, :], {scan('v')})"))
    if r.random() < 0.3:
        z = k.tensor("z", "f32", "B, D")
        body.append(Stmt(f"store({z}[r, :], {scan('cast(v, f32)')})"))
    k.body.append(Loop("for blk in split(B, cores=AIV):", f"for r in tile(blk, size=auto, buffers={r.choice((1, 2))}):",
                       tuple(body)))
    return sizes


def _softmax_rows(r: random.Random, k, cores: int) -> dict:
    """Softmax of f16 rows, e / sum(e, axis=1) with e = exp(v - max(v, axis=1)) (session 36: the division in f16),
    v a scaled load or more element-wise work on it; rows of 1 to ~40,000 columns (long rows take chunked passes),
    1 to 3 x cores rows; now and then the max of another tile or a scaled numerator (not the pattern: f32)."""
    t = r.choice(("f16", "f16", "f16", "f32"))
    k.dtype_vars = {"T": t}
    sizes = {"B": _near(r, cores), "D": r.choice((1, 2, 17, 128, 255, 4096, r.randint(1, 3000), r.randint(20000, 40000)))}
    x, y = k.tensor("x", "T", "B, D"), k.tensor("y", "T", "B, D")
    body = [Stmt("v = {0}", leaf(f"load({x}[r, :])", t, "rows"), "v")]
    v = leaf("v", t, "rows")
    z = Node(f"({{0}} * {r.choice(('0.001', '0.3', '1.0', '4.0', '30.0'))})", (v,), t, "rows")
    if r.random() < 0.3:
        z = Exprs(r, Scope([z], k.scope_scalars(["B", "D"])), rows=True).tile(t, "rows", r.randint(1, 2))
    body.append(Stmt("z = {0}", z, "z"))
    # v: another tile's max (e may exceed 1: the f32 form; in f32 the row sum may be subnormal: every e = exp(0.3 v -
    # max(v)) below 2^-126, where x * (1 / s) was inf * 0 = NaN until emit/scalar_division.py, seed 3606 r138)
    mx = r.choice(["z"] * 8 + ["v"])
    body.append(Stmt(f"e = exp(z - max({mx}, axis=1))", None, "e"))
    num = r.choice(["e"] * 8 + ["(e * 2.0)"])
    body.append(Stmt(f"store({y}[r, :], {num} / sum(e, axis=1))"))
    k.body.append(Loop(f"for blk in split(B, cores={r.choice(('AIV', 'AIV', str(cores)))}):",
                       f"for r in tile(blk, size=auto, buffers={r.choice((1, 2))}):", tuple(body)))
    return sizes


def _flash_ring(r: random.Random, k, cores: int) -> dict:
    """Flash attention at the shapes the AIC-driven ring takes (lowering/passes/plan_flash_ring.py, session 35): f16,
    causal (either spelling, a fill that weighs the masked keys 0) or no mask, head dims multiples of 16 up to 128
    (now and then any head dim: the ring's project then runs its Matmul-API form), query and key lengths over one
    and several 128-row blocks with odd tails, more heads than AI Cores now and then, a scale literal or parameter
    (scaled in S unless it is +-2^-k: exact in Q), f32 or T out."""
    k.dtype_vars = {"T": "f16"}
    sizes = {"M": r.choice((r.randint(1, 140), r.randint(200, 520))), "N": r.choice((r.randint(1, 140), r.randint(200, 520))),
             "Dk": 16 * r.randint(1, 8), "Dv": 16 * r.randint(1, 8)}
    if r.random() < 0.15:
        sizes[r.choice(("Dk", "Dv"))] = r.randint(1, 128)
    causal = r.random() < 0.6
    if causal and r.random() < 0.6:
        sizes["N"] = sizes["M"]  # self-attention
    if r.random() < 0.5:
        batch, sizes["Bt"] = "Bt", r.choice((1, 2, 3, cores // 2 + 1))
    else:
        batch = "B * H"
        sizes.update(B=r.randint(1, 2), H=r.randint(1, 3))
    lead = batch.replace(" *", ",") + ", "
    q, kk, v = k.tensor("q", "T", lead + "M, Dk"), k.tensor("k", "T", lead + "N, Dk"), k.tensor("v", "T", lead + "N, Dv")
    out_t = r.random() < 0.3
    o = k.tensor("o", "T" if out_t else "f32", lead + "M, Dv")
    scale = k.scalar_param().render() if r.random() < 0.4 else r.choice(["0.125", "0.0884", "1.0", "-0.3", "2.0"])
    p = k.fresh("p")
    k.body.append(Stmt(f"{p} = workspace(T, {lead}M, N)", None, p))
    scaled = r.choice([f"s * {scale}", f"{scale} * s"])
    if causal:
        cond = r.choice(["col_index() <= row_index()", "row_index() >= col_index()"])
        lines = [f"x = select({cond}, {scaled}, {r.choice(['-3.0e38', '-1.0e30'])})", "e = exp(x - max(x, axis=1))"]
    else:
        lines = r.choice([[f"e = exp((s - max(s, axis=1)) * {scale})"], [f"x = {scaled}", "e = exp(x - max(x, axis=1))"]])
    flash_stages(k, p, batch, (q, kk, v, o), out_t, lines)
    return sizes


def flash_stages(k, p: str, batch: str, qkvo: tuple[str, str, str, str], out_t: bool, lines: list[str]) -> None:
    """The two cube stages of a flash-attention program, appended to k: S = q k^T with `lines` (the vector lines that
    compute e from s) and P = e / sum(e) stored into the workspace `p`, then O = P v stored into o (cast to T when
    `out_t`)."""
    q, kk, v, o = qkvo
    body = tuple(Stmt(line) for line in lines) + (Stmt(f"store({p}[blk], cast(e / sum(e, axis=1), T))"),)
    k.body.append(Loop(f"for blk in split({batch}, M, N, cores=AIC):", "with vector:", body,
                       cube_prefix=("with cube:", f"    s = matmul({q}[blk], {kk}[blk], transpose_b=True)")))
    out = "cast(acc, T)" if out_t else "acc"
    k.body.append(Loop(f"for blk in split({batch}, M, Dv, cores=AIC):", "with vector:", (Stmt(f"store({o}[blk], {out})"),),
                       cube_prefix=("with cube:", f"    acc = matmul({p}[blk], {v}[blk])")))


BUILDERS = {"slot_rows": _slot_rows, "middim": _middim, "norm1pass": _norm1pass, "row_values": _row_values,
            "gather_narrow": _gather_narrow, "gather_middle": _gather_middle, "scatter_dim0": _scatter_dim0,
            "scatter_shared": _scatter_shared, "flat_sums": _flat_sums, "batched_gemm": _batched_gemm,
            "activations": _activations, "flash_ring": _flash_ring, "scans": _scans, "softmax_rows": _softmax_rows}

