"""Input tensors for generated programs: values that reach both sides of every comparison.

Each element is drawn from a mixture: unit normals, exact small values (ties for `==`, exact zeros for
`x > 0.0`), uniform values up to +-10, large magnitudes (+-100..1000), tiny ones (1e-3) and negatives
throughout. Integer tensors hold small integers, u8 tensors 0/1 masks, gather indices valid columns,
the index tensors of row gathers row numbers in [-V, V). Every tensor has its own generator seeded from
(program seed, tensor name), so removing a parameter while minimising leaves the other inputs unchanged.
"""

from __future__ import annotations

import hashlib

import torch

from ascend_dsl import ir
from ascend_dsl.ops import OPS, Rule

EXACT = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0)


def seeded_generator(seed: int, name: str) -> torch.Generator:
    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") >> 1)


def mixture(n: int, g: torch.Generator) -> torch.Tensor:
    """n float64 values from the mixture (see the module docstring)."""
    kind = torch.randint(0, 100, (n,), generator=g)
    out = torch.randn(n, generator=g, dtype=torch.float64)  # 50 %: unit normals
    parts = [(0, 20), (20, 35), (35, 42), (42, 50)]  # exact, uniform, large, tiny
    for k, (lo, hi) in enumerate(parts):
        idx = torch.nonzero((kind >= lo) & (kind < hi)).reshape(-1)
        m = idx.numel()
        if m == 0:
            continue
        if k == 0:
            v = torch.tensor(EXACT, dtype=torch.float64)[torch.randint(0, len(EXACT), (m,), generator=g)]
        elif k == 1:
            v = torch.rand(m, generator=g, dtype=torch.float64) * 20 - 10
        elif k == 2:
            sign = torch.randint(0, 2, (m,), generator=g).to(torch.float64) * 2 - 1
            v = sign * (100 + torch.rand(m, generator=g, dtype=torch.float64) * 900)
        else:
            v = torch.randn(m, generator=g, dtype=torch.float64) * 1e-3
        out[idx] = v
    return out


def _dims(p: ir.TensorParam, sizes: dict[str, int]) -> list[int]:
    return [sizes[d] if isinstance(d, str) else d for d in p.shape]


def gather_columns(kernel: ir.Kernel) -> dict[str, str]:
    """Index tensors of gather / scatter / scatter_add (rows, load(idx[r])...) -> the row length (symbols, e.g. "D") their values index."""
    out = {}
    for tl in ir.walk(kernel.body):
        if not isinstance(tl, ir.TileLoop) or tl.kind is not ir.LoopKind.ROWS:
            continue
        for s in tl.body:
            value = getattr(s, "value", None)
            for e in ir.walk_expr(value) if isinstance(value, (ir.Op, ir.Load, ir.Ref, ir.Const)) else ():
                if isinstance(e, ir.Op) and e.op in ("gather", "scatter", "scatter_add") \
                        and isinstance(e.args[1], ir.Load):
                    out[e.args[1].tensor] = " * ".join(tl.shape.row)
                if isinstance(e, ir.Op) and e.op == "index_select_cols" and isinstance(e.args[0], ir.Load):
                    out[e.args[0].tensor] = str(kernel.param(e.args[1].value).shape[-1])  # x's columns
                if isinstance(e, ir.Op) and e.op == "gather_middle" and isinstance(e.args[0], ir.Load):
                    out[e.args[0].tensor] = str(kernel.param(e.args[1].value).shape[-len(tl.shape.row) - 1])  # R
    return out


def row_numbers(kernel: ir.Kernel) -> dict[str, str]:
    """Index tensors of row gathers `load(w[idx[r], :])` -> the symbol of w's row count (e.g. "V")."""
    params = {p.name: p for p in kernel.tensors}
    return {e.index.by: e.index.group.r if e.index.group else params[e.tensor].shape[0]
            for s in ir.walk(kernel.body) if isinstance(s, ir.VALUE_STMTS)
            for e in ir.walk_expr(s.value) if isinstance(e, ir.Load) and e.index.by}


def scattered_rows(kernel: ir.Kernel) -> dict[str, tuple[str, bool]]:
    """Index tensors of row scatters (index_add on rows) -> (the destination's row symbol, negatives allowed)."""
    out = {}
    for tl in ir.walk(kernel.body):
        if isinstance(tl, ir.TileLoop) and tl.kind is ir.LoopKind.ROWS:
            for s in tl.body:
                value = getattr(s, "value", None)
                for e in ir.walk_expr(value) if isinstance(value, (ir.Op, ir.Load, ir.Ref, ir.Const)) else ():
                    if isinstance(e, ir.Op) and OPS[e.op].rule is Rule.ROW_SCATTER:
                        out[e.args[1].value] = (tl.shape.rows[0], e.op.startswith("index_put"))
    return out


def make_inputs(kernel: ir.Kernel, sizes: dict[str, int], seed: int) -> dict[str, torch.Tensor]:
    """One tensor per input parameter, shaped by `sizes`, in the parameter's dtype."""
    indices = gather_columns(kernel)
    numbers = row_numbers(kernel)
    scattered = scattered_rows(kernel)
    out = {}
    for p in kernel.inputs:
        dims = _dims(p, sizes)
        n = 1
        for d in dims:
            n *= d
        g = seeded_generator(seed, p.name)
        if p.name in indices:
            cols = 1
            for d in indices[p.name].split(" * "):
                cols *= sizes[d]
            values = torch.randint(0, max(cols, 1), (n,), generator=g)
        elif p.name in scattered:  # row numbers of a row scatter: [0, V), or [-V, V) for index_put
            v, negative = sizes[scattered[p.name][0]], scattered[p.name][1]
            values = torch.randint(-v if negative else 0, v, (n,), generator=g)
        elif p.name in numbers:  # row numbers in [-V, V): negative ones count from the end
            v = sizes[numbers[p.name]]
            values = torch.randint(-v, v, (n,), generator=g)
        elif p.dtype.value == "u8":
            values = torch.randint(0, 2, (n,), generator=g)
        elif not p.dtype.is_float:
            values = torch.randint(-100, 101, (n,), generator=g)
        else:
            values = mixture(n, g)
        out[p.name] = values.reshape(dims).to(p.dtype.torch)
    return out
