"""Which lowering forms a generated program exercises, from its text, sizes and core count.

`forms(p)` names the forms of the recent sessions (docs/design.md, sessions 30-33) that the program draws:
the host-tiling choices are decided from the sizes the way the host tiling decides them (the middle-dim split's
parts, long rows on core groups, the Brcb form's instruction count), so a form counts only when its code path runs,
not when its syntax merely appears. benchmarks/fuzz_coverage.py counts them over a campaign's programs.
"""

from __future__ import annotations

import math
import re

from .program import Loop, Program

CUBE_PEAK_ROW = 1024  # N above which the row fallback's launches run (gen._row_fallback draws 1100-2600)


def _loops(p: Program) -> list[Loop]:
    return [item for item in p.body if isinstance(item, Loop)]


def _brcb(rows: int, cores: int, length: int, elem: int) -> bool:
    """The per-row Brcb form runs (lowering/emit/row_value_broadcast.py's run-time rule) for a core's share of
    rows in one tile: strips x ceil(count / 255) + ceil(count / 2032) < count, the row pitch <= 255 blocks."""
    count = math.ceil(rows / max(1, cores))
    strips = math.ceil(length / (256 // 4))  # a repeat's columns of the compute dtype (f32 at most 64)
    pitch_blocks = math.ceil(length * elem / 32)
    return count > 2 and pitch_blocks <= 255 and strips * math.ceil(count / 255) + math.ceil(count / 2032) < count


def _tile_fold(rows: int, cores: int, length: int, elem: int) -> bool:
    """Row reductions folded a tile at a time (lowering/emit/tile_fold.py's run-time rule, roughly): rows of whole
    256-byte repeats, at least 2 of them, a pitch of at most 255 blocks, and tiles of at least 4 rows (a core's
    rows in two tiles: at least 8 per core)."""
    return (length * elem) % 256 == 0 and length * elem >= 512 and length * elem <= 255 * 32 \
        and math.ceil(rows / max(1, cores)) >= 8


def _middim_parts(p: Program) -> int:
    """box_tiling's parts of the reduced axis: min(cores / rows, R / 16, R * M / 4096) when rows < cores / 2."""
    s = p.sizes
    text = p.text()
    if p.kind not in ("box", "middim") or re.search(r"store\(z\d+\[t\]", text):
        return 1
    dim0 = "axis=0" in text
    rows, red, m = (1, s["A"], s["R"] * s["C"]) if dim0 else (s["A"], s["R"], s["C"])
    if 2 * rows >= p.cores:
        return 1
    return max(1, min(p.cores // rows, red // 16, red * m // 4096))


def forms(p: Program) -> set[str]:
    text, s, out = p.text(), p.sizes, set()
    add = out.add
    if re.search(r"gather\(t\d+, load\(p\d+\[r, :\]\)\)", text):
        add("gather_narrow")
    if re.search(r"index_select\(t\d+, ", text):
        add("index_select_cols")
    if re.search(r"gather\(g\d+, load\(e\d+\[r, :\]\)\)", text):
        add("gather_middle")
    if p.kind == "gather_middle":  # alone in its loop: the vector form (lowering/passes/plan_gather_middle.py)
        add("gather_middle_vec")
        if s["R"] > 4095:  # the slab in several copies (4095 rows each), or past UB: the host's scalar walk
            add("gather_middle_scalar_walk" if s["R"] * 32 + 2048 > 188416 else "gather_middle_long_slab")
    if p.kind == "scatter_shared":  # alone in its loop: the vector form (lowering/passes/plan_scatter_shared.py)
        add("scatter_shared_vec" if s["D"] <= 4096 else "scatter_shared_scalar_walk")
        if "scatter_add(" in text:
            add("scatter_shared_add")
    if re.search(r"load\(g\d+\[n\d+\[r\], :\]\)", text):
        add("index_select_middle")
    if re.search(r"scatter\(\w+, g\d+, -?[\d.e-]+\)", text):
        add("scatter_value_dim0")
    if re.search(r"scatter(_add)?\(\w+, g\d+, s\d+\)", text):
        add("scatter_dim0")
    if re.search(r"index_(add|copy|put)\(", text):
        add("index_rows_dim0")
    if re.search(r"scatter(_add)?\(\w+, load\(u\d+", text):
        add("scatter_last_dim")
    parts = _middim_parts(p)
    if parts > 1:
        add("middim_split")
        rows = 1 if "axis=0" in text else s["A"]
        if 2 * rows >= p.cores - 2:
            add("middim_rows_near_half_cores")
    if p.kind in ("long_rows", "norm1pass") and s.get("D", 0) > 262_144 and s.get("B", 0) >= p.cores:
        add("long_rows_on_groups")
        if s["B"] % p.cores:
            add("long_rows_on_groups_ragged")
    if p.kind in ("long_rows", "norm1pass") and re.search(r"rsqrt\(", text) and s.get("D", 0) > 262_144:
        add("norm_long_rows_over_1mb")
    elem = 2 if "f16" in p.decorator or "bf16" in p.decorator else 4
    per_row_value = re.search(r"load\(c\d+\[r\]\)", text) or re.search(r"\bs\[r\]", text)
    rows = s.get("B", 1) * (s.get("A", 1) if p.kind == "row_values" else 1)
    if p.kind in ("rows", "row_values") and per_row_value and _brcb(rows, p.cores, s.get("D", 1), elem):
        add("row_value_brcb")
    if p.kind == "rows" and re.search(r"\b(sum|max|min|mean)\([^()]*(\([^()]*\))*[^()]*, axis=1\)", text) \
            and _tile_fold(rows, p.cores, s.get("D", 1), elem):
        add("tile_fold")
    if p.kind in ("slots", "slot_rows") and _brcb(s["N"] * s["C"], p.cores, s["H"] * s["W"], elem):
        add("slot_value_brcb")
    if p.kind == "row_fallback":
        add("row_fallback_launches" if s["N"] > CUBE_PEAK_ROW else "row_fallback_fused")
    if p.kind in ("cube", "chain", "row_fallback", "batched_gemm") and "Bt" in s:
        add("batched_gemm")
        if s["Bt"] > 1 and s["M"] > 128:
            add("batched_gemm_several_m_blocks")
    for loop in _loops(p):
        body = " ".join(st.render() if not isinstance(st, Loop) else "" for st in loop.body)
        sums = re.findall(r"a\d+ \+= sum\(", " ".join(st.fmt for st in loop.body))
        others = re.findall(r"a\d+ = (max|min)\(", " ".join(st.fmt for st in loop.body))
        if p.kind in ("flat", "scalar_stress", "flat_sums") and "store(" not in body and (sums or others):
            add("flat_reduction_only")
        if sums and not others and p.cores > 2:
            add("sum_tree_combine")
    i32_data = "T=[i32]" in p.decorator or re.search(r'x\d*: Tensor\[i32, "A, R, C"\]', text)
    if i32_data and p.kind in ("box", "middim"):
        add("i32_box_reduction")
    if i32_data and p.kind in ("rows", "row_values", "gather_narrow", "gather_middle", "scatter_dim0"):
        add("i32_rows")
    if "view(" in text:
        add("workspace_views")
    if "workspace(" in text:
        add("workspace_stages")
    if re.search(r"conv[123]d\(", text):
        add("conv")
    if "conv_transpose" in text:
        add("conv_transpose")
    if p.kind == "conv5hd":
        add("conv5hd")
    if p.kind in ("flash", "chain", "launches", "autosplit", "chunked"):
        add(p.kind)
    if p.kind == "flash_ring":  # the ring's shapes (head dims multiples of 16 up to 128), else its Matmul-API form
        dk, dv = s.get("Dk", 0), s.get("Dv", 0)
        add("flash_ring" if dk % 16 == 0 and dv % 16 == 0 and 0 < dk <= 128 and 0 < dv <= 128 else "flash_ring_api")
        if "col_index()" in text:
            add("flash_ring_causal")
    d = s.get("D", 0)
    if re.search(r"cum(sum|prod)\(", text) and 0 < d <= 4608:  # whole-row scans (lowering/vector_scan.py, session 36)
        add("scan_direct" if d % 512 == 0 else "scan_padded")  # the row fills the L x P matrix, or is padded
        if d == 4096:
            add("scan_square")  # P = L = 64: the forward table taken back
    return out
