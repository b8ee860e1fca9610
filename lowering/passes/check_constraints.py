"""Check what the target hardware cannot do, before any lowering decision. Collects every error.

Goals: dtypes supported by the target (no bf16 on 310P; no bf16 vector arithmetic), core counts
(`cores=k` within the target's AIV count), explicit tile sizes and column chunks aligned for DataCopy and
Compare, buffer counts. Non-goals: UB capacity (needs the buffer plan; see plan_tiling.py).
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.diagnostics import DiagnosticSink
from ascend_dsl.diagnostics import ErrorCode as E
from ascend_dsl.dtypes import DType
from ascend_dsl.ops import OPS, Rule

from ..context import PassContext
from ..scalar_loops import SCALAR_LOOP_OPS
from ..targets import Target
from ..tiling_rules import AUTO_TILE_GRANULE, MAX_BUFFERS_PER_QUEUE, tile_granule
from ..vector_scan import SCAN_OPS
from .check_windows import check_windows


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    t = ctx.target
    sink = DiagnosticSink()
    unsupported = {p.dtype for p in kernel.params} - t.dtypes  # reported at the parameters
    for p in kernel.params:
        if p.dtype not in t.dtypes:
            sink.error(E.DTYPE_UNSUPPORTED, f"{p.dtype} is not supported on {t.name}", p.span,
                       f"supported: {', '.join(sorted(d.value for d in t.dtypes))}")
    granule = tile_granule(kernel)
    for s in ir.walk(kernel.body):
        if isinstance(s, ir.SplitLoop) and s.cores is not None and s.cores > t.cores(s.core_kind):
            sink.error(E.CORE_COUNT, f"cores={s.cores} but {t.name} has {t.cores(s.core_kind)} {s.core_kind} cores",
                       s.span, f"use cores={s.core_kind} (all of them) or at most {t.cores(s.core_kind)}")
        if isinstance(s, ir.TileLoop):
            if s.size is not None and s.kind is ir.LoopKind.FLAT and s.size % granule:
                sink.error(E.TILE_ALIGN, f"tile size {s.size} is not a multiple of {granule} elements", s.span,
                           f"DataCopy moves whole 32-byte blocks and Compare works on 256-byte repeats; "
                           f"use a multiple of {granule} (e.g. {max(granule, s.size // granule * granule)}) "
                           f"or size=auto")
            if s.chunk is not None and s.chunk % AUTO_TILE_GRANULE:
                sink.error(E.TILE_ALIGN, f"chunk={s.chunk} is not a multiple of {AUTO_TILE_GRANULE} elements", s.span,
                           f"column chunks are whole 256-byte repeats of every dtype (the host balances chunks in "
                           f"steps of {AUTO_TILE_GRANULE}); use a multiple of {AUTO_TILE_GRANULE} (e.g. "
                           f"{max(AUTO_TILE_GRANULE, s.chunk // AUTO_TILE_GRANULE * AUTO_TILE_GRANULE)}) or drop chunk=")
            if s.kind is ir.LoopKind.BOX and not t.has_datacopypad:
                sink.error(E.UNSUPPORTED, f"a reduction over a non-last dim reads its rows with strided DataCopyPad, "
                           f"which {t.name} does not have", s.span,
                           "lower it for a 910B target (--target ascend910b1), or make the reduced dim the last one")
            if not 1 <= s.buffers <= MAX_BUFFERS_PER_QUEUE:
                sink.error(E.BUFFER_COUNT, f"buffers={s.buffers} is outside 1..{MAX_BUFFERS_PER_QUEUE}", s.span,
                           "buffers=2 double-buffers copy-in/compute/copy-out; buffers=1 disables it")
        if isinstance(s, ir.VALUE_STMTS):
            for e in ir.walk_expr(s.value):
                vector_op = isinstance(e, ir.Op) and e.op != "cast" and e.op not in SCALAR_LOOP_OPS \
                    and e.op not in SCAN_OPS and OPS[e.op].rule is not Rule.RESIZE  # scalar loops, scans: f32; resize_nearest: a Gather (a copy)
                if vector_op and DType.BF16 in (e.type.dtype, *(a.type.dtype for a in e.args)):
                    sink.error(E.DTYPE_UNSUPPORTED, f"'{e.op}' on bf16: the vector unit has no bf16 arithmetic",
                               e.span, "cast(x, f32) after loading and cast(y, bf16) before storing")
                if isinstance(e, ir.Op) and e.op == "cast" and e.type.kind is ir.Kind.TILE:
                    _check_cast(e.args[0].type.dtype, e.type.dtype, e.span, t, sink, unsupported)
    check_windows(kernel, sink)
    sink.raise_if_any()
    return kernel


_INT_WIDTH = {DType.U8: 1, DType.I8: 1, DType.I16: 2, DType.I32: 4, DType.I64: 8}


def _check_cast(src: DType, dst: DType, span, t: Target, sink: DiagnosticSink, unsupported: set[DType]) -> None:
    """Casts the vector Cast cannot do as PyTorch does (documented pairs: CANN "Cast" tables, docs/design.md)."""
    target = t.name
    if dst in unsupported:  # already reported at the tensor parameter
        return
    if dst not in t.dtypes:
        sink.error(E.DTYPE_UNSUPPORTED, f"cast to {dst}: {target} has no {dst} (no Cast to it)", span,
                   f"supported: {', '.join(sorted(d.value for d in t.dtypes))}")
    elif src in _INT_WIDTH and dst in _INT_WIDTH and src is not dst and (src, dst) != (DType.I64, DType.I32) and (
            _INT_WIDTH[dst] < _INT_WIDTH[src] or DType.U8 in (src, dst) and _INT_WIDTH[dst] == _INT_WIDTH[src]):
        sink.error(E.UNSUPPORTED, f"cast from {src} to {dst}: PyTorch wraps such integer casts, the vector Cast "
                   "saturates or has no such pair", span, "compute in the narrower integer type, or in f32")
    elif target == "ascend310p" and src is DType.I16 and dst in (DType.F32, DType.I32):
        sink.error(E.UNSUPPORTED, f"cast from i16 to {dst}: {target}'s Cast converts i16 to f16 only, which is "
                   "not exact above 2048", span, "load the data as f16 or i32, or lower it for a 910B target")
