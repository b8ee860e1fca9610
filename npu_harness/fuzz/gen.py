"""Random valid kernels covering the language: one builder per kernel kind.

Kinds (weights in KINDS): flat tiles (f32 / f16 / bf16 / i32 data, explicit or auto tile sizes, one or
two buffers), row tiles with reductions, row vectors, per-row values, scans and gather, rows read through an index
tensor (`load(e[j[r], :])`, negative row numbers included), argmax / argmin into i64 outputs, positions
(`col_index()` / `row_index()` in formulas and masks), gathers along rows by whole rows of indices, rows longer than
UB (chunked, and with fewer rows than cores: row groups), slot accumulators over [N, C, H, W] planes,
boxes (reductions over dim 0 or 1), pooling windows (1-3 spatial dims) and resampling (1-2), cube matmuls with
vector epilogues, conv1d/2d/3d on the cube (CONV kernels: stride, padding, dilation, groups, bias) and
conv_transpose1d/2d/3d (the same options and output_padding), the conv2d forms of the NC1HWC0 route (conv5hd)
(`generate`); chains of two cube stages joined by a workspace tensor, kernels of several launches, single cube
splits the compiler cuts into launches (ascend_dsl/autosplit.py), convolutions with per-dim options and chunk-wise
cube stages through views (chunked.py) (`generate_stages`, a stream of its own).
Any of the vector kinds may
carry accumulators, several split loops, kernel-scope scalars
before, between and after the loops (launch-time math, `load(x[0])` values and the device math on them,
single-element stores) and scalar sub-expressions inside the tile loops. Sizes have tails: odd lengths,
fewer rows than cores, shares that are not whole tiles. Every program is valid by construction except
for the few the compiler may reject with a located error (UB capacity of a large explicit tile, ...),
which the runner counts as rejections.
"""

from __future__ import annotations

import random

from . import broadcast, chunked, recent
from .exprs import Exprs, Scope, leaf
from .program import Loop, Node, Program, Stmt

KINDS = {"flat": 30, "rows": 24, "long_rows": 6, "slots": 6, "box": 10, "window": 7, "cube": 9, "conv": 6,
         "conv_t": 4, "scalar_stress": 8, "conv5hd": 4}
#: Multi-stage kinds, drawn by `generate_stages` from a stream of their own (npu_harness.fuzz.campaign), so
#: adding one leaves every program of `generate`'s stream, and so the fixed seeds' slices, unchanged.
STAGE_KINDS = {"chain": 1, "flash": 1, "launches": 1, "views": 1, "autosplit": 1, "conv_dims": 1, "chunked": 1,
                "row_fallback": 1}
TARGETS = {"ascend910b1": 80, "ascend910b4": 10, "ascend310p": 10}
CORES = {"ascend910b1": 48, "ascend910b4": 40, "ascend310p": 8}


def _pick(rng: random.Random, table: dict[str, int]) -> str:
    return rng.choices(list(table), weights=list(table.values()))[0]


def _length(rng: random.Random, lo: int = 1, hi: int = 6000) -> int:
    """A length with tails: mostly odd or ragged, sometimes a power of two."""
    k = rng.random()
    if k < 0.25:
        n = rng.randint(lo, min(hi, 64))
    elif k < 0.8:
        n = rng.randint(lo, hi)
    else:
        n = rng.choice([256, 512, 1024, 2048, 4096, 8192])
    return max(lo, min(hi, n))


class _Kernel:
    """Parameters, kernel-scope statements and loops of one program under construction."""

    def __init__(self, rng: random.Random, name: str):
        self.r = rng
        self.name = name
        self.params: list[str] = []
        self.scalar_params: list[Node] = []
        self.body: list[Stmt | Loop] = []
        self.kscalars: list[Node] = []  # kernel-scope names readable from here on
        self.n = 0
        self.dtype_vars: dict[str, str] = {}

    def fresh(self, base: str) -> str:
        self.n += 1
        return f"{base}{self.n}"

    def tensor(self, base: str, dtype: str, shape: str) -> str:
        name = self.fresh(base)
        self.params.append(f'{name}: Tensor[{dtype}, "{shape}"]')
        return name

    def scalar_param(self, integer: bool = False) -> Node:
        name = self.fresh("n" if integer else "p")
        value = str(self.r.randint(1, 4)) if integer else self.r.choice(
            ["0.5", "0.9", "1.5", "-0.25", "2.0", "0.001", "3.0", "-1.5"])
        self.params.append(f"{name}: {'i32' if integer else 'f32'} = {value}")
        node = leaf(name, "i32" if integer else "f32", "scalar")
        self.scalar_params.append(node)
        return node

    def scope_scalars(self, symbols: list[str]) -> list[Node]:
        return self.scalar_params + self.kscalars + [leaf(s, "i32", "scalar") for s in symbols]

    def launch_scalars(self, symbols: list[str], count: int) -> None:
        """Kernel-scope scalars computed from parameters, symbols and literals (the host computes them)."""
        for _ in range(count):
            e = Exprs(self.r, Scope(scalars=self.scope_scalars(symbols))).scalar(3)
            name = self.fresh("s")
            self.body.append(Stmt(f"{name} = {{0}}", e, name))
            self.kscalars.append(leaf(name, "f32", "scalar"))

    def loaded_scalar(self, symbols: list[str]) -> None:
        """`c = load(t[0])` and device math on it, before the first loop."""
        t = self.tensor("c", "f32", "1")
        name = self.fresh("l")
        self.body.append(Stmt(f"{name} = load({t}[0])", None, name))
        self.kscalars.append(leaf(name, "f32", "scalar"))
        if self.r.random() < 0.6:
            e = Exprs(self.r, Scope(scalars=[leaf(name, "f32", "scalar")] + self.scalar_params)).scalar(2)
            d = self.fresh("d")
            self.body.append(Stmt(f"{d} = {{0}}", e, d))
            self.kscalars.append(leaf(d, "f32", "scalar"))

    def decorator(self) -> str:
        if not self.dtype_vars:
            return "@kernel"
        return "@kernel(" + ", ".join(f"{k}=[{v}]" for k, v in self.dtype_vars.items()) + ")"

    def program(self, kind: str, sizes: dict, seed: int, target: str, cores: int) -> Program:
        return Program(self.name, self.decorator(), tuple(self.params), tuple(self.body), sizes, seed, target, cores,
                       kind)


def _cast(e: Node, to: str, layout: str) -> Node:
    return e if e.dtype == to else Node(f"cast({{0}}, {to})", (e,), to, layout)


def _tile_header(rng: random.Random, var: str, granule: int) -> str:
    """`tile(blk, ...)`: sometimes an explicit size (elements of flat tiles; at most that many rows of row tiles,
    granule 1)."""
    buffers = rng.choice((1, 2, 2))
    if rng.random() < 0.3:
        return f"for {var} in tile(blk, size={granule * rng.choice((1, 2, 4, 8))}, buffers={buffers}):"
    return f"for {var} in tile(blk, size=auto, buffers={buffers}):"


def _accumulate(rng: random.Random, k: _Kernel, value: Node, accs: list[tuple[str, str]]) -> list[Stmt]:
    """Updates of fresh accumulators with `value` (declared before the loop by the caller via `accs`)."""
    out = []
    for _ in range(rng.choice((1, 1, 2))):
        combine = rng.choice(("add", "add", "max", "min"))
        name = k.fresh("a")
        accs.append((name, {"add": "0.0", "max": "-1e30", "min": "1e30"}[combine]))
        v = _cast(value, "f32", value.layout) if value.dtype not in ("f32", "f16") else value
        out.append(Stmt(f"{name} += sum({{0}})" if combine == "add" else f"{name} = {combine}({name}, {combine}({{0}}))",
                        v))
    return out


# ----------------------------------------------------------------------------- flat and row tiles


