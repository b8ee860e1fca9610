"""The typed, frozen IR shared by the front end, the interpreter and the lowering passes.

Every node is a frozen dataclass below with exactly these fields, in this order (`span` left out:
every statement and expression has one, ignored by equality); tests/test_ir.py holds this block and
the dataclasses together. `x*` is a tuple, `x?` may be None.

    Kernel      = Kernel(name, params: Param*, body: KStmt*, type_args, type_options, kind: KernelKind?, fallback: Kernel?, fallback_miss)
    Param       = TensorParam(name, dtype, shape: Dim*, workspace, view: ViewOf?, dims: DimDef*) | ScalarParam(name, dtype, default?)
    ViewOf      = ViewOf(base, defs: DimDef*)          (a view of a workspace tensor: ascend_dsl/views.py)
    DimDef      = DimDef(name, num, den, ceil)
    -- kernel scope: split loops, cross-core accumulators and the scalar work between the loops
    KStmt       = SplitLoop(var, extent: Sym*, core_kind, cores?, body: TileLoop*)
                | CubeLoop(var, batch: Sym*, m, n, k, body: Matmul+TileLoop, plan: CubePlan?)
                | ConvLoop(var, dims: Sym*, conv: Conv, out, out_dtype, relu, plan: ConvPlan?)
                | AccDecl(name, init) | SlotAccDecl(name, slots: Sym*, rows_per_slot: Sym*, groups: Sym*)
                | ScalarAssign(name, value: Expr, launch) | ScalarLoad(name, tensor) | ScalarStore(tensor, value: Expr)
                -- introduced by lowering/passes/plan_stages.py: a CHAIN kernel's stages, each a MIX kernel
                | ChainStage(index, kernel: Kernel, sync, reads, writes)
                -- introduced by lowering/passes/partition_launches.py: a LAUNCHES kernel's launches, each lowered alone
                | Launch(index, kernel: Kernel, reads, writes)
                -- introduced by lowering/passes/plan_flash.py: the two SDPA stages fused (online softmax)
                | FlashAttention(q, k, v, o, batch: Sym*, m, n, dk, dv, scale: Const|Ref, mask: FlashMask?, bq, bk,
                                 stages: ChainStage*, ring: FlashRing?)
    FlashMask   = FlashMask(tensor?, compare, threshold, fill, lo: FlashBound*, hi: FlashBound*)
    FlashBound  = FlashBound(const, params)
    FlashRing   = FlashRing(taken, why)
    -- a tile loop; its shape payload is its kind (LoopKind)
    TileLoop    = TileLoop(var, over, size?, buffers, body: Stmt*, shape: TileShape, buffers_decl: Buffer*, max_tile?,
                           chunk?)
    TileShape   = FlatTiles() | RowTiles(rows: Sym*, row: Sym*, chunked: ChunkPlan|NoChunk?)
                | PlaneTiles(rank, plan: WindowPlan?) | BoxTiles(axis, dim, plan: BoxPlan?) | ChunkTiles()
    WindowPlan  = WindowPlan(window: Operand*, in_dims: Dim*, out_dims: Dim*, rows_path)
    BoxPlan     = BoxPlan(pitch_granule, reread, vec_bytes, in_bytes, whole_row_shares, whole_axis)
    Stmt        = Assign(name, value: Expr) | Store(tensor, index: TileIndex, value: Expr)
                | Accumulate(name, combine: Combine, reduce, value: Expr, online_sum?, moments?, fold_in_place?) | SlotAccumulate(name, value: Expr)
                -- introduced by lowering passes
                | Stage(kind: StageKind, body: Stmt*) | CopyIn(buffer, tensor, index: TileIndex)
                | CopyOut(tensor, index: TileIndex, buffer) | VecOp(api, dst, srcs: Operand*, attrs)
                | PerRow(col?, ops: VecOp*)
    Buffer      = Buffer(name, position: Position, dtype, num, bits, layout: Layout, role: BufferRole, of?)
    Expr        = Const(value, type: ValType) | Ref(name, type: ValType) | RowLength(type: ValType)
                | Load(tensor, index: TileIndex, type: ValType) | Op(op, args: Expr*, type: ValType)
                -- introduced by select_instructions
                | RowValue(type: ValType) | VectorMath(op, args: Expr*, type: ValType)
    TileIndex   = TileIndex(var?, rows, period?, acc, by?, stride?, group: GroupGather?)
    GroupGather = GroupGather(k, r, row, periodic)           -- a row gather along a middle dim
    ValType     = ValType(kind: Kind, dtype, layout: Layout)
    Operand     = a buffer name | Const | Ref | Op
    -- MIX kernels (cube + vector)
    Matmul      = Matmul(name, a, b, bias?, transpose_a, transpose_b, base)
    CubePlan    = CubePlan(base_m, base_n, base_k, whole_rows, direct, split_k_min, band_rows)
    -- CONV kernels (implicit-GEMM convolution on the cube; ascend_dsl/parser_conv.py)
    Conv        = Conv(name, x, w, rank, stride: int*, padding: int*, dilation: int*, bias?, groups: int | Sym,
                       transposed: bool, output_padding: int*, x5hd?, w5hd?)
    Convert5hd  = Convert5hd(x, w, x5hd, w5hd)                 -- the CONVERT5HD launch before an NC1HWC0 conv
    ConvPlan    = ConvPlan(max_m, max_n, max_k)
    -- chunked row loops: what runs per row when one row does not fit UB
    ChunkPlan   = ChunkPlan(steps: RowStep*, passes: ChunkPass*, row_values, store_dtypes, accumulators: Fold*,
                            slot_accumulators, row_groups)
    NoChunk     = NoChunk(reason)
    ChunkPass   = ChunkPass(loop: TileLoop, reductions: Fold*, max_chunk, scan_offsets, group_only)
    RowStep     = RowLoad(name, tensor, period?, slot, stride?) | RowScalar(name, value: Expr) | RowStore(tensor, value: Expr)
                | RowAccumulate(name, combine: Combine, value: Expr) | RowSlotAccumulate(name, value: Expr)
                | RunPass(index)
    Fold        = Fold(name, combine: Combine, online_sum?, moments?, prefix?)

    Enums: KernelKind, Kind, Layout, LoopKind, Position, BufferRole, StageKind, Combine

Nodes are immutable; passes build new trees with `dataclasses.replace`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import ClassVar

from .diagnostics import UNKNOWN_SPAN, Span
from .dtypes import DType


class Kind(Enum):
    SCALAR = "scalar"
    TILE = "tile"


class Layout(Enum):
    """How a tile value covers the current tile. FLAT: a 1-D run of elements. In a row loop:
    ROWS = rows x D (each row padded in UB), COL = one value per row (rows x 1, from a reduction or a
    1-D tensor over rows), ROW = one row of D shared by all rows (a 1-D tensor over D)."""

    FLAT = "flat"
    ROWS = "rows"
    COL = "col"
    ROW = "row"
    BLOCK = "block"  # buffers only: one 32-byte block (reduction results)
    REPEATS = "repeats"  # buffers only: two elements per 256-byte repeat of a flat tile (reduce scratch)
    PLANE = "plane"  # plane loops: whole planes (the trailing spatial dims of one (n, c) slice), or bands of them
    POOLED = "pooled"  # plane loops: the pooled planes (the output's spatial dims)
    SLOTS = "slots"  # buffers only: a slot accumulator's f32 values (sized from the shapes at launch)
    BOX = "box"  # box loops: the tile's output positions x the whole extra (reduced) axis of a tensor
    SCAN = "scan"  # buffers only: a vector scan's scratch, sized from the row (chunk) length (lowering/vector_scan.py)
    BLOCKS = "blocks"  # buffers only: one 32-byte block per row of a row tile, rows rounded up to 8 (Brcb)
    #: buffers only: the tile's rows of a named tensor of another row length (`of`: that length, a symbol or an
    #: integer), each padded to a pitch of at least one element more (lowering/emit/gather_rows.py)
    NAMED_ROWS = "named_rows"
    #: buffers only: a fixed PERIOD_CACHE_BYTES holding a whole per-channel `[C]` tensor (plan_period_cache)
    PERIOD = "period"

#: UB bytes of a PERIOD buffer: a per-channel tensor of up to 512 f32 (1024 f16) values is cached per core
PERIOD_CACHE_BYTES = 2048


@dataclass(frozen=True)
class ValType:
    kind: Kind
    dtype: DType
    layout: Layout = Layout.FLAT

    def __str__(self) -> str:
        lay = "" if self.layout is Layout.FLAT or self.kind is Kind.SCALAR else f", {self.layout.value}"
        return f"{self.kind.value}<{self.dtype}{lay}>"


def tile_of(dtype: DType, layout: Layout = Layout.FLAT) -> ValType:
    return ValType(Kind.TILE, dtype, layout)


def scalar_of(dtype: DType) -> ValType:
    return ValType(Kind.SCALAR, dtype)


_SPAN = field(default=UNKNOWN_SPAN, compare=False, repr=False)

# ----------------------------------------------------------------------------- params


@dataclass(frozen=True)
class TensorParam:
    name: str
    dtype: DType
    shape: tuple[str | int, ...]
    #: A GM tensor the kernel declares itself (`p = workspace(f16, Bt, M, N)`): placed in the launch
    #: workspace, written by one stage and read by a later one; never bound to the task.
    workspace: bool = False
    span: Span = _SPAN
    #: A view of a workspace tensor (`hg = view(h, M, G=num_groups, L=N / num_groups)`): the same GM read or
    #: written with other dims by another launch (ascend_dsl/views.py); None for every other tensor.
    view: ViewOf | None = None
    #: Shape symbols a compiler-declared workspace defines for its own shape (the NC1HWC0 route's C1 = ceil(C / 16),
    #: lowering/passes/route_conv5hd.py): bound with the views' symbols (views.bind_symbols); empty for the rest.
    dims: tuple[DimDef, ...] = ()


@dataclass(frozen=True)
class DimDef:
    """A shape symbol a view defines: `L = N / num_groups` is DimDef("L", ("N",), ("num_groups",)); factors are
    shape symbols, integer scalar parameters or positive integer literals. `ceil`: the quotient rounded up (a
    compiler-declared workspace's padded dim, TensorParam.dims), not an exact division."""

    name: str
    num: tuple[str | int, ...]
    den: tuple[str | int, ...] = ()
    span: Span = _SPAN
    ceil: bool = False


@dataclass(frozen=True)
class ViewOf:
    """What a view reads: its workspace tensor `base`, and the shape symbols the view defines (in order)."""

    base: str
    defs: tuple[DimDef, ...] = ()


@dataclass(frozen=True)
class ScalarParam:
    name: str
    dtype: DType
    default: float | int | None = None
    span: Span = _SPAN


Param = TensorParam | ScalarParam

# ----------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Const:
    value: float | int
    type: ValType
    span: Span = _SPAN


@dataclass(frozen=True)
class Ref:
    """A local value (tile or scalar) or a scalar parameter."""

    name: str
    type: ValType
    span: Span = _SPAN


@dataclass(frozen=True)
class GroupGather:
    """A row gather from a table with the loop's leading row dims: `w` is [*rows[:-1], R, *row] and loop row
    g = (a, k) reads w row (g / K) * R + n, n = idx[g], or idx[g % K] when `periodic` (idx is [K]: index_select)."""

    k: str  # the loop's last row symbol
    r: str  # the picked dim
    row: str  # the row's symbols ("C", "H * W")
    periodic: bool


@dataclass(frozen=True)
class TileIndex:
    """`x[t]`: tile `t` of a 1-D tensor (flat elements, or one value per row in a row loop);
    `x[r, :]` (`rows`): whole rows of a 2-D tensor; `w[:]` (`var` None): all of a 1-D tensor over D."""

    var: str | None
    rows: bool = False
    span: Span = _SPAN
    #: `w[r]` of a tensor over the trailing split symbols (a `[C]` tensor under `split(N * C)`): row r
    #: reads w[r % period]; `period` is the product of those symbols (e.g. "C").
    period: str | None = None
    #: `s[r]` reading the combined totals of a slot accumulator `s` (SlotAccDecl) instead of a tensor.
    acc: bool = False
    #: `w[idx[r], :]` (a row gather, ascend_dsl/parser_index.py): row i of the tile is row `idx[i]` of `w`;
    #: `by` names the integer tensor over the loop's rows that holds the row numbers.
    by: str | None = None
    #: a tensor over a run of the split's symbols that is not the last (ascend_dsl/parser_broadcast.py: `a[r, :]` of
    #: `[A, D]` or `a[r]` of `[A]` under `split(A * R)`): row r reads w[(r / stride) % period]; `stride` is the
    #: product of the split's symbols after the run (e.g. "R").
    stride: str | None = None
    #: a row gather along a middle dim (ascend_dsl/parser_index.py; GroupGather).
    group: GroupGather | None = None

    def __str__(self) -> str:
        if self.by is not None:
            return f"{self.by}[{self.var}], :"
        return ":" if self.var is None else f"{self.var}, :" if self.rows else self.var


@dataclass(frozen=True)
class Load:
    tensor: str
    index: TileIndex
    type: ValType
    span: Span = _SPAN


@dataclass(frozen=True)
class Op:
    """An operation from the op registry (`ascend_dsl.ops`), e.g. add, exp, select, cast."""

    op: str
    args: tuple[Expr, ...]
    type: ValType
    span: Span = _SPAN


@dataclass(frozen=True)
class RowLength:
    """The row length D of the enclosing row loop (a runtime shape) as a scalar operand."""

    type: ValType
    span: Span = _SPAN


@dataclass(frozen=True)
class RowValue:
    """Inside a PerRow: the current row's per-row value (read by the scalar unit) as a scalar operand."""

    type: ValType
    span: Span = _SPAN


@dataclass(frozen=True)
class VectorMath:
    """A scalar op the scalar unit lacks (sqrt, exp, pow, ...), computed on one element by its vector
    instruction(s) (`ops.OpInfo.vector_math`; chosen by lowering/passes/select_instructions.py)."""

    op: str
    args: tuple[Expr, ...]
    type: ValType
    span: Span = _SPAN


Expr = Const | Ref | Load | Op | RowLength | RowValue | VectorMath

# ----------------------------------------------------------------------------- statements


@dataclass(frozen=True)
class Assign:
    name: str
    value: Expr
    span: Span = _SPAN


@dataclass(frozen=True)
class Store:
    tensor: str
    index: TileIndex
    value: Expr
    span: Span = _SPAN


@dataclass(frozen=True)
class SplitLoop:
    """`for blk in split(N, cores=AIV)`; `cores` None means every core of the kind."""

    var: str
    extent: tuple[str, ...]
    core_kind: str
    cores: int | None
    body: tuple[Stmt, ...]
    span: Span = _SPAN


class Position(Enum):
    VECIN = "VECIN"
    VECOUT = "VECOUT"
    VECCALC = "VECCALC"


class BufferRole(Enum):
    """What a UB buffer holds: a tile value, or the scratch of a reduction or an accumulator."""

    VALUE = "value"  # a tile value of the body (loads, stored values, temporaries)
    REDUCE_TMP = "reduce_tmp"  # ReduceSum/Max/Min scratch (one row)
    REDUCE_OUT = "reduce_out"  # ReduceSum/Max/Min result (one 32-byte block)
    ACC_TMP = "acc_tmp"  # the scratch of reducing an accumulated tile
    ACC_SLOT = "acc_slot"  # this core's running value of accumulator `of` (an f32 block)
    ACC_CAST = "acc_cast"  # a 16-bit tile reduction widened to f32 before it is folded
    SLOT_VECTOR = "slot_vector"  # this core's partial vector of slot accumulator `of`
    SLOT_TOTALS = "slot_totals"  # the totals of slot accumulator `of`, read per row (s[r])
    BOX_TMP = "box_tmp"  # the halving tree of a box reduction whose box is read again
    PROD_TMP = "prod_tmp"  # an f32 copy of a chunk whose product is folded (the halving tree of Mul)
    SCAN_TMP = "scan_tmp"  # a vector scan's matrix, f32 row and gather tables (`of`: fwd / rev, + compensated)
    ROW_VECTOR = "row_vector"  # `w[:]` read by every row of a row loop: copied in once per core (hoist_row_vectors)
    ROW_VALUE_BLOCKS = "row_value_blocks"  # per-row values spread to a 32-byte block each (plan_row_value_blocks)
    FOLD_TMP = "fold_tmp"  # row reductions of a whole tile: its rows' repeat columns folded (emit/tile_fold.py)
    ARG_INDEX = "arg_index"  # argmax / argmin: the tile's row indices as i32 before the i64 Cast (emit/arg_reduce.py)
    PERIOD_CACHE = "period_cache"  # a per-channel tensor `of` read by `w[r]`: copied in once per core (plan_period_cache)


@dataclass(frozen=True)
class Buffer:
    """A UB allocation per tile: a TQue (VECIN/VECOUT) with `num` buffers, or a TBuf (VECCALC).

    `bits` is the storage per tile element: 8 * dtype size, or 1 for comparison masks; `of` names the
    accumulator an ACC_SLOT / SLOT_VECTOR / SLOT_TOTALS buffer belongs to."""

    name: str
    position: Position
    dtype: DType
    num: int
    bits: int
    layout: Layout = Layout.FLAT
    role: BufferRole = BufferRole.VALUE
    of: str | None = None
    span: Span = _SPAN

    def bytes_for(self, tile_elems: int) -> int:
        if self.layout in (Layout.BLOCK, Layout.SLOTS):  # SLOTS: at least one block; the host checks the rest
            return 32
        if self.layout is Layout.PERIOD:
            return PERIOD_CACHE_BYTES
        if self.layout is Layout.BLOCKS:  # tile_elems: rows
            return -(-tile_elems // 8) * 8 * 32
        if self.layout is Layout.SCAN:  # tile_elems: the chunk length (lowering/vector_scan.py: segments of 128)
            return (641 if (self.of or "").endswith("+") else 513) * 8 * -(-tile_elems // 1024) * 4
        if self.layout is Layout.REPEATS:  # 2 x ceil(tile bytes / 256) elements (ReduceMax/Min keep value + index)
            tile_elems = 2 * -(-tile_elems * self.bits // (8 * 256))
        raw = -(-tile_elems * self.bits // 8)
        return -(-raw // 32) * 32


class LoopKind(Enum):
    """What one tile of a TileLoop covers (the kind of its `shape` payload)."""

    FLAT = "flat"  # a run of consecutive elements of the core's share
    ROWS = "rows"  # whole rows of the tensors [*rows, *row] (each row padded in UB)
    PLANES = "planes"  # whole planes (or bands of them) of [*rows, *spatial] tensors: pooling windows
    BOX = "box"  # output positions x the whole extra (reduced, non-last) axis of the box tensors
    CHUNKS = "chunks"  # column chunks of one row: a pass of a chunked row loop (RowTiles.chunked)


@dataclass(frozen=True)
class FlatTiles:
    """Flat loops: `for t in tile(blk)` over a 1-D view of the tensors."""

    kind: ClassVar[LoopKind] = LoopKind.FLAT


@dataclass(frozen=True)
class RowTiles:
    """Row loops: tensors [*rows, *row] under `split(<rows>)` are rows of prod(row) elements.

    `chunked` (lowering/passes/plan_chunks.py): the variant for rows longer than UB, or why there is none."""

    rows: tuple[str, ...]
    row: tuple[str, ...]
    chunked: ChunkPlan | NoChunk | None = field(default=None, compare=False)
    kind: ClassVar[LoopKind] = LoopKind.ROWS


@dataclass(frozen=True)
class WindowPlan:
    """How a plane loop pools (lowering/passes/plan_windows.py): the window's kernel, stride, padding and
    dilation operands, the spatial dims of the input and output planes, and `rows_path`: input rows land
    32-byte aligned in UB so the taps along the outer spatial dims are whole-row vector ops."""

    window: tuple[Operand, ...]
    in_dims: tuple[str | int, ...]
    out_dims: tuple[str | int, ...]
    rows_path: bool


@dataclass(frozen=True)
class PlaneTiles:
    """Plane loops: [*rows, *spatial] tensors under `split(<rows>)` with `rank` trailing spatial dims."""

    rank: int
    plan: WindowPlan | None = None
    kind: ClassVar[LoopKind] = LoopKind.PLANES


@dataclass(frozen=True)
class BoxPlan:
    """How a box loop runs (lowering/passes/plan_box.py): UB box rows are `pitch_granule` elements apart
    multiples (32 bytes for every box dtype); `reread`: the box reductions whose box is read again (their
    halving tree goes through a scratch box); `vec_bytes` of vector repeats per `in_bytes` read decide
    `whole_row_shares` (shares of whole rows of the reduced axis, long bursts, on fewer cores);
    `whole_axis`: the loop keeps the box's shape (a box meets a per-position value or is stored), so a tile
    holds the whole extra axis in UB at once (one chunk) and runs its ops in program order."""

    pitch_granule: int
    reread: tuple[str, ...]
    vec_bytes: int
    in_bytes: int
    whole_row_shares: bool
    whole_axis: bool = False


@dataclass(frozen=True)
class BoxTiles:
    """Box loops (a split over the dims of a tensor but one, not its last): the `axis` of that extra dim
    in the box tensors and its shape symbol `dim`, e.g. (1, "R") for x: [A, R, C] under split(A * C)."""

    axis: int
    dim: str
    plan: BoxPlan | None = None
    kind: ClassVar[LoopKind] = LoopKind.BOX


@dataclass(frozen=True)
class ChunkTiles:
    """The passes of a chunked row loop: a tile is a column chunk of the current row."""

    kind: ClassVar[LoopKind] = LoopKind.CHUNKS


TileShape = FlatTiles | RowTiles | PlaneTiles | BoxTiles | ChunkTiles
FLAT_TILES = FlatTiles()
CHUNK_TILES = ChunkTiles()


@dataclass(frozen=True)
class TileLoop:
    """`for t in tile(blk, size=auto|N, buffers=B, chunk=C)`; `shape` says what a tile is. Lowering fills
    `buffers_decl` and, where the tile size is static (flat loops), `max_tile`. `chunk` (row loops): the
    most elements per column chunk when a row does not fit UB (None: the largest that fits each pass)."""

    var: str
    over: str
    size: int | None
    buffers: int
    body: tuple[Stmt, ...]
    shape: TileShape = FLAT_TILES
    buffers_decl: tuple[Buffer, ...] = ()
    max_tile: int | None = None
    span: Span = _SPAN
    chunk: int | None = None

    @property
    def kind(self) -> LoopKind:
        return self.shape.kind


class StageKind(Enum):
    COPYIN = "copyin"
    COMPUTE = "compute"
    COPYOUT = "copyout"


@dataclass(frozen=True)
class Stage:
    kind: StageKind
    body: tuple[Stmt, ...]
    span: Span = _SPAN


@dataclass(frozen=True)
class CopyIn:
    buffer: str
    tensor: str
    index: TileIndex
    span: Span = _SPAN


@dataclass(frozen=True)
class CopyOut:
    tensor: str
    index: TileIndex
    buffer: str
    span: Span = _SPAN


Operand = str | Const | Ref | Op  # a buffer name, or a scalar: an immediate, a parameter, arithmetic on them


@dataclass(frozen=True)
class VecOp:
    """One AscendC vector instruction over the current tile (count form).

    `api` is the AscendC function (Add, Muls, Exp, Compare, Select, Cast, Duplicate, ...);
    `attrs` holds enum arguments such as ("cmp", "GT") or ("round", "CAST_NONE")."""

    api: str
    dst: str
    srcs: tuple[Operand, ...]
    attrs: tuple[tuple[str, str], ...] = ()
    span: Span = _SPAN


@dataclass(frozen=True)
class PerRow:
    """Row loops: `ops` run row by row over the D elements of row i (whole-row buffers at row i, row vectors
    whole); `col`, a per-row buffer, gives each row its value (RowValue, read by the scalar unit), or None
    when a row vector meets every row."""

    col: str | None
    ops: tuple[VecOp, ...]
    span: Span = _SPAN


@dataclass(frozen=True)
class AccDecl:
    """Kernel scope, before the split loop that updates it: `total = 0.0`. An accumulator holds one
    f32 value per core while its split loop runs; when the loop ends the per-core values are combined
    across cores (GM workspace + SyncAll) and every core holds the total."""

    name: str
    init: float
    span: Span = _SPAN


class Combine(Enum):
    """How a running value folds in the next one."""

    ADD = "add"
    MAX = "max"
    MIN = "min"
    MUL = "mul"


@dataclass(frozen=True)
class Accumulate:
    """In a tile loop: `total += sum(v)` (ADD) or `m = max(m, max(v))` (MAX/MIN): the reduction op `reduce`
    (reduce_sum/max/min; reduce_prod in chunked passes) turns the tile `value` into one value, folded into
    the running value with `combine`. `online_sum` (chunked passes): this is the running max of an online
    max/sum, and the running sum of that name is rescaled by exp(old max - new max) when the max grows.
    `moments` (chunked passes, lowering/passes/chunk_moments.py): (mean, m2, step) of a single-pass mean /
    centred second moment pair: step "shift" merges the chunk before into the row's (count, mean, M2) and
    sets the shift, "sum" and "sq" reduce the chunk's deviations from the shift and their squares.
    `fold_in_place` (lowering/passes/plan_flat_folds.py): `value` is a flat tile nothing reads again before it is
    written, so the reduction folds its halves into the tile itself."""

    name: str
    combine: Combine
    reduce: str
    value: Expr
    online_sum: str | None = None
    span: Span = _SPAN
    moments: tuple[str, str, str] | None = None
    fold_in_place: bool = False


@dataclass(frozen=True)
class SlotAccumulate:
    """In a row loop: `s[r] += v` of a slot accumulator (SlotAccDecl): each row's value of `value` (one per
    row) is added into the row's slot."""

    name: str
    value: Expr
    span: Span = _SPAN


@dataclass(frozen=True)
class ScalarAssign:
    """Kernel scope: `norm = sqrt(total)` after a split loop, evaluated once per core; `launch` (set by
    lowering/passes/hoist_scalars.py): the value depends only on scalar parameters, shape symbols and
    constants, so the host computes it when it launches the kernel (`bc1 = 1.0 - beta1 ** step`)."""

    name: str
    value: Expr
    span: Span = _SPAN
    launch: bool = False


@dataclass(frozen=True)
class ScalarStore:
    """Kernel scope, after the split loops: `store(loss[0], total / N)`, written once (by core 0)."""

    tensor: str
    value: Expr
    span: Span = _SPAN


@dataclass(frozen=True)
class ChainStage:
    """One stage of a CHAIN kernel (lowering/passes/plan_stages.py): a cube loop as a kernel of its own (lowered
    by the pipeline as a MIX kernel after plan_stages), the synchronisation before it (`"SyncAll"` when it reads a workspace tensor an earlier stage wrote, else
    `""`) and the workspace tensors it reads and writes."""

    index: int
    kernel: Kernel
    sync: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    span: Span = _SPAN

    @property
    def body(self) -> tuple[Stmt, ...]:
        """The stage's statements (so `walk` sees the stores and loads of every stage)."""
        return self.kernel.body


@dataclass(frozen=True)
class Launch:
    """One launch of a LAUNCHES kernel (lowering/passes/partition_launches.py): a run of the kernel's split loops
    of one kind (cube loops, one conv loop, or vector loops with their kernel-scope statements) as a kernel of its
    own, lowered by the whole pipeline; `reads`/`writes`: the workspace tensors it shares with other launches
    (parameters of its kernel, GM buffers the host allocates)."""

    index: int
    kernel: Kernel
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    span: Span = _SPAN

    @property
    def body(self) -> tuple[Stmt, ...]:
        """The launch's statements (so `walk` sees the stores and loads of every launch)."""
        return self.kernel.body


@dataclass(frozen=True)
class FlashBound:
    """An integer offset of a key from its query, `const` + the sum of `sign * parameter` over `params` ((sign,
    name) pairs of i32 scalar parameters): a bound of a positional band mask."""

    const: int
    params: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True)
class FlashMask:
    """The scores a FLASH kernel keeps: `select(load(tensor[blk]) <compare> threshold, s * scale, fill)`, or with
    `tensor` None a band from positions, max(lo) <= key j - query i <= min(hi) (empty `lo` / `hi`: unbounded):
    the causal mask `select(col_index() <= row_index(), s * scale, fill)` is hi = (0,); a sliding window adds a lo
    (lowering/passes/plan_flash.py). The kernel skips the key blocks wholly outside the band and masks the blocks
    that straddle its edges; the others become `fill`."""

    tensor: str | None
    compare: str  # "gt", "ge", "ne", ...: the Op name of the comparison ("" for a band)
    threshold: float
    fill: float
    lo: tuple[FlashBound, ...] = ()
    hi: tuple[FlashBound, ...] = ()


@dataclass(frozen=True)
class FlashRing:
    """plan_flash_ring's decision for a FLASH kernel: `taken`, the AIC-driven ring (the cube's low-level API on the
    AIC, S and P handed between the AIC and its two AIV through GM slots and cross-core flags; emit/flash_ring.py)
    at the shapes its host tiling accepts, the Matmul-API form (emit/flash.py) at the others; else that form
    always. `why` says which and why (printed by --dump-after)."""

    taken: bool
    why: str


@dataclass(frozen=True)
class FlashAttention:
    """A FLASH kernel's body (lowering/passes/plan_flash.py): softmax(Q K^T * scale [masked]) @ V per
    (batch, block of `bq` query rows), K/V walked in blocks of `bk` keys with an online softmax (the S x S
    scores never leave the core). `bq`/`bk` are the largest block sizes; the host shrinks them for small
    shapes or to fit UB. `stages` are the two CHAIN stages it replaces (printed, and walked as `body`)."""

    q: str
    k: str
    v: str
    o: str
    batch: tuple[str, ...]
    m: str
    n: str
    dk: str
    dv: str
    scale: Const | Ref
    mask: FlashMask | None
    bq: int
    bk: int
    stages: tuple[ChainStage, ...]
    span: Span = _SPAN
    ring: FlashRing | None = None  # lowering/passes/plan_flash_ring.py: the AIC-driven ring or the Matmul-API form

    @property
    def body(self) -> tuple[Stmt, ...]:
        return self.stages


@dataclass(frozen=True)
class ScalarLoad:
    """Kernel scope: `s = load(scale[0])`, element 0 of a GM tensor read once by every core (a
    1-element tensor broadcast like a scalar parameter)."""

    name: str
    tensor: str
    span: Span = _SPAN


@dataclass(frozen=True)
class SlotAccDecl:
    """Kernel scope, before the split loop that updates it: `s = zeros(C)` (or `zeros(N * G)`). A
    vector accumulator of `prod(slots)` f32 values for a row loop; row `r` adds into slot
    `(r // rows_per_slot) % prod(slots)`. `zeros(C)` under `split(N * C)` (trailing split symbols):
    row n*C + c -> slot c, like a per-channel tensor. `zeros(N * G)` (leading split symbols, then int
    scalar parameters): consecutive blocks of `prod(rest of the extent) / prod(groups)` rows share a
    slot, e.g. row n*C + c -> n*G + c // (C / G). `rows_per_slot` holds the symbols of that
    numerator, `groups` the scalar parameters dividing it (both empty: one row per slot)."""

    name: str
    slots: tuple[str, ...]
    rows_per_slot: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    span: Span = _SPAN


Stmt = (Assign | Store | SplitLoop | TileLoop | Stage | CopyIn | CopyOut | VecOp | PerRow | AccDecl | Accumulate
        | SlotAccumulate | ScalarAssign | ScalarStore | ScalarLoad | SlotAccDecl)
#: Statements of a tile body that carry a value expression.
VALUE_STMTS = (Assign, Store, Accumulate, SlotAccumulate)

# ----------------------------------------------------------------------------- kernel


class KernelKind(Enum):
    """How a kernel is emitted: one emitter module and template family each (lowering/emit/)."""

    VECTOR = "vector"  # flat and row tile loops, any number of split loops (rows longer than UB: chunked)
    WINDOW = "window"  # one plane loop: pooling windows
    RESIZE = "resize"  # one plane loop: planes resampled (nearest / linear) to the stored size
    GRID = "grid"  # one plane loop: planes sampled at a grid tensor's positions (grid_sample)
    GATHER_MIDDLE = "gather_middle"  # one row loop whose only work is torch.gather along a middle dim (plan_gather_middle.py)
    SCATTER_SHARED = "scatter_shared"  # one row loop whose only work is index_copy by a shared index row (plan_scatter_shared.py)
    ANTIALIAS = "antialias"  # one plane loop: antialiased resize (F.interpolate(..., antialias=True))
    BOX = "box"  # one box loop: reductions over a non-last dim
    MIX = "mix"  # a cube loop: matmul on the cube unit, its epilogue on the vector units
    CHAIN = "chain"  # several cube loops joined by workspace tensors: stages of one MIX kernel (plan_stages.py)
    FLASH = "flash"  # a CHAIN of the two attention stages, fused: K/V blocks and an online softmax (plan_flash.py)
    CONV = "conv"  # a conv loop: implicit-GEMM convolution on the cube unit (AIC only)
    CONVERT5HD = "convert5hd"  # compiler-written: x / w of a conv to NC1HWC0 on the vector cores (route_conv5hd.py)
    LAUNCHES = "launches"  # loops of different kinds joined by workspace tensors: kernels launched in order


@dataclass(frozen=True)
class Kernel:
    name: str
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    type_args: tuple[tuple[str, DType], ...] = ()
    type_options: tuple[tuple[str, tuple[DType, ...]], ...] = ()
    #: How the kernel is emitted (lowering/passes/select_kind.py); None before that pass.
    kind: KernelKind | None = None
    span: Span = _SPAN
    #: A matmul split whose epilogue reduces whole rows: the same text cut into launches, which the host runs when
    #: the fused kernel's tiling finds no base block (ascend_dsl/row_fallback.py); `fallback_miss`: why none.
    fallback: Kernel | None = field(default=None, repr=False, compare=False)
    fallback_miss: str = field(default="", repr=False, compare=False)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def tensors(self) -> tuple[TensorParam, ...]:
        return tuple(p for p in self.params if isinstance(p, TensorParam))

    @property
    def scalars(self) -> tuple[ScalarParam, ...]:
        return tuple(p for p in self.params if isinstance(p, ScalarParam))

    @property
    def outputs(self) -> tuple[TensorParam, ...]:
        stored = {s.tensor for s in walk(self.body) if isinstance(s, (Store, CopyOut, ScalarStore))}
        stored |= {s.out for s in self.body if isinstance(s, ConvLoop)}
        stored |= {n for s in self.body if isinstance(s, Convert5hd) for n in (s.x5hd, s.w5hd)}
        return tuple(p for p in self.tensors if p.name in stored and not p.workspace)

    @property
    def inputs(self) -> tuple[TensorParam, ...]:
        outs = {p.name for p in self.outputs}
        return tuple(p for p in self.tensors if p.name not in outs and not p.workspace)

    @property
    def bound_tensors(self) -> tuple[TensorParam, ...]:
        """The tensors bound to the task (inputs and outputs, in parameter order): all but the workspaces."""
        return tuple(p for p in self.tensors if not p.workspace)

    @property
    def workspaces(self) -> tuple[TensorParam, ...]:
        """The GM tensors the kernel declares itself (between stages); not bound to the task."""
        return tuple(p for p in self.tensors if p.workspace and p.view is None)

    @property
    def views(self) -> tuple[TensorParam, ...]:
        """Views of workspace tensors (ascend_dsl/views.py): no GM of their own."""
        return tuple(p for p in self.tensors if p.view is not None)

    @property
    def phases(self) -> tuple[SplitLoop, ...]:
        """The split loops, in order; each ends with a cross-core combine of its accumulators."""
        return tuple(s for s in self.body if isinstance(s, SplitLoop))

    @property
    def accumulators(self) -> tuple[AccDecl, ...]:
        return tuple(s for s in self.body if isinstance(s, AccDecl))

    @property
    def slot_accumulators(self) -> tuple[SlotAccDecl, ...]:
        return tuple(s for s in self.body if isinstance(s, SlotAccDecl))

    @property
    def symbols(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for p in self.tensors:
            for d in p.shape:
                if isinstance(d, str):
                    seen.setdefault(d)
        return tuple(seen)


def children(stmt: Stmt) -> tuple[Stmt, ...]:
    return getattr(stmt, "body", ())


def walk(stmts: tuple[Stmt, ...]):
    """Pre-order walk over statements (not expressions)."""
    for s in stmts:
        yield s
        yield from walk(children(s))


def walk_expr(e: Expr):
    yield e
    if isinstance(e, Op):
        for a in e.args:
            yield from walk_expr(a)
    elif isinstance(e, VectorMath):
        for a in e.args:
            yield from walk_expr(a)


# ----------------------------------------------------------------------------- cube / vector (MIX kernels)


@dataclass(frozen=True)
class Matmul:
    """`acc = matmul(a[blk], b[blk], bias=bias, transpose_a=False, transpose_b=False)` in `with cube:`.

    The fp32 accumulator of one output block, computed on the cube unit (AIC) from f16/bf16 operands.
    `base` holds explicit base block sizes (baseM, baseN, baseK); None lets the planner choose."""

    name: str
    a: str
    b: str
    bias: str | None = None
    transpose_a: bool = False
    transpose_b: bool = False
    base: tuple[int | None, int | None, int | None] = (None, None, None)
    span: Span = _SPAN


@dataclass(frozen=True)
class CubePlan:
    """Static cube tiling decisions (lowering/passes/plan_cube.py); the host code derives the rest.

    `base_*` are the largest base block sizes (the host shrinks them for small shapes); `whole_rows`:
    the epilogue reduces along rows, so a base block spans all N columns; `direct`: no epilogue, the
    cube writes the accumulator to GM itself (IterateAll); `split_k_min` (lowering/passes/plan_split_k.py):
    0 = K is never split, else split-K is allowed and each K slice is at least this long (the host picks
    the number of slices from the runtime shapes); `band_rows` (plan_cube.py): 0 = a base block goes into UB whole
    (GetTensorC into a VECIN queue), else the cube writes each block to the AIV's own GM workspace slot and the
    epilogue runs on bands of at most this many rows of it (double-buffered), so the UB no longer caps the block."""

    base_m: int
    base_n: int
    base_k: int
    whole_rows: bool = False
    direct: bool = False
    split_k_min: int = 0
    band_rows: int = 0


@dataclass(frozen=True)
class CubeLoop:
    """`for blk in split([Bt,] M, N, cores=AIC)`: output blocks of C = A @ B assigned to cores. `batch`: the
    batch dims, e.g. ("B", "H") for `split(B * H, M, N, cores=AIC)` over `[B, H, M, K]` operands (() if none).

    `body` is (Matmul, TileLoop): the `with cube:` block and the `with vector:` epilogue, a row tile
    over one base block of the accumulator (which enters it as `acc = load(acc[blk, :])`). `k` is the
    reduction symbol. Lowered to a MIX kernel (Matmul API driven from the vector cores)."""

    var: str
    batch: tuple[str, ...]
    m: str
    n: str
    k: str
    body: tuple[Stmt, ...]
    plan: CubePlan | None = None
    span: Span = _SPAN

    @property
    def matmul(self) -> Matmul:
        return self.body[0]

    @property
    def epilogue(self) -> TileLoop:
        return self.body[1]


def cube_loop(kernel: Kernel) -> CubeLoop | None:
    """The kernel's cube loop, if it is a MIX kernel."""
    return next((s for s in kernel.body if isinstance(s, CubeLoop)), None)


# ----------------------------------------------------------------------------- convolution (CONV kernels)


@dataclass(frozen=True)
class Conv:
    """`acc = conv2d(x[blk], w[blk], stride=S, padding=P, dilation=D, bias=b)` in `with cube:`.

    x is [N, C, *spatial], w is [K, C, *kernel] (f16/bf16), the accumulator f32 [N, K, *out]; one int per
    spatial dim for stride, padding and dilation; `bias` names an f32 [K] tensor added to the accumulator;
    `groups` (a literal or a shape symbol, e.g. C for depthwise) splits C and K into groups: w is [K, C/groups, ...].
    `transposed` (conv_transpose1d/2d/3d): PyTorch's transposed convolution, w is [C, K/groups, *kernel] and
    `output_padding` (one int per spatial dim) adds to the output's size; out[o] += w[k] * x[i] where
    o = i * stride - padding + k * dilation."""

    name: str
    x: str
    w: str
    rank: int
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]
    bias: str | None = None
    groups: int | str = 1
    span: Span = _SPAN
    transposed: bool = False
    output_padding: tuple[int, ...] = ()
    #: The NC1HWC0 route (lowering/passes/route_conv5hd.py): x and w as converted by the launch before this one,
    #: x5hd [N][C1][H][W][16] and w5hd [K][C1][KH][KW][16] (workspace tensors); None on the other paths.
    x5hd: str | None = None
    w5hd: str | None = None


@dataclass(frozen=True)
class ConvPlan:
    """Static limits of the cube tiles (lowering/passes/plan_conv.py); the host picks the sizes at run time:
    output channels per tile <= max_m, GEMM columns (output pixels, rows padded to 16) <= max_n, GEMM depth
    (input channels x kernel taps, padded to 16) <= max_k."""

    max_m: int
    max_n: int
    max_k: int


@dataclass(frozen=True)
class ConvLoop:
    """`for blk in split(N, K, OH, OW, cores=AIC)` holding `with cube: acc = conv2d(...)` and a `with vector:`
    block that stores the accumulator (optionally through relu, cast to `out_dtype`) into `out`. Lowered to a
    CONV kernel (lowering/emit/conv.py)."""

    var: str
    dims: tuple[str, ...]
    conv: Conv
    out: str
    out_dtype: DType
    relu: bool
    plan: ConvPlan | None = None
    span: Span = _SPAN


@dataclass(frozen=True)
class Convert5hd:
    """Compiler-written (lowering/passes/route_conv5hd.py), the only statement of a CONVERT5HD kernel: x
    [N, C, H, W] -> x5hd [N][C1][H][W][16] and w [K, C, KH, KW] -> w5hd [K][C1][KH][KW][16] (C1 = ceil(C / 16),
    the missing channels zero), for the conv launch after it."""

    x: str
    w: str
    x5hd: str
    w5hd: str
    span: Span = _SPAN


def conv_loop(kernel: Kernel) -> ConvLoop | None:
    """The kernel's conv loop, if it is a CONV kernel."""
    return next((s for s in kernel.body if isinstance(s, ConvLoop)), None)


# ----------------------------------------------------------------------------- chunked row loops (rows longer than UB)


@dataclass(frozen=True)
class RowLoad:
    """`name = load(t[r])`: a per-row (or per-channel: `period`) value read by the scalar unit; `slot`:
    `s[r]` of a slot accumulator, the row's slot total from this core's totals in the GM workspace."""

    name: str
    tensor: str
    period: str | None
    slot: bool = False
    span: Span = _SPAN
    stride: str | None = None  # TileIndex.stride: row r reads t[(r / stride) % period]


@dataclass(frozen=True)
class RowScalar:
    """A per-row value computed on the scalar unit (its operands are `<name>Row` scalar refs)."""

    name: str
    value: Expr
    span: Span = _SPAN


@dataclass(frozen=True)
class RowStore:
    """`store(out[r], v)` of a per-row value: one element per row."""

    tensor: str
    value: Expr
    span: Span = _SPAN


@dataclass(frozen=True)
class RowAccumulate:
    """`acc += sum(v)` (or running max/min) of a row loop: the row's value folded into this core's
    running value (`<acc>Core_`), handed to the cross-core combine after the rows."""

    name: str
    combine: Combine
    value: Expr
    span: Span = _SPAN


@dataclass(frozen=True)
class RowSlotAccumulate:
    """`s[r] += v` of a row loop: the row's value folded into its slot of this core's partial vector of `s`."""

    name: str
    value: Expr
    span: Span = _SPAN


@dataclass(frozen=True)
class RunPass:
    """Run chunked pass `index` over the row's column chunks."""

    index: int


RowStep = RowLoad | RowScalar | RowStore | RowAccumulate | RowSlotAccumulate | RunPass


@dataclass(frozen=True)
class Fold:
    """A value folded across chunks (or rows) with `combine`; `online_sum` and `moments` as in Accumulate."""

    name: str
    combine: Combine
    online_sum: str | None = None
    moments: tuple[str, str] | None = None
    #: A scan's carry into this core's columns when a row is split over a core group: the group combine folds only
    #: the partials of the cores "before" (forward scans) or "after" (reverse scans) this one (plan_chunks.py).
    prefix: str | None = None


@dataclass(frozen=True)
class ChunkPass:
    """A lowered flat tile loop over the chunks of one row, and the reductions it folds; after the pass
    `<name>Row_` holds each one's value over the whole row. `max_chunk`: the largest chunk (elements,
    whole 256-element repeats) it fits in UB beside the row-level blocks."""

    loop: TileLoop
    reductions: tuple[Fold, ...]
    max_chunk: int = 0
    #: Per scan of the loop (in order): the per-row value its carry starts from on a core of a row group.
    scan_offsets: tuple[str, ...] = ()
    #: Runs only when a row is split over a core group (the scans' carries: prefix folds).
    group_only: bool = False


@dataclass(frozen=True)
class ChunkPlan:
    """What runs per row when one row does not fit UB (lowering/passes/plan_chunks.py): `steps` in order, the
    `passes` they run, the per-row values (a float member each), the dtypes of per-row stores (a 32-byte
    UB block each), the accumulators across cores and slot accumulators the loop updates."""

    steps: tuple[RowStep, ...]
    passes: tuple[ChunkPass, ...]
    row_values: tuple[str, ...]
    store_dtypes: tuple[DType, ...]
    accumulators: tuple[Fold, ...] = ()
    slot_accumulators: tuple[str, ...] = ()
    #: Rows may be split over a group of cores when there are fewer rows than cores (plan_row_groups.py).
    row_groups: bool = False


@dataclass(frozen=True)
class NoChunk:
    """Why a row loop has no chunked variant (the host tiling reports it when a row does not fit UB)."""

    reason: str


def row_ref(name: str, span: Span = UNKNOWN_SPAN) -> Ref:
    """The per-row scalar `<name>Row` of a chunked row loop."""
    return Ref(f"{name}Row", scalar_of(DType.F32), span)
