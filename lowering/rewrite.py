"""Shared traversal helpers: bottom-up expression rewriting and tile-body mapping."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ascend_dsl import ir


def rewrite_expr(e: ir.Expr, fn: Callable[[ir.Expr], ir.Expr | None]) -> ir.Expr:
    """Rewrite children first, then apply `fn` (None = unchanged) until it stops changing the node."""
    if isinstance(e, ir.Op):
        args = tuple(rewrite_expr(a, fn) for a in e.args)
        if args != e.args or any(a is not b for a, b in zip(args, e.args, strict=True)):
            e = replace(e, args=args)
    new = fn(e)
    return e if new is None else rewrite_expr(new, fn)


def map_tile_bodies(kernel: ir.Kernel, fn: Callable[[ir.TileLoop], ir.TileLoop], chunks: bool = True) -> ir.Kernel:
    """Apply `fn` to every tile loop: those of split and cube loops and, with `chunks`, the pass loops of
    chunked row loops (RowTiles.chunked), which the ordinary passes lower like any other loop."""
    def go(s: ir.Stmt) -> ir.Stmt:
        if isinstance(s, ir.TileLoop):
            s = fn(s)
            plan = s.shape.chunked if chunks and s.kind is ir.LoopKind.ROWS else None
            if isinstance(plan, ir.ChunkPlan):
                passes = tuple(replace(p, loop=fn(p.loop)) for p in plan.passes)
                s = replace(s, shape=replace(s.shape, chunked=replace(plan, passes=passes)))
            return s
        if isinstance(s, (ir.SplitLoop, ir.CubeLoop)):  # a cube loop's epilogue is a row tile loop
            return replace(s, body=tuple(go(c) for c in s.body))
        return s

    return replace(kernel, body=tuple(go(s) for s in kernel.body))


def add_row_loop_buffers(kernel: ir.Kernel, extra: Callable[[ir.TileLoop], tuple[ir.Buffer, ...]]) -> ir.Kernel:
    """VECTOR kernels: the buffers `extra` gives each whole-row tile loop (not the chunked passes) appended to its
    declarations (scratch a pass plans beside the loop's own buffers)."""
    if kernel.kind is not ir.KernelKind.VECTOR:
        return kernel

    def plan(tl: ir.TileLoop) -> ir.TileLoop:
        added = extra(tl) if tl.kind is ir.LoopKind.ROWS else ()
        return replace(tl, buffers_decl=tl.buffers_decl + added) if added else tl

    return map_tile_bodies(kernel, plan, chunks=False)


def map_exprs(kernel: ir.Kernel, fn: Callable[[ir.Expr], ir.Expr | None]) -> ir.Kernel:
    def body(tl: ir.TileLoop) -> ir.TileLoop:
        out = []
        for s in tl.body:
            if isinstance(s, ir.VALUE_STMTS):
                s = replace(s, value=rewrite_expr(s.value, fn))
            out.append(s)
        return replace(tl, body=tuple(out))

    return map_tile_bodies(kernel, body)


def sole_tile_loop(kernel: ir.Kernel) -> tuple[ir.SplitLoop | None, ir.TileLoop | None, str]:
    """(split, tile loop, '') when the kernel's body is one split loop holding one tile loop; else (None, None, why
    not): the shape the single-loop kinds (plan_gather_middle, plan_scatter_shared) start from."""
    if len(kernel.body) != 1 or not isinstance(kernel.body[0], ir.SplitLoop):
        return None, None, "other kernel-scope statements"
    split = kernel.body[0]
    if len(split.body) != 1 or not isinstance(split.body[0], ir.TileLoop):
        return None, None, "more than one tile loop"
    return split, split.body[0], ""