def _vector_kernel(rng: random.Random, name: str, kind: str, target: str, stress: bool = False
                   ) -> tuple[_Kernel, dict]:
    """Flat or row tiles, with accumulators, several split loops and kernel-scope scalars (many of them and
    of every form with `stress`)."""
    k = _Kernel(rng, name)
    rows = kind in ("rows", "long_rows")
    # two-sided broadcasts over split(A * B (* C)), from a side stream (the other programs stay as they were)
    if rows and target != "ascend310p" and random.Random(hash(rng.getstate()[1]) ^ 0xB40).random() < 0.15:
        return k, broadcast.build(random.Random(hash(rng.getstate()[1]) ^ 0xB41), k, kind, _length)
    bf16 = target != "ascend310p"
    t = rng.choice(("f32", "f16") + (("bf16",) if bf16 else ()))
    integer = not rows and rng.random() < 0.1
    if integer:
        t = "i32"
    k.dtype_vars = {"T": t} if rng.random() < 0.7 and not integer else {}
    tname = "T" if k.dtype_vars else t
    compute = "f32" if t == "bf16" else "i32" if integer else rng.choice((t, "f32"))
    sizes: dict[str, int]
    if rows:
        long = kind == "long_rows"
        sizes = {"B": rng.randint(1, 5) if long else _length(rng, 1, 70),
                 "D": rng.randint(12000, 40000) if long else _length(rng, 1, 1500)}
        if long and rng.random() < 0.15:  # rows over 1 MB (f32): with at most B cores, groups walk several rows
            sizes["D"] = rng.randint(262_200, 300_000)
        wide = random.Random(hash(rng.getstate()[1]) ^ 0x5CA64)  # (a side draw: the main sequence is unchanged)
        if not long and wide.random() < 0.15:  # rows of 57-72 scan segments of 64: whole-row scans' offsets in
            sizes["D"] = wide.randint(3585, 4608)  # two levels (P = 64, sums) or log-steps (P = 72; vector_scan.py)
        full = random.Random(hash(rng.getstate()[1]) ^ 0xF0115)  # (a side draw too)
        if not long and full.random() < 0.05:  # rows that fill a whole-row scan's matrix: transposed straight from the row
            sizes["D"] = 512 * full.randint(1, 9)
        symbols = ["B", "D"]
        extent, shape_in = "B", "B, D"
    else:
        sizes = {"N": _length(rng)}
        symbols = ["N"]
        extent, shape_in = "N", "N"
    xs = [k.tensor("x", tname, shape_in) for _ in range(rng.randint(1, 3))]
    extras = []
    if rows and rng.random() < 0.5:
        extras.append((k.tensor("w", tname, "D"), "row"))
    if rows and rng.random() < 0.4:
        extras.append((k.tensor("c", tname, "B"), "col"))
    idx = k.tensor("i", "i32", "B") if rows and kind == "rows" and rng.random() < 0.15 else None
    # rows read through an index tensor: load(e[j[r], :]) of a [V, D] table; drawn from a side generator so the
    # programs without one stay those the fixed-seed slices ran before it existed (no draw from `rng` here)
    side = random.Random(hash(rng.getstate()[1]))  # the ints: hash(None) varies by process
    # many short rows against a row vector or per-row values: tiles of more than 255 rows, one level-0 instruction
    # per strip of columns (lowering/emit/strided_broadcast.py; per-row values Brcb'd to blocks,
    # lowering/emit/row_value_broadcast.py); its own generator, so the other side draws stay as they were
    many = random.Random(hash(rng.getstate()[1]) + 1)
    if rows and kind == "rows" and extras and sizes["D"] <= 256 and many.random() < 0.25:
        sizes["B"] = many.randint(300, 3000)
    # 3-8 rows per core on 48 cores: the host tiling picks the tile count by its estimate (lowering/row_tile_count.py:
    # one row per tile for vector-heavy loops); its own generator, so the other draws stay as they were
    few = random.Random(hash(rng.getstate()[1]) + 2)
    if rows and kind == "rows" and sizes["D"] <= 1024 and sizes["B"] <= 70 and few.random() < 0.2:
        sizes["B"] = few.randint(3 * 48 - 47, 8 * 48)
    # rows of whole 256-byte repeats, many per core (session 34): row reductions folded a tile at a time
    # (lowering/emit/tile_fold.py: tiles of >= 4 rows), positions filled by doubling over runs of rows
    # (lowering/emit/positions.py); its own generator, so the other draws stay as they were
    folds = random.Random(hash(rng.getstate()[1]) + 3)
    if rows and kind == "rows" and folds.random() < 0.15:
        sizes["D"] = 128 * folds.randint(1, 12)
        sizes["B"] = folds.randint(4 * 48, 24 * 48)
    table = None
    if rows and side.random() < 0.15:  # rows and long (chunked) rows
        table = (k.tensor("e", tname, "V, D"), k.tensor("j", side.choice(("i32", "i64")), "B"))
        sizes["V"] = side.randint(1, 40)
    # argmax / argmin of loaded rows (exact in both oracles: no rounding decides a tie) into an i64 output
    arg = (side.choice(("argmax", "argmin")), k.tensor("m", "i64", "B")) \
        if rows and kind == "rows" and side.random() < 0.15 else None
    # positions: col_index() / row_index() (whole i32 rows), as a formula's operand and as a tril-like mask
    positions = rows and side.random() < 0.2  # long (chunked) rows too
    diag = side.randint(-3, 3)
    # gather along the row by whole rows of indices (torch.gather(x, 1, idx)); 310P has no Cast from int64
    # (sometimes one index row for every row: index_select(x, -1, idx); from a stream of its own)
    along_row = random.Random(hash(rng.getstate()[1]) ^ 0x6A7).random() < 0.3
    along = k.tensor("q", side.choice(("i32", "i64") if target != "ascend310p" else ("i32",)),
                     "D" if along_row else shape_in) if rows and kind == "rows" and side.random() < 0.15 else None
    # index_select along the last dim with the loop's D indices into rows of another length E (x's rows copied in
    # per tile, a vector Gather per row since session 33: drawn more often, 0.1 -> 0.25)
    pick = None
    if rows and kind == "rows" and t != "bf16" and random.Random(hash(rng.getstate()[1]) ^ 0x1D5).random() < 0.25:
        # (sometimes one index row per row: gather(t, load(p[r, :])), torch.gather(t, -1, p) with D of E columns)
        narrow = random.Random(hash(rng.getstate()[1]) ^ 0x1D7).random() < 0.4
        pick = (k.tensor("t", tname, "B, E"), k.tensor("p", side.choice(("i32", "i64")), shape_in if narrow else "D"),
                narrow)
        sizes["E"] = random.Random(hash(rng.getstate()[1]) ^ 0x1D6).randint(1, 300)
    # scatter / scatter_add along the row (torch.scatter(x, 1, idx, src)): whole rows of indices, or one index row
    # for every row (index_copy / index_add along the last dim); the source whole rows or a constant (value=)
    spread = None
    if rows and kind == "rows" and side.random() < 0.15:
        whole = side.random() < 0.7
        spread = (side.choice(("scatter", "scatter_add")), k.tensor("u", side.choice(("i32", "i64")),
                  shape_in if whole else "D"), whole, side.random() < 0.3)
    # rows scattered along dim 0 (index_add / index_copy / index_put of [K, D] source rows into the loop's rows)
    pour = None
    if rows and kind == "rows" and t != "bf16" and side.random() < 0.12:
        # (sometimes single elements along dim 0: scatter / scatter_add with [K, D] index and source; own stream)
        elems = random.Random(hash(rng.getstate()[1]) ^ 0x5CA7).random() < 0.35
        call = side.choice(("scatter_dim0", "scatter_add_dim0") if elems else
                           ("index_add", "index_add_alpha", "index_copy", "index_put", "index_put_acc"))
        # (scatter along dim 0 sometimes with a scalar value=: x.scatter(0, g, value); its own stream)
        value = call == "scatter_dim0" and random.Random(hash(rng.getstate()[1]) ^ 0x5CA8).random() < 0.4
        pour = (call, k.tensor("g", side.choice(("i32", "i64")), "K, D" if elems else "K"),
                str(random.Random(hash(rng.getstate()[1]) ^ 0x5CA9).choice((-2.5, 0.0, 3.0))) if value
                else k.tensor("s", tname, "K, D"))
        sizes["K"] = side.randint(1, 60)
    for _ in range(rng.randint(0, 2)):
        k.scalar_param(integer=rng.random() < 0.3)
    outs_rows = [k.tensor("y", tname, shape_in) for _ in range(rng.randint(1, 2))]
    outs_col = [k.tensor("z", tname, "B")] if rows and rng.random() < 0.4 else []
    one = k.tensor("o", "f32", "1") if rng.random() < 0.3 else None
    if rng.random() < (1.0 if stress else 0.6):
        k.launch_scalars(symbols, rng.randint(1, 4 if stress else 2))
    if rng.random() < (0.5 if stress else 0.2):
        k.loaded_scalar(symbols)
    n_loops = 1 if rng.random() < (0.3 if stress else 0.6) else 2
    pending = list(outs_rows) + list(outs_col)
    accs_total: list[str] = []
    scans_ok = rows
    # rows longer than UB: a pass walks the chunks one way, so one kernel's scans share a direction
    reverse_only = rng.random() < 0.4 if kind == "long_rows" else None
    for loop in range(n_loops):
        accs: list[tuple[str, str]] = []
        var = "r" if rows else "t"
        scope = Scope(scalars=k.scope_scalars(symbols))
        body: list[Stmt] = []
        for x in xs:
            v = k.fresh("v")
            e = leaf(f"load({x}[{var}, :])" if rows else f"load({x}[{var}])", t, "rows" if rows else "flat")
            e = _cast(e, compute, e.layout)
            body.append(Stmt(f"{v} = {{0}}", e, v))
            scope.tiles.append(leaf(v, compute, e.layout))
            if arg is not None and loop == n_loops - 1 and x == xs[0]:
                body.append(Stmt(f"store({arg[1]}[{var}], {{0}})", leaf(f"{arg[0]}({v}, axis=1)", "i64", "col")))
        if table is not None:
            v = k.fresh("v")
            body.append(Stmt(f"{v} = {{0}}", _cast(leaf(f"load({table[0]}[{table[1]}[{var}], :])", t, "rows"), compute,
                                                   "rows"), v))
            scope.tiles.append(leaf(v, compute, "rows"))
        for x, lay in extras:
            v = k.fresh("v")
            e = _cast(leaf(f"load({x}[:])" if lay == "row" else f"load({x}[{var}])", t, lay), compute, lay)
            body.append(Stmt(f"{v} = {{0}}", e, v))
            scope.tiles.append(leaf(v, compute, lay))
        if positions:
            v = k.fresh("v")
            sign = side.choice(("-", "+"))
            body.append(Stmt(f"{v} = cast(col_index() {sign} row_index(), {compute})", None, v))
            scope.tiles.append(leaf(v, compute, "rows"))
            w, a = k.fresh("v"), scope.of(compute, "rows")[0]
            cmp = side.choice(("<=", ">=", "<", ">", "==", "!="))
            body.append(Stmt(f"{w} = select(col_index() {cmp} row_index() + {diag}, {{0}}, {side.choice((0.0, -2.5))})",
                             a, w))
            scope.tiles.append(leaf(w, compute, "rows"))
        if pick is not None:
            v = k.fresh("v")
            call = f"gather({pick[0]}, load({pick[1]}[{var}, :]))" if pick[2] else \
                f"index_select({pick[0]}, load({pick[1]}[:]))"
            body.append(Stmt(f"{v} = {{0}}", _cast(leaf(call, t, "rows"),
                                                   compute, "rows"), v))
            scope.tiles.append(leaf(v, compute, "rows"))
        if along is not None:
            v = k.fresh("v")
            at = ":" if along_row else f"{var}, :"
            body.append(Stmt(f"{v} = gather({{0}}, load({along}[{at}]))", side.choice(scope.of(compute, "rows")), v))
            scope.tiles.append(leaf(v, compute, "rows"))
        if rows and compute == "f32" and side.random() < (0.5 if kind == "long_rows" else 0.1):
            # a per-row mean and the centred second moment (layer_norm's variance), in its written forms: one
            # pass over chunked rows (lowering/passes/chunk_moments.py); the deviations may take any centre
            src = side.choice(scope.of("f32", "rows"))
            mu, dv, m2 = k.fresh("v"), k.fresh("v"), k.fresh("v")
            body.append(Stmt(f"{mu} = " + side.choice(("mean({0}, axis=1)", "sum({0}, axis=1) / D")), src, mu))
            centre = mu if side.random() < 0.8 else side.choice(scope.of("f32", "col") or [leaf(mu, "f32", "col")]).fmt
            body.append(Stmt(f"{dv} = " + side.choice(("{0} - " + centre, centre + " - {0}")), src, dv))
            body.append(Stmt(f"{m2} = " + side.choice((f"mean({dv} * {dv}, axis=1)", f"sum({dv} ** 2, axis=1) / D",
                                                        f"mean(({{0}} - {centre}) * ({{0}} - {centre}), axis=1)")),
                             src, m2))
            scope.tiles += [leaf(mu, "f32", "col"), leaf(dv, "f32", "rows"), leaf(m2, "f32", "col")]
            norm = k.fresh("v")
            body.append(Stmt(f"{norm} = {dv} * rsqrt({m2} + 0.001)", None, norm))
            scope.tiles.append(leaf(norm, "f32", "rows"))
        if spread is not None:
            call, where, whole, constant = spread
            v, base = k.fresh("v"), side.choice(scope.of(compute, "rows"))
            index = f"load({where}[{var}, :])" if whole else f"load({where}[:])"
            source = leaf(str(side.choice((-2.5, 0.0, 3.0))), compute, "scalar") if constant else \
                side.choice(scope.of(compute, "rows"))
            body.append(Stmt(f"{v} = {{0}}", Node(f"{call}({{0}}, {index}, {{1}})", (base, source), compute, "rows"), v))
            scope.tiles.append(leaf(v, compute, "rows"))
        if pour is not None:
            call, where, source = pour
            v, base = k.fresh("v"), side.choice(scope.of(compute, "rows"))
            extra = {"index_add_alpha": ", alpha=0.5", "index_put_acc": ", accumulate=True"}.get(call, "")
            text = f"{call.removesuffix('_alpha').removesuffix('_acc').removesuffix('_dim0')}({{0}}, {where}, {source}{extra})"
            node = Node(text, (_cast(base, t, "rows"),), t, "rows")
            body.append(Stmt(f"{v} = {{0}}", _cast(node, compute, "rows"), v))
            scope.tiles.append(leaf(v, compute, "rows"))
        ex = Exprs(rng, scope, rows=rows, integer_ops=integer)
        main = "rows" if rows else "flat"
        for _ in range(rng.randint(0, 3)):
            lay = "col" if rows and rng.random() < 0.3 else main
            v = k.fresh("v")
            body.append(Stmt(f"{v} = {{0}}", ex.tile(compute, lay, rng.randint(1, 3)), v))
            scope.tiles.append(leaf(v, compute, lay))
        share = pending[:max(1, len(pending) // (n_loops - loop))] if loop < n_loops - 1 else pending
        if loop < n_loops - 1 and rng.random() < 0.3:
            share = []  # this loop only accumulates
        pending = [p for p in pending if p not in share]
        for y in share:
            lay = "col" if y in outs_col else main
            if rows and lay == "rows" and scans_ok and compute != "i32" and rng.random() < 0.2:
                call = rng.choice(("cumsum", "cumprod"))
                inner = ex.tile(compute, "rows", 1)
                if call == "cumprod":
                    inner = Node("(0.5 + 0.5 * sigmoid({0}))", (inner,), compute, "rows")
                flags = "".join(f", {f}=True" for f in ("reverse", "exclusive")
                                if (rng.random() < 0.4 if f == "exclusive" or reverse_only is None else reverse_only))
                e = Node(f"{call}({{0}}, axis=1{flags})", (inner,), compute, "rows")
            elif lay == "col" and idx is not None and rng.random() < 0.5:
                e = Node(f"gather({{0}}, load({idx}[{var}]))", (ex.tile(compute, "rows", 1),), compute, "col")
            else:
                e = ex.tile(compute, lay, rng.randint(0, 3))
            body.append(Stmt(f"store({y}[{var}, :], {{0}})" if lay == "rows" else f"store({y}[{var}], {{0}})",
                             _cast(e, tname if t != "i32" else "i32", lay)))
        if (loop < n_loops - 1 or rng.random() < 0.4) and compute != "i32":
            value = ex.tile(compute, rng.choice(("col", "rows")) if rows else "flat", rng.randint(0, 2))
            body += _accumulate(rng, k, value, accs)
        if not any(st.fmt.startswith("store(") for st in body) and not accs:
            y = k.tensor("y", tname, shape_in)
            body.append(Stmt(f"store({y}[{var}, :], {{0}})" if rows else f"store({y}[{var}], {{0}})",
                             _cast(ex.tile(compute, main, 1), tname if t != "i32" else "i32", main)))
        for a, init in accs:
            k.body.append(Stmt(f"{a} = {init}"))
        cores = "AIV" if rng.random() < 0.8 else str(rng.randint(1, CORES[target]))
        granule = 256 if not rows else 1
        k.body.append(Loop(f"for blk in split({extent}, cores={cores}):",
                           _tile_header(rng, var, granule), tuple(body)))
        for a, _ in accs:
            k.kscalars.append(leaf(a, "f32", "scalar"))
            accs_total.append(a)
        if accs and rng.random() < 0.7:  # scalars from the totals (device math)
            k.launch_scalars(symbols, 2 if stress else 1)
    if one is not None:
        e = Exprs(rng, Scope(scalars=k.scope_scalars(symbols))).scalar(2)
        k.body.append(Stmt(f"store({one}[0], {{0}})", e))
    return k, sizes


# ----------------------------------------------------------------------------- slot accumulators


def _slots(rng: random.Random, name: str, target: str) -> tuple[_Kernel, dict]:
    k = _Kernel(rng, name)
    t = rng.choice(("f32", "f16", "bf16"))
    k.dtype_vars = {"T": t}
    c = rng.randint(1, 6)
    g = rng.choice([d for d in range(1, c + 1) if c % d == 0])
    sizes = {"N": rng.randint(1, 3), "C": c, "H": rng.randint(1, 24), "W": rng.randint(1, 40)}
    if rng.random() < 0.2:  # planes longer than UB: chunked loops whose slot partials stay in the workspace
        sizes.update(N=rng.randint(1, 2), H=rng.randint(90, 160), W=rng.randint(90, 200))
    x = k.tensor("x", "T", "N, C, H, W")
    y = k.tensor("y", "T", "N, C, H, W")
    w = k.tensor("w", "T", "C") if rng.random() < 0.4 else None
    grouped = rng.random() < 0.5
    if grouped:
        k.params.append(f"g: i32 = {g}")
    eps = k.scalar_param()
    s = "s"
    k.body.append(Stmt(f"{s} = zeros({'N * g' if grouped else 'C'})"))
    ex1 = Exprs(rng, Scope([leaf("xt", "f32", "rows")], k.scope_scalars([])), rows=True)
    e1 = ex1.tile("f32", "rows", rng.randint(0, 2))
    body1 = (Stmt("xt = cast(load(" + x + "[r, :]), f32)", None, "xt"), Stmt(f"{s}[r] += sum({{0}}, axis=1)", e1))
    k.body.append(Loop("for blk in split(N * C, cores=AIV):", "for r in tile(blk, size=auto, buffers=2):", body1))
    scope = Scope([leaf("xt", "f32", "rows"), leaf(f"{s}[r]", "f32", "col")], k.scope_scalars([]) + [eps])
    body2 = [Stmt("xt = cast(load(" + x + "[r, :]), f32)", None, "xt")]
    if w is not None:
        body2.append(Stmt(f"wt = cast(load({w}[r]), f32)", None, "wt"))
        scope.tiles.append(leaf("wt", "f32", "col"))
    e2 = Exprs(rng, scope, rows=True).tile("f32", "rows", rng.randint(1, 3))
    body2.append(Stmt(f"store({y}[r, :], cast({{0}}, T))", e2))
    k.body.append(Loop("for blk in split(N * C, cores=AIV):", "for r in tile(blk, size=auto, buffers=2):",
                       tuple(body2)))
    return k, sizes


# ----------------------------------------------------------------------------- boxes


def _box(rng: random.Random, name: str, target: str) -> tuple[_Kernel, dict]:
    k = _Kernel(rng, name)
    t = rng.choice(("f32", "f16", "bf16"))
    k.dtype_vars = {"T": t}
    dim0 = rng.random() < 0.3
    sizes = {"A": rng.randint(1, 6), "R": rng.randint(1, 40), "C": _length(rng, 1, 400)}
    if dim0:
        split, axis, out_shape = "R * C", 0, "R, C"
    else:
        split, axis, out_shape = "A * C", 1, "A, C"
    x = k.tensor("x", "T", "A, R, C")
    b = k.tensor("b", "T", out_shape) if rng.random() < 0.4 else None
    y = k.tensor("y", "T", out_shape)
    for _ in range(rng.randint(0, 1)):
        k.scalar_param()
    if rng.random() < 0.4:
        k.launch_scalars([], 1)
    compute = "f32" if t == "bf16" or rng.random() < 0.5 else t
    scope = Scope([leaf("xb", compute, "box")], k.scope_scalars([]))
    body = [Stmt("xb = {0}", _cast(leaf(f"load({x}[t])", t, "box"), compute, "box"), "xb")]
    ex = Exprs(rng, scope)
    red = rng.choice(("sum", "mean", "max", "min", "prod"))
    inner = ex.tile(compute, "box", rng.randint(0, 2))
    if red == "prod":
        inner = Node("(0.5 + 0.5 * sigmoid({0}))", (inner,), compute, "box")
    body.append(Stmt(f"m = {red}({{0}}, axis={axis})", inner, "m"))
    flat = Scope([leaf("m", compute, "flat")], k.scope_scalars([]))
    if b is not None:
        body.append(Stmt("bt = {0}", _cast(leaf(f"load({b}[t])", t, "flat"), compute, "flat"), "bt"))
        flat.tiles.append(leaf("bt", compute, "flat"))
    body.append(Stmt(f"store({y}[t], {{0}})", _cast(Exprs(rng, flat).tile(compute, "flat", rng.randint(0, 2)), "T",
                                                    "flat")))
    # keeping the box's shape (a per-position value broadcast along the box, the box stored): drawn from a side
    # generator so the main stream, and with it every other program of a seed, is unchanged
    side = random.Random(hash(rng.getstate()[1]))
    if side.random() < 0.6:
        body += _box_keep_shape(side, k, scope, flat, compute, t)
    elif side.random() < 0.4:
        # a long reduced axis on few rows of positions: the host splits it over cores (partials combined after a
        # SyncAll, box_tiling.h.jinja); C a multiple of 32 bytes, sometimes not, R not a multiple of the parts
        few, long = side.randint(1, 3), side.randint(40, 700)
        sizes.update(A=long if dim0 else few, R=few if dim0 else long, C=side.choice((16, 32, 64, 128, 256, 96, 100)))
    k.body.append(Loop(f"for blk in split({split}, cores=AIV):", "for t in tile(blk, size=auto, buffers=2):",
                       tuple(body)))
    return k, sizes


def _box_keep_shape(side: random.Random, k: _Kernel, box: Scope, flat: Scope, compute: str, t: str) -> list[Stmt]:
    """`store(z[t], box op per-position value)`, z: [A, R, C] (a box output); sometimes the box itself as well."""
    z = k.tensor("z", "T", "A, R, C")
    v = Exprs(side, box).tile(compute, "box", side.randint(0, 1))
    m = Exprs(side, flat).tile(compute, "flat", side.randint(0, 1))
    form = side.choice(("{0} + {1}", "{0} - {1}", "{1} - {0}", "{0} * {1}", "{0} / (1.5 + abs({1}))",
                        "{1} / (1.5 + abs({0}))", "max({0}, {1})", "min({1}, {0})"))
    out = [Stmt(f"store({z}[t], {{0}})", _cast(Node(form, (v, m), compute, "box"), "T", "box"))]
    if side.random() < 0.3:  # the loaded box back out, unchanged
        w = k.tensor("w", "T", "A, R, C")
        out.append(Stmt(f"store({w}[t], {{0}})", _cast(leaf("xb", compute, "box"), "T", "box")))
    return out


# ----------------------------------------------------------------------------- pooling


def _window(rng: random.Random, name: str, target: str) -> tuple[_Kernel, dict]:
    k = _Kernel(rng, name)
    t = rng.choice(("f32", "f16") + (("bf16",) if target != "ascend310p" else ()))
    k.dtype_vars = {"T": t}
    rank = rng.choice((1, 2, 2, 3))
    op = rng.choice(("max_pool", "avg_pool"))
    kern = rng.randint(1, 4 if rank < 3 else 3)
    stride = rng.randint(1, 3)
    pad = rng.randint(0, kern // 2)
    dil = rng.randint(1, 2) if op == "max_pool" and rng.random() < 0.3 else 1
    spatial_in = ["L"] if rank == 1 else ["H", "W"] if rank == 2 else ["Z", "H", "W"]
    spatial_out = [f"O{s}" for s in spatial_in]
    sizes = {"N": rng.randint(1, 3), "C": rng.randint(1, 5)}
    hi = {1: 300, 2: 40, 3: 12}[rank]
    for s_in, s_out in zip(spatial_in, spatial_out, strict=True):
        n = rng.randint(max(1, dil * (kern - 1) + 1 - 2 * pad), hi)
        sizes[s_in] = n
        sizes[s_out] = (n + 2 * pad - dil * (kern - 1) - 1) // stride + 1
    # wide planes (910B, pooling on the vector unit): output rows longer than one Gather chunk (2048), 1-D planes
    # in bands, 3-D tiles that are bands of dim-1 rows of one output slice; a side generator keeps the main stream
    # seeded from the main stream's state without drawing from it; a string is hashed per process
    # (PYTHONHASHSEED), so the seed is the state's integers themselves: `--only` reproduces a finding
    wide = random.Random(sum(rng.getstate()[1]) * 0x9E3779B1 + 0x57494445)
    if target != "ascend310p" and wide.random() < 0.25:
        sizes["N"], sizes["C"] = 1, wide.randint(1, 2)
        span = dil * (kern - 1) + 1
        far = {1: {"L": (20000, 45000)}, 2: {"H": (span, 6), "W": (2100, 7000)},
               3: {"Z": (span, 8), "H": (20, 30), "W": (900, 2500)}}[rank]
        if rank == 3 and wide.random() < 0.5:  # deep planes of 64-wide slices: bands of output slices, or (dilation)
            far = {"Z": (span + 8, 40), "H": (48, 64), "W": (56, 64)}  # one output slice with its depth taps alone
        for s_in, (lo, top) in far.items():
            sizes[s_in] = wide.randint(max(lo, span - 2 * pad, 1), max(top, span))
            sizes[f"O{s_in}"] = (sizes[s_in] + 2 * pad - span) // stride + 1
    x = k.tensor("x", "T", ", ".join(["N", "C", *spatial_in]))
    y = k.tensor("y", "T", ", ".join(["N", "C", *spatial_out]))
    as_param = rng.random() < 0.4
    if as_param:
        k.params.append(f"ks: i32 = {kern}")
    kw = f"kernel={'ks' if as_param else kern}, stride={stride}, padding={pad}" + (f", dilation={dil}" if dil > 1 else "")
    body = (Stmt(f"store({y}[p], {op}(load({x}[p]), {kw}))"),)
    # resampling instead (DataCopyPad targets; volumes less often, pooling keeps most 3-D draws): drawn from a side
    # generator so the main stream, and with it every other program of a seed, is unchanged
    side = random.Random(hash(rng.getstate()[1]))  # the ints: hash(None) varies by process
    if target != "ascend310p" and side.random() < (0.6 if rank < 3 else 0.4):
        body = _resize_body(side, k, x, y, t, spatial_in, spatial_out, sizes, as_param)
    k.body.append(Loop("for blk in split(N * C, cores=AIV):", "for p in tile(blk, size=auto, buffers=2):", body))
    return k, sizes


def _resize_body(side: random.Random, k: _Kernel, x: str, y: str, t: str, spatial_in: list[str],
                 spatial_out: list[str], sizes: dict, as_param: bool) -> tuple[Stmt, ...]:
    """store(y[p], resize_*(load(x[p]))): output sizes up or down (1 included), an input row long enough for bands
    (volumes: small ones, whole per tile, or up to 12 x 180 x 300 outputs, bands of rows of one output depth slice)."""
    if as_param:
        k.params.pop()
    calls = ["resize_nearest({0})", "resize_nearest_exact({0})"]
    if t != "bf16":
        calls += ["resize_linear({0})", "resize_linear({0}, align_corners=True)"]
    if t == "f32" and len(spatial_in) == 2:  # antialiased (separable filter tables, lowering/emit/antialias.py)
        calls += ["resize_linear({0}, antialias=True)", "resize_linear({0}, align_corners=True, antialias=True)"]
    # no resize_cubic: its f32 weights and PyTorch's round apart by up to 8e-7 (docs/language.md), which on this
    # generator's inputs of +-1000 exceeds the oracle's rounding slack (it models input and op rounding, not a
    # weight table's); tests/test_resize_index.py compares the weights with PyTorch's instead
    for s_in, s_out in zip(spatial_in, spatial_out, strict=True):
        hi = {1: 3000, 2: 200, 3: 30}[len(spatial_in)]
        sizes[s_in] = side.randint(1, hi) if side.random() < 0.8 else side.randint(1, 9)
        sizes[s_out] = side.choice((2 * sizes[s_in], side.randint(1, hi), side.randint(1, 9), sizes[s_in]))
    if len(spatial_in) == 3 and side.random() < 0.4:  # volumes larger than UB: bands of one output depth slice
        for s_in, s_out, (lo, top) in zip(spatial_in, spatial_out, ((2, 6), (40, 90), (40, 150)), strict=True):
            sizes[s_in] = side.randint(lo, top)
            sizes[s_out] = side.choice((2 * sizes[s_in], side.randint(lo, 2 * top), sizes[s_in]))
    if t == "f32" and len(spatial_in) == 2 and side.random() < 0.3:  # grid_sample at a grid tensor's positions
        grid = k.tensor("grid", "T", ", ".join(["N", *spatial_out, "2"]))
        mode, pad = side.choice(("bilinear", "nearest")), side.choice(("zeros", "border"))
        call = f'grid_sample({{0}}, {grid}, mode="{mode}", padding_mode="{pad}", align_corners={side.random() < 0.5})'
        return (Stmt(f"store({y}[p], {call.format(f'load({x}[p])')})"),)
    return (Stmt(f"store({y}[p], {side.choice(calls).format(f'load({x}[p])')})"),)


# ----------------------------------------------------------------------------- cube


def _cube(rng: random.Random, name: str, target: str) -> tuple[_Kernel, dict]:
    k = _Kernel(rng, name)
    t = rng.choice(("f16", "bf16"))
    k.dtype_vars = {"T": t}
    batch = rng.random() < 0.25
    ta, tb = rng.random() < 0.2, rng.random() < 0.2
    whole_rows = rng.random() < 0.25
    sizes = {"M": rng.randint(1, 200), "N": rng.randint(1, 300 if not whole_rows else 200), "K": rng.randint(1, 300)}
    if rng.random() < 0.3:  # few output blocks and a long K: the host tiling splits K over the cube cores (split-K)
        sizes = {"M": rng.randint(1, 64), "N": rng.randint(1, 96), "K": rng.randint(1024, 4096)}
    lead = "Bt, " if batch else ""
    if batch:
        sizes["Bt"] = rng.randint(1, 3)
    a = k.tensor("a", "T", lead + ("K, M" if ta else "M, K"))
    b = k.tensor("b", "T", (lead if rng.random() < 0.7 else "") + ("N, K" if tb else "K, N"))
    bias = k.tensor("bias", "f32", "N") if rng.random() < 0.3 else None
    res = k.tensor("r", "f32", lead + "M, N") if rng.random() < 0.3 else None
    out_f16 = rng.random() < 0.3
    c = k.tensor("c", "f16" if out_f16 else "f32", lead + "M, N")
    # an [N] row vector (load(v[:])), per-row values (load(s[blk]) of [Bt, M] / [M]) and, after a row reduction, a
    # per-row output: drawn from a side generator, so the programs without them stay those of the fixed-seed slices
    side = random.Random(hash(rng.getstate()[1]))
    row_vec = k.tensor("v", "f32", "N") if side.random() < 0.25 else None
    per_row = k.tensor("s", "f32", lead + "M") if side.random() < 0.2 else None
    row_out = k.tensor("o", "f32", lead + "M") if whole_rows and side.random() < 0.4 else None
    for _ in range(rng.randint(0, 1)):
        k.scalar_param()
    if rng.random() < 0.4:
        k.launch_scalars([], 1)
    opts = (f", bias={bias}" if bias else "") + (", transpose_a=True" if ta else "") + (", transpose_b=True" if tb else "")
    scope = Scope([leaf("acc", "f32", "rows")], k.scope_scalars([]))
    body: list[Stmt] = []
    if res is not None:
        body.append(Stmt(f"rt = load({res}[blk])", None, "rt"))
        scope.tiles.append(leaf("rt", "f32", "rows"))
    for tensor, var, lay, index in ((row_vec, "rv", "row", ":"), (per_row, "sv", "col", "blk")):
        if tensor is not None:
            body.append(Stmt(f"{var} = load({tensor}[{index}])", None, var))
            scope.tiles.append(leaf(var, "f32", lay))
    ex = Exprs(rng, scope, rows=whole_rows)
    if rng.random() < 0.15 and not whole_rows:
        e = leaf("acc", "f32", "rows")
    else:
        e = ex.tile("f32", "rows", rng.randint(0, 3))
        if whole_rows:
            red = Node(f"{rng.choice(('max', 'sum', 'mean', 'min'))}({{0}}, axis=1)", (leaf("acc", "f32", "rows"),),
                       "f32", "col")
            e = Node("({0} - {1})", (e, red), "f32", "rows")
    if "acc" not in e.render():  # the vector block must read the accumulator (KERNEL-STRUCTURE)
        e = Node("({0} + {1})", (e, leaf("acc", "f32", "rows")), "f32", "rows")
    for var, lay, tensor in (("rv", "row", row_vec), ("sv", "col", per_row)):
        if tensor is not None and var not in e.render():  # every loaded row vector / per-row value is read
            e = Node("({0} * {1})", (e, leaf(var, "f32", lay)), "f32", "rows")
    body.append(Stmt(f"store({c}[blk], {{0}})", _cast(e, "f16", "rows") if out_f16 else e))
    if row_out is not None:
        body.append(Stmt(f"store({row_out}[blk], {{0}})", ex.tile("f32", "col", side.randint(0, 2))))
    header = f"for blk in split({lead}M, N, cores=AIC):"
    loop = Loop(header, "with vector:", tuple(body), cube_prefix=("with cube:", f"    acc = matmul({a}[blk], {b}[blk]{opts})"))
    k.body.append(loop)
    return k, sizes


def _chain(rng: random.Random, name: str, target: str) -> tuple[_Kernel, dict]:
    """Two cube stages joined by a workspace tensor (lowering/passes/plan_stages.py): h = epilogue(A @ B) in T, then
    y = epilogue(h @ C); the second stage waits in SyncAll for every core's share of h."""
    k = _Kernel(rng, name)
    t = rng.choice(("f16", "bf16"))
    k.dtype_vars = {"T": t}
    batch = rng.random() < 0.3
    whole_rows = rng.random() < 0.3
    sizes = {"M": rng.randint(1, 160), "N": rng.randint(1, 200), "K": rng.randint(1, 200), "L": rng.randint(1, 200)}
    lead = "Bt, " if batch else ""
    if batch:
        sizes["Bt"] = rng.randint(1, 3)
    a = k.tensor("a", "T", lead + "M, K")
    b = k.tensor("b", "T", lead + "K, N")
    tc = rng.random() < 0.3
    c = k.tensor("c", "T", lead + ("L, N" if tc else "N, L"))
    y = k.tensor("y", "f32", lead + "M, L")
    for _ in range(rng.randint(0, 1)):
        k.scalar_param()
    h = k.fresh("h")
    k.body.append(Stmt(f"{h} = workspace(T, {lead}M, N)", None, h))
    scope = Scope([leaf("acc", "f32", "rows")], k.scope_scalars([]))
    e = Exprs(rng, scope, rows=whole_rows).tile("f32", "rows", rng.randint(0, 2))
    if whole_rows:  # a row softmax, as attention's first stage
        z = Node("({0} - {1})", (e, Node("max({0}, axis=1)", (e,), "f32", "col")), "f32", "rows")
        ez = Node("exp({0})", (z,), "f32", "rows")
        e = Node("({0} / {1})", (ez, Node("sum({0}, axis=1)", (ez,), "f32", "col")), "f32", "rows")
    if "acc" not in e.render():
        e = Node("({0} + {1})", (e, leaf("acc", "f32", "rows")), "f32", "rows")
    k.body.append(Loop(f"for blk in split({lead}M, N, cores=AIC):", "with vector:",
                       (Stmt(f"store({h}[blk], {{0}})", _cast(e, "T", "rows")),),
                       cube_prefix=("with cube:", f"    acc = matmul({a}[blk], {b}[blk])")))
    scope2 = Scope([leaf("acc2", "f32", "rows")], k.scope_scalars([]))
    e2 = Exprs(rng, scope2).tile("f32", "rows", rng.randint(0, 2))
    if "acc2" not in e2.render():
        e2 = Node("({0} + {1})", (e2, leaf("acc2", "f32", "rows")), "f32", "rows")
    opts = ", transpose_b=True" if tc else ""
    k.body.append(Loop(f"for blk in split({lead}M, L, cores=AIC):", "with vector:",
                       (Stmt(f"store({y}[blk], {{0}})", e2),),
                       cube_prefix=("with cube:", f"    acc2 = matmul({h}[blk], {c}[blk]{opts})")))
    return k, sizes


def _store_matmul_epilogue(rng: random.Random, k: _Kernel, a: str, b: str, h: str) -> None:
    """A cube split that stores h = epilogue(acc) with acc = a @ b (the first launch of _launches and _views)."""
    scope = Scope([leaf("acc", "f32", "rows")], k.scope_scalars([]))
    e = Exprs(rng, scope).tile("f32", "rows", rng.randint(0, 2))
    if "acc" not in e.render():
        e = Node("({0} + {1})", (e, leaf("acc", "f32", "rows")), "f32", "rows")
    k.body.append(Loop("for blk in split(M, N, cores=AIC):", "with vector:", (Stmt(f"store({h}[blk], {{0}})", e),),
                       cube_prefix=("with cube:", f"    acc = matmul({a}[blk], {b}[blk])")))


def _row_expr(rng: random.Random, k: _Kernel, reduce_chance: float) -> Node:
    """f(v) over whole rows v, minus a row reduction of v with probability `reduce_chance`; it reads v."""
    scope = Scope([leaf("v", "f32", "rows")], k.scope_scalars([]))
    e = Exprs(rng, scope, rows=True).tile("f32", "rows", rng.randint(0, 3))
    if rng.random() < reduce_chance:
        red = Node(f"{rng.choice(('max', 'sum', 'mean', 'min'))}({{0}}, axis=1)", (leaf("v", "f32", "rows"),), "f32",
                   "col")
        e = Node("({0} - {1})", (e, red), "f32", "rows")
    if "v" not in e.render():
        e = Node("({0} + {1})", (e, leaf("v", "f32", "rows")), "f32", "rows")
    return e


def _launches(rng: random.Random, name: str, target: str) -> tuple[_Kernel, dict]:
    """A kernel of two launches (lowering/passes/partition_launches.py): a cube split stores h = epilogue(A @ B)
    in a workspace tensor, then a vector row loop reads its rows (rows up to 1500: longer than a matmul epilogue
    reduces) and stores y = f(h), with a row reduction half the time."""
    k = _Kernel(rng, name)
    k.dtype_vars = {"T": rng.choice(("f16", "bf16"))}
    sizes = {"M": rng.randint(1, 120), "N": rng.randint(1, 1500), "K": rng.randint(1, 160)}
    a = k.tensor("a", "T", "M, K")
    b = k.tensor("b", "T", "K, N")
    y = k.tensor("y", "f32", "M, N")
    for _ in range(rng.randint(0, 1)):
        k.scalar_param()
    h = k.fresh("h")
    k.body.append(Stmt(f"{h} = workspace(f32, M, N)", None, h))
    _store_matmul_epilogue(rng, k, a, b, h)
    e2 = _row_expr(rng, k, reduce_chance=0.5)
    k.body.append(Loop("for blk in split(M, cores=AIV):", _tile_header(rng, "r", 1),
                       (Stmt(f"v = load({h}[r, :])", None, "v"), Stmt(f"store({y}[r, :], {{0}})", e2))))
    return k, sizes


def _views(rng: random.Random, name: str, target: str) -> tuple[_Kernel, dict]:
    """Three launches through views (ascend_dsl/views.py): a cube split stores h = epilogue(A @ B) as [M, N]; a
    vector row loop reads it through a view as M * G rows of N / G (G an i32 parameter; the view `[M, G, L]` or
    `[R, L]` with R = M * G) and stores f(rows) through a view of a second workspace z; a third launch reads z as
    [M, N] rows into y (a group norm's shape: rows per sample and group)."""
    k = _Kernel(rng, name)
    k.dtype_vars = {"T": rng.choice(("f16", "bf16"))}
    groups, length = rng.randint(1, 6), rng.choice([rng.randint(1, 64), rng.randint(1, 400)])
    sizes = {"M": rng.randint(1, 80), "N": groups * length, "K": rng.randint(1, 160)}
    a = k.tensor("a", "T", "M, K")
    b = k.tensor("b", "T", "K, N")
    y = k.tensor("y", "f32", "M, N")
    ng = k.fresh("ng")
    k.params.append(f"{ng}: i32 = {groups}")
    for _ in range(rng.randint(0, 1)):
        k.scalar_param()
    h, z, hv, zv = k.fresh("h"), k.fresh("z"), k.fresh("hv"), k.fresh("zv")
    k.body.append(Stmt(f"{h} = workspace(f32, M, N)", None, h))
    k.body.append(Stmt(f"{z} = workspace(f32, M, N)", None, z))
    g, ln, r = k.fresh("G"), k.fresh("L"), k.fresh("R")
    if rng.random() < 0.5:
        k.body.append(Stmt(f"{hv} = view({h}, M, {g}={ng}, {ln}=N / {ng})", None, hv))
        k.body.append(Stmt(f"{zv} = view({z}, M, {g}, {ln})", None, zv))
        extent = f"M * {g}"
    else:
        k.body.append(Stmt(f"{hv} = view({h}, {r}=M * {ng}, {ln}=N / {ng})", None, hv))
        k.body.append(Stmt(f"{zv} = view({z}, {r}, {ln})", None, zv))
        extent = r
    _store_matmul_epilogue(rng, k, a, b, h)
    e2 = _row_expr(rng, k, reduce_chance=0.6)
    k.body.append(Loop(f"for blk in split({extent}, cores=AIV):", _tile_header(rng, "r", 1),
                       (Stmt(f"v = load({hv}[r, :])", None, "v"), Stmt(f"store({zv}[r, :], {{0}})", e2))))
    scope3 = Scope([leaf("u", "f32", "rows")], k.scope_scalars([]))
    e3 = Exprs(rng, scope3, rows=True).tile("f32", "rows", rng.randint(0, 2))
    if "u" not in e3.render():
        e3 = Node("({0} + {1})", (e3, leaf("u", "f32", "rows")), "f32", "rows")
    k.body.append(Loop("for blk in split(M, cores=AIV):", _tile_header(rng, "r", 1),
                       (Stmt(f"u = load({z}[r, :])", None, "u"), Stmt(f"store({y}[r, :], {{0}})", e3))))
    return k, sizes


def _chunked(rng: random.Random, name: str, target: str) -> tuple[_Kernel, dict]:
    """Chunk-wise cube stages through views that define shape symbols (npu_harness/fuzz/chunked.py)."""
    k = _Kernel(rng, name)
    return k, chunked.build(rng, k)


def _flash(rng: random.Random, name: str, target: str) -> tuple[_Kernel, dict]:
    """The chained SDPA text that lowering/passes/plan_flash.py fuses into a FLASH kernel: [Bt] or [B, H] batches
    (grouped or shared key/value heads), odd lengths up to a few key blocks, each spelling of the softmax, a scale
    parameter or literal (either sign), an optional mask tensor (any comparison, fill and dtype) or a band from
    positions (causal, sliding window, |j - i| <= w; a literal or i32 window), f32 or T out."""
    k = _Kernel(rng, name)
    t = rng.choice(("f16", "bf16"))
    k.dtype_vars = {"T": t}
    sizes = {"M": rng.randint(1, 150), "N": rng.choice([rng.randint(1, 140), rng.randint(100, 700)]),
             "Dk": rng.randint(1, 128), "Dv": rng.randint(1, 144)}
    if rng.random() < 0.5:
        batch, kv, sizes["Bt"] = "Bt", "Bt", rng.randint(1, 3)
    else:
        hkv = rng.randint(1, 3)
        sizes.update(B=rng.randint(1, 2), Hkv=hkv, H=hkv * rng.randint(1, 3))
        batch, kv = "B * H", rng.choice(["B, H", "B, Hkv", "B, 1"] if hkv > 1 else ["B, H", "B, 1"])
        if kv == "B, Hkv" and sizes["H"] == hkv:
            kv = "B, H"
    lead = batch.replace(" *", ",") + ", "
    q = k.tensor("q", "T", lead + "M, Dk")
    kk = k.tensor("k", "T", kv + ", N, Dk")
    v = k.tensor("v", "T", kv + ", N, Dv")
    mask = None
    causal = rng.random() < 0.25  # the causal mask from positions (key blocks above the diagonal skipped)
    if not causal and rng.random() < 0.35:
        mlead = rng.choice(["", lead, "1, " * lead.count(",")])
        mask = k.tensor("mask", rng.choice(("f32", "f16")), mlead + "M, N")
    out_t = rng.random() < 0.3
    o = k.tensor("o", "T" if out_t else "f32", lead + "M, Dv")
    if rng.random() < 0.6:
        scale = k.scalar_param().render()
    else:
        scale = rng.choice(["0.125", "0.5", "1.0", "-0.3", "2.0"])
    if "Hkv" in sizes and "Hkv" not in kv:
        del sizes["Hkv"]
    p = k.fresh("p")
    k.body.append(Stmt(f"{p} = workspace(T, {lead}M, N)", None, p))
    scaled = rng.choice([f"s * {scale}", f"{scale} * s"])
    if causal:  # a band of key - query offsets: causal, a sliding window, |j - i| <= w, one-sided offsets
        fill = rng.choice(["-3.0e38", "-1.0e30", "-10000.0", "0.0"])  # -1e30 and below: blocks outside skipped
        w = str(rng.randint(1, 300))
        if rng.random() < 0.4:
            w = k.fresh("w")
            k.params.append(f"{w}: i32 = {rng.randint(1, 300)}")
        conds = rng.choice([["col_index() <= row_index()"], ["row_index() >= col_index()"],
                            ["col_index() <= row_index()", f"col_index() > row_index() - {w}"],
                            [f"abs(col_index() - row_index()) <= {w}"], [f"row_index() - col_index() < {w}"],
                            [f"col_index() - row_index() <= {rng.randint(-3, 40)}"]])
        x = scaled
        for cond in reversed(conds):
            x = f"select({cond}, {x}, {fill})"
        lines = [f"x = {x}", "e = exp(x - max(x, axis=1))"]
    elif mask is not None:
        cmp = rng.choice([">", ">=", "<", "<=", "!="])
        fill = rng.choice(["-3.0e38", "-1.0e30", "-10000.0", "-5.0", "0.0"])
        x = f"select(load({mask}[blk]) {cmp} {rng.choice(['0.0', '0.5', '-0.25'])}, {scaled}, {fill})"
        lines = [f"x = {x}", "e = exp(x - max(x, axis=1))"]
    else:
        lines = rng.choice([[f"e = exp((s - max(s, axis=1)) * {scale})"], [f"e = exp({scaled} - max({scaled}, axis=1))"],
                            [f"x = {scaled}", "e = exp(x - max(x, axis=1))"]])
    recent.flash_stages(k, p, batch, (q, kk, v, o), out_t, lines)
    return k, sizes



# ----------------------------------------------------------------------------- convolution


def _conv(rng: random.Random, name: str, target: str, per_dim: bool = False) -> tuple[_Kernel, dict]:
    """conv1d / conv2d / conv3d on the cube (CONV kernels, ascend_dsl/parser_conv.py): any stride, padding and
    dilation (the gather layouts: whole rows, one pixel per fractal column, and flat planes of a pointwise kernel), groups (a literal, or
    groups=C: depthwise, with a channel multiplier), an f32 bias, odd channel counts and row lengths, relu and
    an f16/bf16 result through Fixpipe."""
    k = _Kernel(rng, name)
    t = rng.choice(("f16", "bf16"))
    k.dtype_vars = {"T": t}
    rank = rng.choices((1, 2, 3), weights=(3, 5, 2))[0]
    axes = ("D", "H", "W")[3 - rank:]
    dil, stride, pad = rng.choice((1, 1, 2)), rng.choice((1, 1, 2, 3)), rng.choice((0, 0, 1, 2))
    # pointwise (1x1 taps, stride 1, no padding): the flat path, with planes over 4095 pixels now and then (the
    # channel blocks are copied one call each there, a 16-bit source stride)
    pointwise = rng.random() < 0.2
    stride, pad = (1, 0) if pointwise else (stride, pad)
    hi = {1: {"W": 300}, 2: {"H": 80 if pointwise else 40, "W": 70}, 3: {"D": 9, "H": 12, "W": 20}}[rank]
    sizes: dict[str, int] = {"N": rng.randint(1, 2)}
    per = {}  # per_dim (stride=(2, 1), ...): each spatial dim's own stride, padding and dilation
    for a in axes:
        if per_dim:
            dil, stride, pad = rng.choice((1, 1, 2)), rng.choice((1, 1, 2, 3)), rng.choice((0, 0, 1, 2))
            stride, pad = (1, 0) if pointwise else (stride, pad)
        per[a] = (stride, pad, dil)
        kk = rng.randint(1, 5 if rank < 3 else 3) if rng.random() < 0.9 else rng.choice((7, 11))  # deep windows
        kk = 1 if pointwise else (min(kk, 7) if rank == 3 else kk)
        least = max(1, dil * (kk - 1) + 1 - 2 * pad)
        size = rng.randint(least, max(least, hi[a]))
        sizes.update({a: size, "K" + a: kk, "O" + a: (size + 2 * pad - dil * (kk - 1) - 1) // stride + 1})
    form = rng.choices(("dense", "groups", "depthwise"), weights=(6, 2, 2))[0]
    if form == "groups":
        g = rng.randint(2, 4)
        sizes["CG"] = rng.randint(1, 10)
        sizes["C"], sizes["K"] = sizes["CG"] * g, rng.randint(1, 40) * g
        groups, wch = f", groups={g}", "CG"
    elif form == "depthwise":
        sizes["C"] = rng.randint(1, 24)
        sizes["K"] = sizes["C"] * rng.choice((1, 1, 2))
        groups, wch = ", groups=C", "1"
    else:
        sizes["C"], sizes["K"] = rng.randint(1, 40 if rank < 3 else 8), rng.randint(1, 150 if rank < 3 else 40)
        groups, wch = "", "C"
    x = k.tensor("x", "T", ", ".join(("N", "C", *axes)))
    wt = k.tensor("w", "T", ", ".join(("K", wch, *("K" + a for a in axes))))
    bias = k.tensor("b", "f32", "K") if rng.random() < 0.4 else None
    out = rng.choice(("f32", "T"))
    y = k.tensor("y", out, ", ".join(("N", "K", *("O" + a for a in axes))))
    value = "relu(acc)" if rng.random() < 0.4 else "acc"
    value = value if out == "f32" else f"cast({value}, T)"
    opts = "".join(f", {key}={_per_dim([per[a][i] for a in axes])}" for i, (key, default) in enumerate(
        (("stride", 1), ("padding", 0), ("dilation", 1))) if any(per[a][i] != default for a in axes))
    opts += groups + (f", bias={bias}" if bias else "")
    loop = Loop(f"for blk in split(N, K, {', '.join('O' + a for a in axes)}, cores=AIC):", "with vector:",
                (Stmt(f"store({y}[blk], {value})", None),),
                cube_prefix=("with cube:", f"    acc = conv{rank}d({x}[blk], {wt}[blk]{opts})"))
    k.body.append(loop)
    return k, sizes


def _per_dim(values: list[int]) -> str:
    """A convolution option: one value for every spatial dim, or a tuple of one per dim."""
    return str(values[0]) if len(set(values)) == 1 else f"({', '.join(map(str, values))})"


def _conv5hd(rng: random.Random, name: str, target: str) -> tuple[_Kernel, dict]:
    """The forms of conv2d that take the NC1HWC0 route (lowering/passes/route_conv5hd.py: a conversion launch, then
    the conv launch): stride 1, groups 1, padding or a literal window over 1 x 1; dilation, a bias, odd channel
    counts (blocks of 16 not full), channel tiles (K > 128), rows over 256 pixels (column tiles), relu and an
    f16/bf16 result."""
    k = _Kernel(rng, name)
    k.dtype_vars = {"T": rng.choice(("f16", "bf16"))}
    dil, pad = rng.choice((1, 1, 2)), rng.choice((0, 1, 1, 2, 3))
    literal = pad == 0 or rng.random() < 0.4
    sizes: dict[str, int] = {"N": rng.randint(1, 2), "C": rng.randint(1, 40), "K": rng.randint(1, 150)}
    window = []
    for a, hi in (("H", 12), ("W", 300 if rng.random() < 0.3 else 40)):
        kk = rng.randint(2 if literal and pad == 0 else 1, 5)
        least = max(1, dil * (kk - 1) + 1 - 2 * pad)
        size = rng.randint(least, max(least, hi))
        sizes.update({a: size, "O" + a: size + 2 * pad - dil * (kk - 1)})
        if literal:
            window.append(str(kk))
        else:
            sizes["K" + a] = kk
            window.append("K" + a)
    x = k.tensor("x", "T", "N, C, H, W")
    wt = k.tensor("w", "T", ", ".join(("K", "C", *window)))
    bias = k.tensor("b", "f32", "K") if rng.random() < 0.4 else None
    out = rng.choice(("f32", "T"))
    y = k.tensor("y", out, "N, K, OH, OW")
    value = "relu(acc)" if rng.random() < 0.4 else "acc"
    value = value if out == "f32" else f"cast({value}, T)"
    opts = (f", padding={pad}" if pad else "") + (f", dilation={dil}" if dil != 1 else "") + (f", bias={bias}" if bias else "")
    loop = Loop("for blk in split(N, K, OH, OW, cores=AIC):", "with vector:", (Stmt(f"store({y}[blk], {value})", None),),
                cube_prefix=("with cube:", f"    acc = conv2d({x}[blk], {wt}[blk]{opts})"))
    k.body.append(loop)
    return k, sizes


def _conv_transpose(rng: random.Random, name: str, target: str, per_dim: bool = False) -> tuple[_Kernel, dict]:
    """conv_transpose1d / 2d / 3d on the cube (CONV kernels, transposed): stride 1-3, padding, output_padding
    below the stride or dilation, dilation, groups (a literal, or groups=C with 1 or 2 outputs per channel),
    an f32 bias, odd sizes (a padding larger than the kernel's reach cuts outputs off), relu and an f16/bf16
    result; w is [C, K / groups, *kernel] as nn.ConvTranspose stores it."""
    k = _Kernel(rng, name)
    t = rng.choice(("f16", "bf16"))
    k.dtype_vars = {"T": t}
    rank = rng.choices((1, 2, 3), weights=(3, 5, 2))[0]
    axes = ("D", "H", "W")[3 - rank:]
    dil, stride, pad = rng.choice((1, 1, 2)), rng.choice((1, 2, 2, 3)), rng.choice((0, 0, 1, 2))
    out_pad = rng.randrange(max(stride, dil))
    # a literal kernel width with stride 1 and padding >= its reach: the dense gather layout (whole rows)
    lit_w = rng.randint(1, 3) if stride == 1 and rng.random() < 0.3 else None
    pad = max(pad, dil * (lit_w - 1)) if lit_w else pad
    hi = {1: {"W": 120}, 2: {"H": 16, "W": 30}, 3: {"D": 4, "H": 7, "W": 9}}[rank]
    sizes: dict[str, int] = {"N": rng.randint(1, 2)}
    per = {}  # per_dim: the dims before W draw their own stride, padding, output_padding and dilation
    w_opts = (stride, pad, out_pad, dil)
    for a in axes:
        stride, pad, out_pad, dil = w_opts
        if per_dim and a != "W":
            dil, stride, pad = rng.choice((1, 1, 2)), rng.choice((1, 2, 2, 3)), rng.choice((0, 0, 1, 2))
            out_pad = rng.randrange(max(stride, dil))
        per[a] = (stride, pad, out_pad, dil)
        kk = lit_w if a == "W" and lit_w else rng.randint(1, 5 if rank < 3 else 3)
        size = rng.randint(1, hi[a])
        while (size - 1) * stride - 2 * pad + dil * (kk - 1) + out_pad + 1 < 1:
            size += 1
        sizes.update({a: size, "K" + a: kk, "O" + a: (size - 1) * stride - 2 * pad + dil * (kk - 1) + out_pad + 1})
    if lit_w:
        del sizes["KW"]
    form = rng.choices(("dense", "groups", "depthwise"), weights=(6, 2, 2))[0]
    if form == "groups":
        g = rng.randint(2, 4)
        sizes["KG"] = rng.randint(1, 24)
        sizes["C"], sizes["K"] = rng.randint(1, 10) * g, sizes["KG"] * g
        groups, wch = f", groups={g}", "KG"
    elif form == "depthwise":
        mult = rng.choice((1, 1, 2))
        sizes["C"] = rng.randint(1, 24)
        sizes["K"] = sizes["C"] * mult
        groups, wch = ", groups=C", str(mult)
    else:
        sizes["C"], sizes["K"] = rng.randint(1, 40 if rank < 3 else 8), rng.randint(1, 100 if rank < 3 else 30)
        groups, wch = "", "K"
    x = k.tensor("x", "T", ", ".join(("N", "C", *axes)))
    wt = k.tensor("w", "T", ", ".join(("C", wch, *(str(lit_w) if a == "W" and lit_w else "K" + a for a in axes))))
    bias = k.tensor("b", "f32", "K") if rng.random() < 0.4 else None
    out = rng.choice(("f32", "T"))
    y = k.tensor("y", out, ", ".join(("N", "K", *("O" + a for a in axes))))
    value = "relu(acc)" if rng.random() < 0.4 else "acc"
    value = value if out == "f32" else f"cast({value}, T)"
    opts = "".join(f", {key}={_per_dim([per[a][i] for a in axes])}" for i, (key, default) in enumerate(
        (("stride", 1), ("padding", 0), ("output_padding", 0), ("dilation", 1))) if any(per[a][i] != default for a in axes))
    opts += groups + (f", bias={bias}" if bias else "")
    loop = Loop(f"for blk in split(N, K, {', '.join('O' + a for a in axes)}, cores=AIC):", "with vector:",
                (Stmt(f"store({y}[blk], {value})", None),),
                cube_prefix=("with cube:", f"    acc = conv_transpose{rank}d({x}[blk], {wt}[blk]{opts})"))
    k.body.append(loop)
    return k, sizes


# ----------------------------------------------------------------------------- autosplit (ascend_dsl/autosplit.py)


def _conv_dims(rng: random.Random, name: str, target: str) -> tuple[_Kernel, dict]:
    """A convolution or transposed convolution with options per spatial dim (stride=(2, 1), ...)."""
    return (_conv if rng.random() < 0.7 else _conv_transpose)(rng, name, target, per_dim=True)


def _autosplit(rng: random.Random, name: str, target: str) -> tuple[_Kernel, dict]:
    """One cube split whose vector block its cube kernel cannot run, cut by the compiler into launches: a
    convolution (per-dim options half the time) followed by element-wise work with per-channel and output-shaped
    tensors (rows of planes, a mean over every spatial dim subtracted or stored per plane), a reduction or softmax
    over the channels (boxes), or a max/avg pool (planes) with element-wise work before and after it (rows
    launches of their own); or a matmul whose epilogue scans along the row (cumsum, whole rows of any length)."""
    if rng.random() < 0.25:
        return _autosplit_matmul(rng, name)
    k, sizes = _conv(rng, name, target, per_dim=rng.random() < 0.5)
    loop = k.body.pop()
    y_old = loop.body[0].fmt[len("store("):].split("[")[0]
    k.params = [p for p in k.params if not p.startswith(y_old + ":")]
    outs = loop.header[loop.header.index("K, ") + 3:loop.header.index(", cores")].split(", ")
    spatial = ", ".join(str(i + 2) for i in range(len(outs)))
    acc_rows, acc_box = leaf("acc", "f32", "rows"), leaf("acc", "f32", "box")
    form = rng.choice(("rows", "rows", "planes", "box", "softmax", "pool"))
    if form == "rows":
        y = k.tensor("y", "f32", "N, K, " + ", ".join(outs))
        tiles = [acc_rows]
        if rng.random() < 0.5:
            tiles.append(leaf(f"load({k.tensor('r', 'f32', 'N, K, ' + ', '.join(outs))}[blk])", "f32", "rows"))
        e = Exprs(rng, Scope(tiles, k.scope_scalars([]))).tile("f32", "rows", rng.randint(0, 2))
        if rng.random() < 0.6:  # a per-channel scale and shift (batch norm in eval mode)
            g, h = k.tensor("g", "f32", "K"), k.tensor("h", "f32", "K")
            e = Node(f"({{0}} * load({g}[blk]) + load({h}[blk]))", (e,), "f32", "rows")
        if rng.random() < 0.4:  # instance norm's centring: a mean over every spatial dim
            e = Node(f"({{0}} - mean(acc, axis=({spatial})))", (e,), "f32", "rows")
        if "acc" not in e.render():
            e = Node("({0} + acc)", (e,), "f32", "rows")
        if e.render() in ("acc", "relu(acc)"):  # a store the conv kernel runs itself: make it one it cannot
            e = Node("({0} * 0.5 + 0.25)", (e,), "f32", "rows")
        body = (Stmt(f"store({y}[blk], {{0}})", e),)
    elif form == "planes":
        y = k.tensor("y", "f32", "N, K")
        e = Exprs(rng, Scope([acc_rows], k.scope_scalars([]))).tile("f32", "rows", rng.randint(0, 2))
        red = rng.choice(("sum", "mean", "max", "min"))
        body = (Stmt(f"store({y}[blk], {red}({{0}}, axis=({spatial})))", e if "acc" in e.render() else acc_rows),)
        z = k.tensor("z", "f32", "N, K, " + ", ".join(outs))  # names the output's dims (the workspace's shape)
        if rng.random() < 0.5:  # stored beside the per-plane values; else only bound
            body += (Stmt(f"store({z}[blk], {{0}})", Exprs(rng, Scope([acc_rows], k.scope_scalars([]))).tile(
                "f32", "rows", rng.randint(0, 1))),)
    elif form == "box":
        y = k.tensor("y", "f32", "N, " + ", ".join(outs))
        e = Exprs(rng, Scope([acc_box], k.scope_scalars([]))).tile("f32", "box", rng.randint(0, 2))
        red = rng.choice(("sum", "mean", "max", "min"))
        body = (Stmt(f"store({y}[blk], {red}({{0}}, axis=1))", e if "acc" in e.render() else acc_box),)
    elif form == "softmax":
        y = k.tensor("y", "f32", "N, K, " + ", ".join(outs))
        body = (Stmt("e = exp(acc - max(acc, axis=1))", None, "e"), Stmt(f"store({y}[blk], e / sum(e, axis=1))"))
    else:
        kern = rng.randint(1, min(3, *(sizes[o] for o in outs)))
        stride = rng.randint(1, 3)
        for o in outs:
            sizes["P" + o] = (sizes[o] - kern) // stride + 1
        y = k.tensor("y", "f32", "N, K, " + ", ".join("P" + o for o in outs))
        k.tensor("z", "f32", "N, K, " + ", ".join(outs))  # only bound: names the conv output's dims
        src = leaf(rng.choice(("acc", "relu(acc)")), "f32", "rows")
        if rng.random() < 0.5:  # work before the pool: a rows launch of its own
            src = Exprs(rng, Scope([acc_rows], k.scope_scalars([]))).tile("f32", "rows", rng.randint(1, 2))
        pool = f"{rng.choice(('max_pool', 'avg_pool'))}({{0}}, kernel={kern}, stride={stride})"
        if rng.random() < 0.5:  # work after it: rows of the pooled planes
            post = Exprs(rng, Scope([leaf("m", "f32", "rows")], k.scope_scalars([]))).tile("f32", "rows", 2)
            post = post if "m" in post.render() else Node("({0} + m)", (post,), "f32", "rows")
            body = (Stmt(f"m = {pool}", src, "m"), Stmt(f"store({y}[blk], {{0}})", post))
        else:
            body = (Stmt(f"store({y}[blk], {pool})", src),)
    k.body.append(Loop(loop.header, loop.inner, body, loop.cube_prefix))
    return k, sizes


def _autosplit_matmul(rng: random.Random, name: str) -> tuple[_Kernel, dict]:
    k = _Kernel(rng, name)
    k.dtype_vars = {"T": rng.choice(("f16", "bf16"))}
    sizes = {"M": rng.randint(1, 120), "N": rng.randint(1, 1500), "K": rng.randint(1, 160)}
    a, b = k.tensor("a", "T", "M, K"), k.tensor("b", "T", "K, N")
    y = k.tensor("y", "f32", "M, N")
    e = Exprs(rng, Scope([leaf("acc", "f32", "rows")], k.scope_scalars([]))).tile("f32", "rows", rng.randint(0, 2))
    if "acc" not in e.render():
        e = Node("({0} + acc)", (e,), "f32", "rows")
    opts = rng.choice(("", "", ", reverse=True", ", exclusive=True"))
    k.body.append(Loop("for blk in split(M, N, cores=AIC):", "with vector:",
                       (Stmt(f"store({y}[blk], cumsum({{0}} * 0.125, axis=1{opts}))", e),),
                       cube_prefix=("with cube:", f"    acc = matmul({a}[blk], {b}[blk])")))
    return k, sizes


# ----------------------------------------------------------------------------- row fallback (ascend_dsl/row_fallback.py)


def _row_fallback(rng: random.Random, name: str, target: str) -> tuple[_Kernel, dict]:
    """A matmul (batched a third of the time, nn.Linear-style a third) whose epilogue reduces whole rows:
    softmax, log_softmax, logsumexp, or sum/mean/max/min of an element-wise expression, stored per row or as rows.
    N is above the fused block's limit (~580-1024) two times in three, so the launches form runs; else fused."""
    k = _Kernel(rng, name)
    k.dtype_vars = {"T": rng.choice(("f16", "bf16"))}
    n = rng.randint(1100, 2600) if rng.random() < 2 / 3 else rng.randint(1, 500)
    sizes = {"M": rng.randint(1, 40), "N": n, "K": rng.randint(1, 96)}
    batch = rng.random() < 1 / 3
    lead = "Bt, " if batch else ""
    if batch:
        sizes["Bt"] = rng.randint(1, 3)
    a = k.tensor("a", "T", lead + "M, K")
    if not batch and rng.random() < 0.5:
        b, bias = k.tensor("w", "T", "N, K"), k.tensor("bias", "f32", "N")
        cube = f"    acc = matmul({a}[blk], {b}[blk], bias={bias}, transpose_b=True)"
    else:
        b = k.tensor("b", "T", lead + "K, N")
        cube = f"    acc = matmul({a}[blk], {b}[blk])"
    form = rng.choice(("softmax", "log_softmax", "logsumexp", "reduce", "reduce"))
    if form == "softmax":
        y = k.tensor("y", "f32", lead + "M, N")
        body = (Stmt("e = exp(acc - max(acc, axis=1))", None, "e"), Stmt(f"store({y}[blk], e / sum(e, axis=1))"))
    elif form == "log_softmax":
        y = k.tensor("y", "f32", lead + "M, N")
        body = (Stmt("s = acc - max(acc, axis=1)", None, "s"),
                Stmt(f"store({y}[blk], s - log(sum(exp(s), axis=1)))"))
    elif form == "logsumexp":
        y = k.tensor("y", "f32", lead + "M")
        body = (Stmt("m = max(acc, axis=1)", None, "m"), Stmt(f"store({y}[blk], m + log(sum(exp(acc - m), axis=1)))"))
    else:
        y = k.tensor("y", "f32", lead + "M")
        e = Exprs(rng, Scope([leaf("acc", "f32", "rows")], k.scope_scalars([]))).tile("f32", "rows", rng.randint(0, 2))
        if "acc" not in e.render():
            e = Node("({0} + acc)", (e,), "f32", "rows")
        red = rng.choice(("sum", "mean", "max", "min"))
        scale = " * 0.125" if red == "sum" else ""
        body = (Stmt(f"store({y}[blk], {red}({{0}}{scale}, axis=1))", e),)
    split = "split(Bt, M, N, cores=AIC)" if batch else "split(M, N, cores=AIC)"
    k.body.append(Loop(f"for blk in {split}:", "with vector:", body, cube_prefix=("with cube:", cube)))
    return k, sizes


# ----------------------------------------------------------------------------- entry


def generate(rng: random.Random, index: int, seed: int) -> Program:
    kind = _pick(rng, KINDS)
    target = _pick(rng, TARGETS)
    if kind in ("long_rows", "slots", "box", "cube", "conv", "conv_t", "conv5hd") and target == "ascend310p":
        target = "ascend910b1"  # these need DataCopyPad / a separate cube unit
    name = f"k{index}"
    if kind == "slots":
        k, sizes = _slots(rng, name, target)
    elif kind == "box":
        k, sizes = _box(rng, name, target)
    elif kind == "window":
        k, sizes = _window(rng, name, target)
    elif kind == "cube":
        k, sizes = _cube(rng, name, target)
    elif kind == "conv":
        k, sizes = _conv(rng, name, target)
    elif kind == "conv_t":
        k, sizes = _conv_transpose(rng, name, target)
    elif kind == "conv5hd":
        k, sizes = _conv5hd(rng, name, target)
    else:
        k, sizes = _vector_kernel(rng, name, "flat" if kind == "scalar_stress" else kind, target,
                                  stress=kind == "scalar_stress")
    cores = CORES[target] if rng.random() < 0.7 else rng.randint(1, CORES[target])
    if kind == "long_rows" and sizes.get("D", 0) > 262_144:  # rows >= cores (emit/row_groups.py: long rows)
        cores = rng.randint(1, sizes["B"])
    return k.program(kind, sizes, seed, target, cores)


def generate_stages(rng: random.Random, index: int, seed: int) -> Program:
    """A multi-stage program (workspace tensors between split loops), named `s<index>`."""
    kind = _pick(rng, STAGE_KINDS)
    target = "ascend910b4" if rng.random() < 0.2 else "ascend910b1"  # cube stages need a separate cube unit
    k, sizes = {"flash": _flash, "launches": _launches, "views": _views, "autosplit": _autosplit,
                "conv_dims": _conv_dims, "chunked": _chunked, "row_fallback": _row_fallback}.get(kind, _chain)(rng, f"s{index}", target)
    cores = CORES[target] if rng.random() < 0.7 else rng.randint(1, CORES[target])
    return k.program(kind, sizes, seed, target, cores)


def generate_recent(rng: random.Random, index: int, seed: int) -> Program:
    """A focused program of the lowering forms of sessions 30-32 (npu_harness/fuzz/recent.py), named `r<index>`."""
    kind = _pick(rng, recent.RECENT_KINDS)
    target = "ascend910b4" if rng.random() < 0.2 else "ascend910b1"
    cores = CORES[target]
    if kind == "norm1pass":  # rows >= cores over 1 MB each: few cores keep the emulator's run short
        cores = rng.randint(1, 4)
    elif kind in ("row_values", "gather_narrow", "scatter_dim0", "flat_sums") and rng.random() < 0.3:
        cores = rng.randint(1, cores)
    k = _Kernel(rng, f"r{index}")
    sizes = recent.BUILDERS[kind](rng, k, cores)
    return k.program(kind, sizes, seed, target, cores)
