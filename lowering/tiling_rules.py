"""Alignment and tiling rules shared by the checks, the planner and the emitter.

Facts (../shared/reference/ascendc.md): DataCopy moves 32-byte blocks (4.1); a vector repeat is
256 bytes and Compare's count must cover whole repeats (4.5); UB tensors start 32-byte aligned.
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

BLOCK_BYTES = 32
REPEAT_BYTES = 256
MAX_BUFFERS_PER_QUEUE = 2
#: Auto tiles are multiples of this many elements: 256 elements are a whole number of 256-byte
#: repeats for every dtype >= 1 byte, and their 1-bit masks fill whole 32-byte blocks.
AUTO_TILE_GRANULE = 256
#: A core gets at least this many elements before another core is used (launch overhead).
MIN_ELEMS_PER_CORE = 4096
#: A core's share is cut into at least this many tiles when it is long enough: with one tile, copy-in,
#: compute and copy-out cannot overlap (the cost model put 16 x 16384 relu at 78 % of the memory
#: roofline with one tile per core, 87 % with two; benchmarks/bench_gallery_model.py).
MIN_TILES_PER_CORE = 2


def kernel_dtypes(kernel: ir.Kernel) -> set[DType]:
    out = {p.dtype for p in kernel.tensors}
    for s in ir.walk(kernel.body):
        if isinstance(s, ir.VALUE_STMTS):
            out.update(e.type.dtype for e in ir.walk_expr(s.value) if e.type.dtype is not DType.BOOL)
    return out


#: Tile ops that lowering/passes/legalize.py expands into a comparison and a select.
COMPARING_OPS = ("erf", "tanh")


def uses_compare(kernel: ir.Kernel) -> set[DType]:
    """Dtypes compared in the kernel (Compare needs whole 256-byte repeats), also by the expansion of an op."""
    out = set()
    for s in ir.walk(kernel.body):
        if isinstance(s, ir.VALUE_STMTS):
            for e in ir.walk_expr(s.value):
                if isinstance(e, ir.Op) and e.type.dtype is DType.BOOL:
                    out.add(e.args[0].type.dtype)
                elif isinstance(e, ir.Op) and e.op in COMPARING_OPS and e.type.kind is ir.Kind.TILE:
                    out.add(e.type.dtype)
    return out


def tile_granule(kernel: ir.Kernel) -> int:
    """Smallest legal explicit tile size: whole 32-byte blocks of every dtype, whole repeats for compares."""
    g = max(BLOCK_BYTES // d.size for d in kernel_dtypes(kernel))
    for d in uses_compare(kernel):
        g = max(g, REPEAT_BYTES // d.size, AUTO_TILE_GRANULE)
    return g


def block_granule(kernel: ir.Kernel) -> int:
    """Core shares are multiples of this many elements, so every share starts 32-byte aligned in GM."""
    return max(BLOCK_BYTES // p.dtype.size for p in kernel.tensors)
