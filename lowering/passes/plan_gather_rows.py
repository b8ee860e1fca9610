"""Gathers of a named tensor along its last dim on the vector unit (`gather(x, load(idx[r, :]))`,
`index_select(x, load(idx[:]))`: op index_select_cols, instruction SelectCols).

SelectCols reads x per element from GM on the scalar unit (lowering/emit/col_select.py: S-bound, 3-6 % of the
ideal at 128 x 4096). Here, in the whole-row loops of VECTOR kernels, it becomes:

- a CopyIn of the tile's x rows (loop row g reads x row g) into a VECIN queue of its own (Layout.NAMED_ROWS:
  rows of x's length D, `of`, each padded to a pitch of at least D + 1 elements; double buffered like the loop's
  other queues, so the copy overlaps the previous tile's work);
- GatherOffsets: the index rows turned into byte offsets on the vector unit, in an i32 scratch of the index's layout
  (Cast, Maxs -1, Mins D, Muls sizeof(T)), then GatherRowsVec: one `Gather` per tile row (lowering/emit/gather_rows.py).

The host sizes the tiles with the x rows counted (emit/shared.py host_bytes): one x row that does not fit UB beside
the loop's rows makes the launch a TILING error. x dtypes: all of index_select_cols' (f16, f32, i32: Gather's).
On 310P an i64 index stays on the scalar path (no Cast from int64 there).
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.dtypes import DType
from ascend_dsl.parser_scatter import tensor_name

from ..context import PassContext
from ..rewrite import map_tile_bodies

API, OFFSETS = "GatherRowsVec", "GatherOffsets"


def _x_rows(name: str) -> str:
    return f"{name}Rows"


def symbol(e: ir.Operand) -> str:
    """x's row length as the host / kernel spell it: an integer or a shape symbol."""
    if isinstance(e, ir.Const):
        return str(int(e.value))
    assert isinstance(e, ir.Ref), e
    return e.name


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    if kernel.kind is not ir.KernelKind.VECTOR:
        return kernel
    tensors = {p.name: p for p in kernel.tensors}

    def plan(tl: ir.TileLoop) -> ir.TileLoop:
        if tl.kind is not ir.LoopKind.ROWS:
            return tl
        selects = [s for s in tl.body if isinstance(s, ir.VecOp) and s.api == "SelectCols"]
        if not selects:
            return tl
        decls = {b.name: b for b in tl.buffers_decl}
        copy_ins: list[ir.Stmt] = []
        body: list[ir.Stmt] = []
        for s in tl.body:
            if not (isinstance(s, ir.VecOp) and s.api == "SelectCols"):
                body.append(s)
                continue
            index, x_name, cols = s.srcs
            x = tensors[tensor_name(x_name)]
            if decls[index].dtype is DType.I64 and ctx.target.name.startswith("ascend310"):
                body.append(s)  # 310P has no Cast from int64 (CANN "Cast" tables): the scalar path
                continue
            rows = _x_rows(x.name)
            if rows not in decls:
                decls[rows] = ir.Buffer(rows, ir.Position.VECIN, x.dtype, tl.buffers, 8 * x.dtype.size,
                                        ir.Layout.NAMED_ROWS, of=symbol(cols), span=s.span)
                copy_ins.append(ir.CopyIn(rows, x.name, ir.TileIndex(tl.var, rows=True, span=s.span), s.span))
            layout = decls[index].layout
            offsets = f"gatherOffsets_{layout.value}"
            if offsets not in decls:  # the index as byte offsets, i32 (one scratch per index layout)
                decls[offsets] = ir.Buffer(offsets, ir.Position.VECCALC, DType.I32, 1, 32, layout, span=s.span)
            body.append(ir.VecOp(OFFSETS, offsets, (index, cols), (("size", str(x.dtype.size)),), s.span))
            body.append(replace(s, api=API, srcs=(offsets, x_name, cols, rows)))
        return replace(tl, body=(*copy_ins, *body), buffers_decl=tuple(decls.values()))

    return map_tile_bodies(kernel, plan, chunks=False)
