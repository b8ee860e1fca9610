"""Scans (cumsum / cumprod along a row) on the vector unit: a blocked prefix with a carried offset.

Vector instructions start on 32-byte aligned UB addresses (ascendc.md 4.5), so a shift by one element
(Hillis-Steele over the row as it lies in UB) is not expressible. The row of n elements is instead viewed
as P columns (segments) of L consecutive elements (64 for whole rows, 128 for chunks of rows longer than
UB: `segment`), P = ceil(n / 8L) * 8, and transposed with `Gather` (ascendc_next.md 3.1; byte-offset
tables) into an L x P matrix: row k holds element k of every segment, and rows are 32-byte aligned.
Then, all in f32 (16-bit rows are cast first):

1. a Brent-Kung scan down the L rows, in place: log2(L) up-sweep and log2(L) - 1 down-sweep steps, each
   one level-0 `Add`/`Mul` per 64 columns whose repeats are the step's rows (row strides in whole 32-byte
   blocks); 2L - 2 - log2(L) row additions, where a log-step (Hillis-Steele) scan needs L log2(L) - L + 1
   and a ping-pong copy per step;
2. the segment offsets, an exclusive scan of the P segment totals (the last row): whole rows on the vector
   unit (session 33), log-steps k = 1, 2, 4, ... < P, each a `Gather` of the running totals shifted by k
   (identities in front of them fill the first k: one byte-offset table 4 j, srcBaseAddr moves it) and one
   `Add`/`Mul`, 2 log2(P) + 3 instructions and no scalar work or V <-> S handshake; sums over P = 64
   segments (rows of 3,585-4,096) in two levels instead, 7 instructions (session 36; 10 with session 33's
   8 x 8 Brent-Kung): the 8 group sums (totals 8g..8g+7) by `BlockReduceSum`, the groups' offsets by
   `BlockReduceSum` over their gathered triangle (row g: the sums of groups < g, identities elsewhere), the
   totals before each segment within its group by a `Gather` of a 512-entry triangle and `BlockReduceSum`, a
   `Brcb` of the group offsets and one `Add` (tables once per launch, `two_level`); chunks of a long row
   keep the scalar walk, which starts from the carry (Kahan-compensated, as the scalar scan was) and, for
   an f32 sum, corrects each total by its rounding first (`scratch_buffers`);
3. one level-0 `Add`/`Mul` per 64 columns adds each segment's offset to its L + 1 rows (the identity row
   above the matrix included: exclusive scans read the matrix shifted up by one row), src1RepStride 0;
4. `Gather` back to the row's order (`srcBaseAddr` selects inclusive or exclusive).

Session 36: a whole row that fills the matrix (n = L P, e.g. 512 or 4096 elements) is transposed straight from the
row instead of from an f32 copy padded with the identity: an f32 row by one `Gather` (no copy), a 16-bit row by a
16-bit `Gather` (half the repeats; 2-byte offsets) and one `Cast` of the matrix; a 16-bit result is cast from the
scanned matrix (one row up for exclusive scans) and gathered back in 16 bits (`half_in`, `half_out`: the scratch's
tables are then in 2-byte offsets). A square matrix (P = L) whose two Gathers move elements of one size builds
no `back` table: the transpose and the reversal commute, so it is `fwd` (`square`).

Reverse scans fold the reversal into the two tables; the elements past n are set to the identity, so a
shorter row (a tail chunk) reuses the tables. AscendC's own `CumSum` (asc-devkit
`impl/.../math/cumsum/cumsum_common_impl.h`) transposes with `TransDataTo5HD` and adds one row at a time;
this lowering keeps the instruction count independent of n (about 25 instructions per row, the tables
built once per launch) and the scalar work at one step per L elements.

Pseudo-instructions (VecOp.api) produced by select_instructions and expanded by the emitter
(lowering/emit/shared.py `scan_lines`, codegen_templates/snippets/scan*.cpp.jinja; chunks: emit/chunk.py):
  ScanSum / ScanProd (attrs reverse, exclusive, scratch: its SCAN_TMP buffer) -- rows x D -> rows x D
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.dtypes import DType
from ascend_dsl.ops import OPS, Rule

SCAN_APIS = {"cumsum": "ScanSum", "cumprod": "ScanProd"}
SCAN_OPS = frozenset(n for n, o in OPS.items() if o.rule is Rule.SCAN)
#: Elements per segment (matrix rows), by loop: whole rows 64 (one f32 repeat: a row of 4096 fills the
#: 64 lanes of every matrix row, where 128 would leave half of them empty), chunks of a long row 128
#: (chunks hold 8K-16K elements: the matrix rows are full either way, and 128 halves the scalar steps,
#: one per segment). Cost model, cumsum f16 4096 x 4096: 63 us with 64, 80 us with 128.
SEGMENT_ROWS, SEGMENT_CHUNKS = 64, 128


#: A whole-row scan's vector work, for the host's tile-count estimate (lowering/row_tile_count.py): cycles per 64
#: row elements (repeats at ascendc.md 5.5's rates, for a row that fills the matrix (session 36): the way in a
#: 16-bit Gather 1 and a Cast to f32 2, or an f32 Gather 2; the Brent-Kung steps' 120 and the offsets' 65 row
#: repeats of 64 at 2; the way out a Cast to 16 bits 1 and a 16-bit Gather 1, or an f32 Gather 2) and instructions
#: per row (about 33: the steps and the offsets' log-steps issue once per row whatever the tile count).
SCAN_ROW_INSTRUCTIONS = 33


def scan_cycles_per_64(cast_in: bool, cast_out: bool) -> float:
    way_out = 1 + 1 if cast_out else 2  # a Cast to 16 bits and a 16-bit Gather cost what one f32 Gather does
    return (3 if cast_in else 2) + 2 * 120 / 64 + 2 * 65 / 64 + way_out


def segment(chunked: bool) -> int:
    return SEGMENT_CHUNKS if chunked else SEGMENT_ROWS


def scratch_rows(scratch: ir.Buffer, chunked: bool) -> int:
    """f32 elements of the scratch per matrix column (P = ceil(n / 8L) * 8 of them: whole 32-byte blocks per
    matrix row): the identity row and the matrix (L + 1), the row in f32 (L; then the offsets and, for 16-bit
    rows, the f32 result), the two gather tables (2 L), and the copy of the matrix of a compensated sum (L);
    whole rows: the byte offsets 4 j of the segment offsets' log-steps (1) and, with a running sum, the
    two-level offsets' sums and tables (14: 896 elements at P = 64, the only P that uses them)."""
    L = segment(chunked)
    return 4 * L + 1 + (L if compensated(scratch) else 0) + (0 if chunked else 1) + (14 if two_level(scratch) else 0)


