"""Per-channel values (`load(w[r])` of a `[C]` tensor, row `n*C + c` reading `w[c]`): the tensor cached in UB per core.

Row by row, the CopyIn of `w[r]` reads each row's value from GM on the scalar unit (`GetValue` through the
scalar data cache, 200 cycles each in the cost model): batch_norm_module (4 such tensors) spends more time on
them than on moving x (S-bound, 45 % of the ideal, docs/cost_model.md "Session 34"). Consecutive rows read
consecutive channels modulo C, so a DMA of the run would land at an unaligned UB address whenever the run wraps;
instead this pass gives the loop one VECCALC buffer per such tensor, Layout.PERIOD (ir.PERIOD_CACHE_BYTES, sized
by the host with the other row buffers), which the emitter fills with the whole tensor once per core, before the
first tile (emit/row_vectors.py), when C values fit it; the CopyIn then reads each row's value from UB (10 cycles).
A longer C keeps the GM reads (the kernel checks `Period_` at run time). Only the whole-row loops of VECTOR
kernels; chunked passes read the value once per row already (emit/shared.py chunk_copy_in_lines).
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from ..context import PassContext
from ..rewrite import add_row_loop_buffers


def cache_name(tensor: str) -> str:
    return f"perCache_{tensor}"


def is_per_channel(s: ir.Stmt) -> bool:
    """The copy-in of `w[r]` of a `[C]` tensor over rows `n*C + c`: one value per row with a period, no stride,
    not whole rows, not a slot accumulator's totals, not a gather."""
    return (isinstance(s, ir.CopyIn) and s.index.period is not None and not s.index.stride and not s.index.rows
            and not s.index.acc and s.index.by is None)


def per_channel_tensors(tl: ir.TileLoop) -> dict[str, DType]:
    """The per-channel tensors the loop copies in, with their element types (the copied-in buffer's)."""
    decls = {b.name: b for b in tl.buffers_decl}
    return {s.tensor: decls[s.buffer].dtype for s in tl.body if is_per_channel(s) and s.buffer in decls}


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    return add_row_loop_buffers(kernel, lambda tl: tuple(
        ir.Buffer(cache_name(t), ir.Position.VECCALC, dt, 1, 8 * dt.size, ir.Layout.PERIOD, ir.BufferRole.PERIOD_CACHE,
                  of=t, span=tl.span) for t, dt in per_channel_tensors(tl).items()))
