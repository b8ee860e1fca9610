"""Row fallback: a matmul split whose epilogue reduces whole rows gets its launches form beside the fused kernel.

Goals: `sum/mean/max/min/prod(v, axis=1)` in a matmul's `with vector:` block (softmax, log_softmax, logsumexp,
a row mean or max) makes every fused (MIX) base block span all N columns, so the fused kernel runs only while
16 rows of N fit L0B and the Unified Buffer (N up to ~580-1024); N is known only at launch. The parser builds
the kernel as written (fused) and, when its only loop is such a split, the same text cut by
`ascend_dsl/autosplit.py` into launches (the cube split storing an f32 workspace, then a vector row loop whose
long rows run in chunked passes), attached as `Kernel.fallback`. Both are lowered and emitted; the host runs the
fused kernel when its tiling launches blocks at the shapes and a static traffic estimate says it is not slower
(few rows per base block re-read B), the launches otherwise (npu_harness/row_fallback.py), so a long row never
meets `TILING` and a large M does not re-read B per few rows.
The two compute the same rows (the launches' reductions are over the same values, in f32).
Non-goals: a fallback for kernels of several loops (chains, launches the user wrote), fusing the launches back.
If the cut is refused (an epilogue the launches form cannot hold), the kernel has no fallback and keeps the
fused kernel's launch error (`TILING`, naming the two-loop form); `Kernel.fallback_miss` says why.
"""

from __future__ import annotations

from lark import Tree

from . import autosplit


def wanted(b, stmts: list[Tree]) -> bool:
    """Whether the kernel body is one matmul split whose epilogue reduces whole rows and which autosplit leaves
    fused (an epilogue that scans or takes argmax is cut anyway)."""
    loops = [s for s in stmts if isinstance(s, Tree) and s.data == "for_stmt"]
    if len(loops) != 1 or b.workspaces or len(stmts) != 1:
        return False
    s = loops[0]
    if not autosplit.row_reductions(b, s):
        return False
    return not autosplit.mix_refused(s)