def scratch_name(reverse: bool) -> str:
    return "scanTmp_rev" if reverse else "scanTmp_fwd"


def scan_op(dst: str, e: ir.Op, src: str) -> ir.VecOp:
    """The pseudo-instruction of a scan op over rows `src` into `dst` (its scratch: scratch_name)."""
    info = OPS[e.op]
    return ir.VecOp(SCAN_APIS[info.call], dst, (src,), (("reverse", str(info.reverse).lower()),
                    ("exclusive", str(info.exclusive).lower()), ("scratch", scratch_name(info.reverse))), e.span)


def two_level(scratch: ir.Buffer) -> bool:
    """Whole rows with a running sum: the scratch holds the tables and 8 x 8 matrices of the two-level offsets of
    64 segments (`of` has ':sum'; scan.cpp.jinja)."""
    return ":sum" in (scratch.of or "")


def half_in(scratch: ir.Buffer) -> bool:
    """Whole rows whose scans all read 16-bit rows: where a row fills the matrix (n = L P) its transpose is a 16-bit
    `Gather` straight from the row (half the repeats of an f32 one) and the forward table holds 2-byte offsets
    (`of` has ':in16'; scan.cpp.jinja, scan_tables.cpp.jinja)."""
    return ":in16" in (scratch.of or "")


def half_out(scratch: ir.Buffer) -> bool:
    """Whole rows whose scans all write 16-bit rows: the scanned matrix is cast to 16 bits first and gathered back with
    2-byte offsets (`of` has ':out16')."""
    return ":out16" in (scratch.of or "")


def square(n: str, L: int, in16: bool, out16: bool) -> str:
    """The C++ condition under which the gather tables of rows of `n` elements (a C++ expression) need no `back`: the
    matrix is square (P = L) and both Gathers move elements of one size (U = V: 2 for a 16-bit row that fills the
    matrix with 16-bit tables, else 4), so the way back is the same permutation as the way in (the transpose and
    the reversal commute: scan_tables.cpp.jinja)."""
    fill = f"static_cast<uint32_t>({n}) == {L} * P"
    if out16 and not in16:
        return "false"
    return f"P == {L}" + (f" && {fill}" if in16 and out16 else f" && !({fill})" if in16 else "")


def compensated(scratch: ir.Buffer) -> bool:
    """The scratch has room for the Kahan correction of the segment totals (`of` ends with '+')."""
    return (scratch.of or "").endswith("+")


def scratch_buffers(stmts, span, chunked: bool) -> list[ir.Buffer]:
    """The SCAN_TMP buffers of a loop body: one per direction its scans use (tables differ). In a chunk pass
    (rows longer than UB) an f32 running sum also corrects each segment total for its rounding (the
    residuals of the matrix's row differences, one more matrix): over 393,216 elements the totals' f32
    errors would add up past the f32 tolerance."""
    scans = [s.value for s in stmts if isinstance(s, ir.Assign) and isinstance(s.value, ir.Op) and s.value.op in SCAN_OPS]
    ops = [OPS[e.op] for e in scans]
    types = {e.op: e.type.dtype for e in scans}
    out = []
    for r in sorted({o.reverse for o in ops}):
        mine = [e for e in scans if OPS[e.op].reverse == r]
        kahan = chunked and any(o.reverse == r and o.call == "cumsum" and types[o.name] is DType.F32 for o in ops)
        sums = not chunked and any(o.reverse == r and o.call == "cumsum" for o in ops)
        in16 = not chunked and all(_half(e.args[0].type.dtype) for e in mine)
        out16 = not chunked and all(_half(e.type.dtype) for e in mine)
        out.append(ir.Buffer(scratch_name(r), ir.Position.VECCALC, DType.F32, 1, 128, ir.Layout.SCAN, ir.BufferRole.SCAN_TMP,
                             ("rev" if r else "fwd") + (":sum" if sums else "") + (":in16" if in16 else "")
                             + (":out16" if out16 else "") + ("+" if kahan else ""), span))
    return out


def _half(dt: DType) -> bool:
    return dt in (DType.F16, DType.BF16)
