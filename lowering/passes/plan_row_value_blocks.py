"""Per-row values (`load(c[r])`, a row's reduction) against whole rows: a UB scratch of one 32-byte block per row.

Row by row, `x / load(c[r])` costs a scalar read of the row's value and one vector instruction per row
(emit/shared.py `RowStageWriter.per_row`): on rows of 64 that is most of the tile's time (div_col f16 at
65536 x 64: 43 % of the ideal, docs/cost_model.md). With the tile's values spread to a 32-byte block each
(`Brcb`, 8 rows per repeat) the op runs as the level-0 binary instruction with those blocks as an operand
(block stride 0, repeat stride one block: every repeat is a row), one instruction per strip of columns and up to
255 rows (lowering/emit/row_value_broadcast.py). This pass gives the loop that scratch: one VECCALC buffer per
dtype of the per-row ops it can rewrite (lowering/row_value_ops.py), Layout.BLOCKS (tile rows rounded up to 8,
x 32 bytes; sized by the host with the other row buffers). Only the whole-row loops of VECTOR kernels; chunked
passes read the value once per row already.
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from ..context import PassContext
from ..rewrite import add_row_loop_buffers
from ..row_value_ops import binary

#: Element types of Brcb and of the level-0 binary instructions both.
DTYPES = (DType.F32, DType.F16)


def scratch_name(dtype: DType) -> str:
    return f"rowValBlocks_{dtype}"


def dtypes_needed(tl: ir.TileLoop) -> list[DType]:
    """The dtypes of the per-row values whose ops this loop can run with Brcb'd blocks."""
    decls = {b.name: b for b in tl.buffers_decl}
    out: dict[DType, None] = {}
    for s in tl.body:
        if isinstance(s, ir.PerRow) and binary(s) is not None:
            dt = decls[s.col].dtype
            if dt in DTYPES and all(decls[n].dtype is dt for n in (binary(s).dst, binary(s).x)):
                out[dt] = None
    return list(out)


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    return add_row_loop_buffers(kernel, lambda tl: tuple(
        ir.Buffer(scratch_name(dt), ir.Position.VECCALC, dt, 1, 8 * dt.size, ir.Layout.BLOCKS,
                  ir.BufferRole.ROW_VALUE_BLOCKS, span=tl.span) for dt in dtypes_needed(tl)))
