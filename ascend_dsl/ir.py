"""The typed, frozen IR shared by the front end, the interpreter and the lowering passes.

    Kernel    = (name, params: Param*, body: Stmt*, type_args)
    Param     = TensorParam(name, dtype, shape: Dim*) | ScalarParam(name, dtype, default)
    Stmt      = SplitLoop(var, extent: Sym*, cores)          -- one contiguous share per core
              | TileLoop(var, over, size, buffers, ...plan)  -- UB tiles of a core's share
              | Assign(name, Expr) | Store(tensor, index, Expr)
              -- introduced by lowering passes:
              | Stage(kind, Stmt*) | CopyIn(buffer, tensor, index) | CopyOut(tensor, index, buffer)
              | VecOp(api, dst, Operand*)
              -- kernel scope, around the split loops (cross-core accumulators):
              | AccDecl(name, init) | ScalarAssign(name, Expr) | ScalarStore(tensor, Expr)
              | Accumulate(name, combine, reduce, Expr)       -- in a tile loop: total += sum(v)
              | SlotAccDecl(name, slots, rows_per_slot, groups)  -- s = zeros(C): one f32 per slot;
                in a row loop s[r] += sum(v, axis=1) (Accumulate, reduce "slots"), read later as s[r]
    Expr      = Const(value) | Ref(name) | Load(tensor, index) | Op(op, Expr*)

Every node carries a `span` (ignored by equality) and every expression a `type`. Nodes are
immutable; passes build new trees with `dataclasses.replace`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

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
    span: Span = _SPAN


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

    def __str__(self) -> str:
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


Expr = Const | Ref | Load | Op

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


@dataclass(frozen=True)
class Buffer:
    """A UB allocation per tile: a TQue (VECIN/VECOUT) with `num` buffers, or a TBuf (VECCALC).

    `bits` is the storage per tile element: 8 * dtype size, or 1 for comparison masks."""

    name: str
    position: Position
    dtype: DType
    num: int
    bits: int
    layout: Layout = Layout.FLAT
    span: Span = _SPAN

    def bytes_for(self, tile_elems: int) -> int:
        if self.layout in (Layout.BLOCK, Layout.SLOTS):  # SLOTS: at least one block; the host checks the rest
            return 32
        if self.layout is Layout.REPEATS:  # 2 x ceil(tile bytes / 256) elements (ReduceMax/Min keep value + index)
            tile_elems = 2 * -(-tile_elems * self.bits // (8 * 256))
        raw = -(-tile_elems * self.bits // 8)
        return -(-raw // 32) * 32


@dataclass(frozen=True)
class TileLoop:
    """`for t in tile(blk, size=auto|N, buffers=B)`. Lowering fills `buffers_decl` and `max_tile`."""

    var: str
    over: str
    size: int | None
    buffers: int
    body: tuple[Stmt, ...]
    buffers_decl: tuple[Buffer, ...] = ()
    max_tile: int | None = None
    #: Row loops: the shape symbols (rows, D) of the 2-D tensors they tile; None for flat loops.
    row_shape: tuple[str, str] | None = None
    #: Plane loops (split over the leading dims of rank >= 3 tensors): the number of trailing spatial
    #: dims of each plane; 0 for flat and row loops.
    plane_rank: int = 0
    #: Box loops (a split over the dims of a tensor but one, not its last): (the axis of that extra dim in
    #: the tensor, its shape symbol), e.g. (1, "R") for x: [A, R, C] under split(A * C); None elsewhere.
    box: tuple[int, str] | None = None
    span: Span = _SPAN
    #: Row loops: the chunked variant for rows longer than UB (a lowering.chunking.ChunkPlan), or the
    #: reason the body cannot run in column chunks (str); None elsewhere.
    chunked: object = field(default=None, compare=False)


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
class AccDecl:
    """Kernel scope, before the split loop that updates it: `total = 0.0`. An accumulator holds one
    f32 value per core while its split loop runs; when the loop ends the per-core values are combined
    across cores (GM workspace + SyncAll) and every core holds the total."""

    name: str
    init: float
    span: Span = _SPAN


@dataclass(frozen=True)
class Accumulate:
    """In a tile loop: `total += sum(v)` (combine "add") or `m = max(m, max(v))` ("max"/"min").
    `reduce` (reduce_sum/max/min) turns the tile `value` into one scalar per tile; reduce "slots"
    (`s[r] += sum(v, axis=1)`, a SlotAccDecl) adds each row's value of `value` (one per row) into its slot."""

    name: str
    combine: str
    reduce: str
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


Stmt = (Assign | Store | SplitLoop | TileLoop | Stage | CopyIn | CopyOut | VecOp | AccDecl | Accumulate | ScalarAssign
        | ScalarStore | ScalarLoad | SlotAccDecl)

# ----------------------------------------------------------------------------- kernel


@dataclass(frozen=True)
class Kernel:
    name: str
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    type_args: tuple[tuple[str, DType], ...] = ()
    type_options: tuple[tuple[str, tuple[DType, ...]], ...] = ()
    span: Span = _SPAN

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
        return tuple(p for p in self.tensors if p.name in stored)

    @property
    def inputs(self) -> tuple[TensorParam, ...]:
        outs = {p.name for p in self.outputs}
        return tuple(p for p in self.tensors if p.name not in outs)

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
    cube writes the accumulator to GM itself (IterateAll)."""

    base_m: int
    base_n: int
    base_k: int
    whole_rows: bool = False
    direct: bool = False


@dataclass(frozen=True)
class CubeLoop:
    """`for blk in split([Bt,] M, N, cores=AIC)`: output blocks of C = A @ B assigned to cores.

    `body` is (Matmul, TileLoop): the `with cube:` block and the `with vector:` epilogue, a row tile
    over one base block of the accumulator (which enters it as `acc = load(acc[blk, :])`). `k` is the
    reduction symbol. Lowered to a MIX kernel (Matmul API driven from the vector cores)."""

    var: str
    batch: str | None
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
