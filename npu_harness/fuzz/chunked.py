"""Random chunk-wise kernels (causal linear attention's shape, examples/attention/causal_linear_attention), for the
fuzzer's stage stream.

Rows `[Bt, S, D]` are mapped into workspace tensors by a vector launch, then read in chunks of `ch` rows through
views that define shape symbols (`xc = view(xw, Bt, NC=S / ch, C=ch, E=D)`); workspace tensors are declared with
those symbols (`[C, C]`, `[Bt, NC, C, C]`, ...). Position masks are stored as floats chosen by an integer
comparison (`select(col_index() <= row_index() + d, 1.0, 0.0)`). The cube stages batch over `Bt * NC` (two batch
dims), mask a product with a mask tensor shared by every batch, store and load a per-row tensor `[Bt, NC, C]`, and a
later stage reads a flat view of a tensor an earlier stage wrote (`view(h, Bt, NC, F=E * E)`), which cuts the cube
run into launches (ascend_dsl/launches.py); a last vector launch copies the result into the output.
"""

from __future__ import annotations

import random

from .exprs import Exprs, Scope, leaf
from .program import Loop, Node, Stmt

_CMP = ("<=", "<", ">=", ">", "==", "!=")


def _phi(rng: random.Random, v: str) -> str:
    """A feature map of an f32 row value."""
    return rng.choice([f"select({v} > 0.0, {v} + 1.0, exp({v}))", f"{v} * {v} + 0.5", f"abs({v})", v])


def _mask_loop(rng: random.Random, extent: str, out: str) -> Loop:
    cmp, d = rng.choice(_CMP), rng.randint(-2, 2)
    rhs = "row_index()" + (f" + {d}" if d > 0 else f" - {-d}" if d < 0 else "")
    one, zero = rng.choice([("1.0", "0.0"), ("1.0", "0.0"), ("0.5", "2.0"), ("-1.5", "0.25")])
    return Loop(f"for blk in split({extent}, cores=AIV):", "for r in tile(blk, size=auto, buffers=2):",
                (Stmt(f"store({out}[r, :], cast(select(col_index() {cmp} {rhs}, {one}, {zero}), T))"),))


def build(rng: random.Random, k) -> dict:
    """Fill `k` (gen._Kernel) with the chunk-wise program; returns the sizes."""
    k.dtype_vars = {"T": rng.choice(("f16", "bf16"))}
    nc, c, d = rng.randint(1, 5), rng.randint(1, 40), rng.randint(1, 48)
    sizes = {"Bt": rng.randint(1, 3), "S": nc * c, "D": d}
    x = k.tensor("x", "T", "Bt, S, D")
    w = k.tensor("w", "T", "Bt, S, D")
    y = k.tensor("y", "f32", "Bt, S, D")
    ch = k.fresh("ch")
    k.params.append(f"{ch}: i32 = {c}")
    xw, ww, yw = k.fresh("xw"), k.fresh("ww"), k.fresh("yw")
    k.body += [Stmt(f"{xw} = workspace(T, Bt, S, D)", None, xw), Stmt(f"{ww} = workspace(T, Bt, S, D)", None, ww),
               Stmt(f"{yw} = workspace(f32, Bt, S, D)", None, yw)]
    xc, wc, yc = k.fresh("xc"), k.fresh("wc"), k.fresh("yc")
    k.body += [Stmt(f"{xc} = view({xw}, Bt, NC=S / {ch}, C={ch}, E=D)", None, xc),
               Stmt(f"{wc} = view({ww}, Bt, NC, C, E)", None, wc), Stmt(f"{yc} = view({yw}, Bt, NC, C, E)", None, yc)]
    mk, mn, g, rs, h, hp = (k.fresh(n) for n in ("mk", "mn", "g", "rs", "h", "hp"))
    hf, hpf = k.fresh("hf"), k.fresh("hpf")
    k.body += [Stmt(f"{mk} = workspace(T, C, C)", None, mk), Stmt(f"{mn} = workspace(T, NC, NC)", None, mn),
               Stmt(f"{g} = workspace(T, Bt, NC, C, C)", None, g), Stmt(f"{rs} = workspace(f32, Bt, NC, C)", None, rs),
               Stmt(f"{h} = workspace(T, Bt, NC, E, E)", None, h), Stmt(f"{hp} = workspace(T, Bt, NC, E, E)", None, hp),
               Stmt(f"{hf} = view({h}, Bt, NC, F=E * E)", None, hf), Stmt(f"{hpf} = view({hp}, Bt, NC, F)", None, hpf)]
    # launch 0: the rows mapped into the workspace tensors (a bound tensor takes no view)
    k.body.append(Loop("for blk in split(Bt * S, cores=AIV):", "for r in tile(blk, size=auto, buffers=2):", (
        Stmt("u = cast(load(" + x + "[r, :]), f32)", None, "u"), Stmt(f"store({xw}[r, :], cast({_phi(rng, 'u')}, T))"),
        Stmt("q = cast(load(" + w + "[r, :]), f32)", None, "q"), Stmt(f"store({ww}[r, :], cast({_phi(rng, 'q')}, T))"))))
    # launches 1-2: position masks, [C, C] and [NC, NC]
    k.body += [_mask_loop(rng, "C", mk), _mask_loop(rng, "NC", mn)]
    # launch 3 (cube): masked chunk products, a per-row value, per-chunk E x E products
    scope = Scope([leaf("acc", "f32", "rows")], k.scope_scalars([]))
    e = Exprs(rng, scope).tile("f32", "rows", rng.randint(0, 2))
    masked = rng.choice([f"select(cast(load({mk}[blk]), f32) > 0.5, {{0}}, 0.0)", f"{{0}} * cast(load({mk}[blk]), f32)"])
    k.body.append(Loop("for blk in split(Bt * NC, C, C, cores=AIC):", "with vector:",
                       (Stmt(f"store({g}[blk], cast({masked}, T))", e),),
                       cube_prefix=("with cube:", f"    acc = matmul({xc}[blk], {wc}[blk], transpose_b=True)")))
    red = rng.choice(["sum", "max", "mean"])
    k.body.append(Loop("for blk in split(Bt * NC, C, E, cores=AIC):", "with vector:",
                       (Stmt(f"store({rs}[blk], abs({red}(acc, axis=1)) + 1.0)"),),
                       cube_prefix=("with cube:", f"    acc = matmul({g}[blk], {wc}[blk])")))
    k.body.append(Loop("for blk in split(Bt * NC, E, E, cores=AIC):", "with vector:",
                       (Stmt(f"store({h}[blk], cast(acc, T))"),),
                       cube_prefix=("with cube:", f"    acc = matmul({xc}[blk], {wc}[blk], transpose_a=True)")))
    # launch 4 (cube, cut: h through its flat view): mix the chunks' products by the [NC, NC] mask
    k.body.append(Loop("for blk in split(Bt, NC, F, cores=AIC):", "with vector:",
                       (Stmt(f"store({hpf}[blk], cast(acc, T))"),),
                       cube_prefix=("with cube:", f"    acc = matmul({mn}[blk], {hf}[blk])")))
    # launch 5 (cube, cut: hp as [E, E] blocks): rows by the mixed products, over the per-row value
    scope2 = Scope([leaf("acc", "f32", "rows")], k.scope_scalars([]))
    e2 = Exprs(rng, scope2).tile("f32", "rows", rng.randint(0, 2))
    if "acc" not in e2.render():
        e2 = Node("({0} + {1})", (e2, leaf("acc", "f32", "rows")), "f32", "rows")
    k.body.append(Loop("for blk in split(Bt * NC, C, E, cores=AIC):", "with vector:",
                       (Stmt(f"store({yc}[blk], {{0}} / load({rs}[blk]))", e2),),
                       cube_prefix=("with cube:", f"    acc = matmul({xc}[blk], {hp}[blk])")))
    # launch 6: the result into the output
    k.body.append(Loop("for blk in split(Bt * S, cores=AIV):", "for r in tile(blk, size=auto, buffers=2):",
                       (Stmt(f"store({y}[r, :], load({yw}[r, :]))"),)))
    return sizes
