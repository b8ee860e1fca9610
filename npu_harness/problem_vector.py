"""The vector work a problem needs, from the DSL program: the vector term of the cost model's headline
(npu_harness/cost/model.py `problem_vector_cycles`; docs/cost_model.md "Headline", the table of rules).

The kernel's own vector instructions (the emulator's counters) are not that: a kernel that does more vector work
than the problem needs would raise its own ideal, and one that cuts instructions would lower it. This walks the
source-level ops of the kernel (its IR before lowering: no casts the lowering inserts for accuracy, no data
movement) and charges each op the elements it works on at the rate of the cheapest vector instruction that can
compute it on the op's source dtype (cycles per 256-B repeat from the target's toml, no head latency, fractional
repeats). Element counts come from the loop's shape and the bound sizes: a flat loop's tiles cover the split's
extent, a row loop's rows x row, per-row values (Layout.COL) one per row, a row vector (Layout.ROW) its length once
(loop-invariant: a kernel computes it once), a box loop's positions x the reduced axis, a plane loop's planes.

Every rule must stay a LOWER bound of what a correct kernel needs (the term may only make the ideal smaller, the
headline stricter): per-row and scalar values are charged nothing (the scalar unit may compute them), ops a kernel
can fold away (neg, a row-broadcast or a cast the cube's Fixpipe applies) nothing, data movement (copies, gathers,
scatters, index vectors, broadcasts) and the window ops (pooling, resampling: no rule yet) nothing, composite ops
(sigmoid, tanh, erf, pow) only the transcendental instructions they cannot do without, a reduction of n values to m
(n - m) values at Add's (Max's, Min's, Mul's) rate (a tree of binary instructions). tests/test_problem_vector*.py
holds the invariant: over the gallery the term never exceeds the kernel's own vector work.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from ascend_dsl import ir
from ascend_dsl.dtypes import DType
from ascend_dsl.ops import OPS, Rule

from .binding import Binding
from .cost.model import CostParams, load_params, target_for

#: Element-wise ops with one instruction: (tile x tile instruction, tile x scalar instruction or None).
#: A scalar operand (a constant, a scalar parameter, a per-row value of a row loop) takes the scalar form.
BINARY = {"add": ("Add", "Adds"), "sub": ("Sub", "Adds"), "mul": ("Mul", "Muls"), "max": ("Max", "Maxs"),
          "min": ("Min", "Mins"), "div": ("Div", "Muls")}
#: x - c is x + (-c); x / c is x * (1 / c) (the scalar unit forms -c, 1 / c); c - x and c / x are charged the same
#: scalar instruction (the cheaper figure: c / x needs at least a Div or a Reciprocal, charged as such below).
UNARY = {"exp": "Exp", "log": "Ln", "sqrt": "Sqrt", "rsqrt": "Rsqrt", "reciprocal": "Reciprocal", "abs": "Abs",
         "relu": "Relu"}
#: Composite ops (no single instruction; legalize.py expands them): the instructions they cannot do without.
#: sigmoid = 1 / (1 + e^-x), tanh = 1 - 2 / (1 + e^2x): an Exp and a division; erf (a rational approximation times
#: e^-x^2, or any accurate form): at least an Exp and a division too; the Muls / Adds around them are left out. A product
#: with a sigmoid is charged nothing beyond it (a * sigmoid(z) = a / (1 + e^-z): one Div; session 35).
COMPOSITE = {"sigmoid": ("Exp", "Div"), "tanh": ("Exp", "Div"), "erf": ("Exp", "Div")}
#: Reductions and scans: the binary instruction of their tree (n values to m: n - m applications).
REDUCE = {"reduce_sum": "Add", "reduce_mean": "Add", "reduce_max": "Max", "reduce_min": "Min", "reduce_prod": "Mul",
          "argmax": "Max", "argmin": "Min"}
SCAN = {"sum": "Add", "prod": "Mul"}
COMBINE = {ir.Combine.ADD: "Add", ir.Combine.MAX: "Max", ir.Combine.MIN: "Min", ir.Combine.MUL: "Mul"}
#: Charged nothing: data movement, index vectors, and ops a kernel folds into a neighbour.
FREE = {"neg", "copy", "broadcast_rows", "col_index", "row_index", "col_minus_row", "gather", "gather_bytes",
        "index_select_cols", "gather_middle", "scatter", "scatter_add", "index_add", "index_copy", "index_put",
        "index_put_acc", "scatter_dim0", "scatter_add_dim0"}
#: Rules whose ops are charged nothing yet (windows and resampling: no lower bound derived; the cheaper figure).
FREE_RULES = {Rule.POOL, Rule.RESIZE, Rule.GATHER, Rule.SCATTER, Rule.ROW_SCATTER, Rule.POSITION}


@dataclass(frozen=True)
class Charge:
    """`elements` of `dtype` through vector instruction `instr` (the op it computes: `op`)."""

    op: str
    instr: str
    dtype: DType
    elements: float

    def cycles(self, p: CostParams) -> float:
        return p.cycles_per_repeat(f"{self.instr}.b{8 * self.dtype.size}") * self.elements * self.dtype.size / 256


class _Unknown(Exception):
    """A size the binding cannot give: the loop is charged nothing (the cheaper figure)."""


def _dim(d: str | int, symbols: dict[str, int]) -> int:
    if isinstance(d, int):
        return d
    if d in symbols:
        return int(symbols[d])
    parts = [s.strip() for s in d.split("*")]
    if len(parts) > 1:
        return math.prod(_dim(int(s) if s.isdigit() else s, symbols) for s in parts)
    raise _Unknown(d)


def _size(dims, symbols: dict[str, int]) -> int:
    return math.prod(_dim(d, symbols) for d in dims)


def _numel(kernel: ir.Kernel, name: str, symbols: dict[str, int]) -> int:
    p = kernel.param(name)
    if not isinstance(p, ir.TensorParam):
        raise _Unknown(name)
    return _size(p.shape, symbols)


@dataclass(frozen=True)
class _Loop:
    """Elements of a tile value by its layout over the whole split (all cores, all tiles)."""

    counts: dict[ir.Layout, int]
    #: a cube loop's epilogue: the accumulator's name (the Fixpipe may cast / relu it on its way out, a scalar
    #: factor of it moves to an operand)
    acc: str | None = None
    #: the epilogue stores only workspace tensors (a later matmul's operand): a per-row factor moves past that
    #: matmul to its output rows (flash attention's O / l)
    feeds_cube: bool = False
    #: the share of the elements a kernel must compute (a positional band mask of flash attention: the key blocks
    #: outside the band are skipped) and whether the band's own tests (positions, compares, selects) are free
    share: float = 1.0
    band: bool = False

    def elements(self, t: ir.ValType) -> float:
        if t.kind is ir.Kind.SCALAR:
            return 0
        return self.counts.get(t.layout, 0) * self.share


def _loop_counts(kernel: ir.Kernel, split_extent: tuple, loop: ir.TileLoop, symbols: dict[str, int],
                 batch: tuple = ()) -> dict[ir.Layout, int]:
    shape = loop.shape
    if isinstance(shape, ir.RowTiles):
        rows, row = _size(shape.rows, symbols) * _size(batch, symbols), _size(shape.row, symbols)
        return {ir.Layout.ROWS: rows * row, ir.Layout.ROW: row}  # COL: per-row values, charged nothing
    if isinstance(shape, ir.BoxTiles):
        pos = _size(split_extent, symbols)
        return {ir.Layout.FLAT: pos, ir.Layout.BOX: pos * _dim(shape.dim, symbols)}
    if isinstance(shape, ir.PlaneTiles):
        counts: dict[ir.Layout, int] = {}
        for s in ir.walk(loop.body):
            if isinstance(s, ir.VALUE_STMTS):
                for e in ir.walk_expr(s.value):
                    if isinstance(e, ir.Load) and e.type.layout is ir.Layout.PLANE:
                        counts[ir.Layout.PLANE] = max(counts.get(ir.Layout.PLANE, 0), _numel(kernel, e.tensor, symbols))
            if isinstance(s, ir.Store) and s.value.type.layout is ir.Layout.POOLED:
                counts[ir.Layout.POOLED] = max(counts.get(ir.Layout.POOLED, 0), _numel(kernel, s.tensor, symbols))
        return counts
    return {ir.Layout.FLAT: _size(split_extent, symbols)}


def _loops(kernel: ir.Kernel, symbols: dict[str, int], band: tuple[float, bool] = (1.0, False)
           ) -> Iterator[tuple[ir.TileLoop, _Loop]]:
    for s in kernel.body:
        if isinstance(s, ir.SplitLoop):
            for t in s.body:
                if isinstance(t, ir.TileLoop):
                    try:
                        yield t, _Loop(_loop_counts(kernel, s.extent, t, symbols))
                    except _Unknown:
                        continue
        elif isinstance(s, ir.CubeLoop):
            stores = [t.tensor for t in ir.walk(s.epilogue.body) if isinstance(t, ir.Store)]
            feeds = bool(stores) and all(getattr(kernel.param(t), "workspace", False) for t in stores)
            share, masked = band if feeds else (1.0, False)
            try:
                yield s.epilogue, _Loop(_loop_counts(kernel, (), s.epilogue, symbols, s.batch), s.matmul.name, feeds,
                                        share, masked)
            except _Unknown:
                continue
        # ConvLoop: its relu and cast ride the Fixpipe (L0C -> GM); scalar statements: the scalar unit


def _scalar(e: ir.Expr) -> bool:
    """An operand the scalar form of a binary instruction takes: a scalar, or a per-row value of a row loop."""
    return e.type.kind is ir.Kind.SCALAR or e.type.layout is ir.Layout.COL


def _accumulator(e: ir.Expr, loop: _Loop) -> bool:
    return loop.acc is not None and (isinstance(e, ir.Ref) and e.name == loop.acc
                                     or isinstance(e, ir.Load) and e.tensor == loop.acc)


#: the ops of a positional band mask (select(col_index() <= row_index(), s, fill)): free where the band is skipped
BAND_OPS = {"select", "lt", "le", "gt", "ge", "eq", "ne", "add", "sub", "abs"}


def _position(e: ir.Expr) -> bool:
    """An expression of positions only (col_index / row_index, scalars): a band's bound, not the scores."""
    return all(not isinstance(x, ir.Load | ir.Ref) or x.type.kind is ir.Kind.SCALAR for x in ir.walk_expr(e)) and any(
        isinstance(x, ir.Op) and OPS.get(x.op) is not None and OPS[x.op].rule is Rule.POSITION for x in ir.walk_expr(e))


def op_charges(e: ir.Op, loop: _Loop) -> list[Charge]:
    """What one source op costs at least (module docstring; docs/cost_model.md "Headline")."""
    n = loop.elements(e.type)
    info = OPS.get(e.op)
    if info is None or e.op in FREE or info.rule in FREE_RULES:
        return []
    if loop.band and e.op in BAND_OPS and (e.op == "select" or _position(e)):
        return []  # a positional band: tested on the blocks at its edges only
    if info.rule is Rule.REDUCE or info.rule is Rule.ARG_REDUCE:
        src = e.args[0]
        return [Charge(e.op, REDUCE[e.op], src.type.dtype, max(0, loop.elements(src.type) - _rows(loop, src)))]
    if info.rule is Rule.SCAN:
        src = e.args[0]
        return [Charge(e.op, SCAN["sum" if "sum" in e.op else "prod"], src.type.dtype,
                       max(0, loop.elements(src.type) - _rows(loop, src)))]
    if not n or e.type.layout is ir.Layout.COL:
        return []  # per-row values: the scalar unit's (and 1 / row length of the row's work)
    if info.rule is Rule.CAST:
        src = e.args[0].type.dtype
        if src is e.type.dtype or _accumulator(e.args[0], loop):
            return []
        wide = src if src.size >= e.type.dtype.size else e.type.dtype
        instr = "CastF32ToF16" if (src, e.type.dtype) == (DType.F32, DType.F16) else "Cast"
        return [Charge(e.op, instr, wide, n)]
    if e.op == "relu" and _accumulator(e.args[0], loop):
        return []
    if e.op in UNARY:
        return [Charge(e.op, UNARY[e.op], e.type.dtype, n)]
    if e.op in COMPOSITE:
        return [Charge(e.op, i, e.type.dtype, n) for i in COMPOSITE[e.op]]
    if e.op == "pow":
        return [Charge(e.op, "Ln", e.type.dtype, n), Charge(e.op, "Exp", e.type.dtype, n),
                Charge(e.op, "Muls" if _scalar(e.args[1]) else "Mul", e.type.dtype, n)]
    if info.rule is Rule.COMPARE:
        a, b = e.args
        return [Charge(e.op, "Compares" if _scalar(a) or _scalar(b) else "Compare", a.type.dtype, n)]
    if info.rule is Rule.SELECT:
        return [Charge(e.op, "Select", e.type.dtype, n)]
    if e.op in BINARY:
        a, b = e.args
        tile, scalar = BINARY[e.op]
        if e.op == "div" and _scalar(a) and not _scalar(b):
            return [Charge(e.op, "Div", e.type.dtype, n)]  # c / x: a Div (or a Reciprocal) per element
        if e.op in ("mul", "div") and (_accumulator(a, loop) and b.type.kind is ir.Kind.SCALAR
                                       or e.op == "mul" and _accumulator(b, loop) and a.type.kind is ir.Kind.SCALAR):
            return []  # a scalar factor of the accumulator: on an operand (q * scale) or in the Fixpipe
        if loop.feeds_cube and e.op in ("mul", "div") and (
                b.type.layout is ir.Layout.COL or e.op == "mul" and a.type.layout is ir.Layout.COL):
            return []  # a per-row factor of the next matmul's operand: on its output rows instead (O / l)
        if e.op == "mul" and any(isinstance(o, ir.Op) and o.op == "sigmoid" and o.type == e.type for o in (a, b)):
            return []  # a * sigmoid(z) = a / (1 + exp(-z)): the sigmoid's Div does the product (legalize.py)
        if _scalar(a) or _scalar(b):
            return [Charge(e.op, scalar, e.type.dtype, n)]
        if e.op == "div" and b.type.layout is ir.Layout.ROW and a.type.layout is not ir.Layout.ROW:
            # x / w of a row vector w: 1 / w once, then a Mul per element
            return [Charge(e.op, "Reciprocal", e.type.dtype, loop.elements(b.type)), Charge(e.op, "Mul", e.type.dtype, n)]
        return [Charge(e.op, tile, e.type.dtype, n)]
    return []  # an op without a rule here: nothing (the cheaper figure)


def _rows(loop: _Loop, src: ir.Expr) -> int:
    """The results of reducing `src` along its last axis: one per row (row loops), per position (box loops)."""
    if src.type.layout is ir.Layout.ROWS:
        rows_x_row, row = loop.counts.get(ir.Layout.ROWS, 0), loop.counts.get(ir.Layout.ROW, 0)
        return rows_x_row // row if row else 0
    if src.type.layout is ir.Layout.BOX:
        return loop.counts.get(ir.Layout.FLAT, 0)
    return 1


def _softmax_shifts(stmts) -> set:
    """The row maxima subtracted before an exp (`exp(x - max(x, axis=1))`): a device against overflow, not the
    problem's work (an online softmax keeps a running bound and skips the row max while the sums stay bounded:
    lowering/emit/flash.py)."""
    out, env = set(), {}
    for s in stmts:
        if isinstance(s, ir.Assign):
            env[s.name] = s.value
    for s in stmts:
        if not isinstance(s, ir.VALUE_STMTS):
            continue
        for e in ir.walk_expr(s.value):
            if isinstance(e, ir.Op) and e.op == "exp":
                arg = e.args[0]
                arg = env.get(arg.name, arg) if isinstance(arg, ir.Ref) else arg
                if not (isinstance(arg, ir.Op) and arg.op == "sub"):
                    continue
                m = arg.args[1]
                m = env.get(m.name, m) if isinstance(m, ir.Ref) else m
                if isinstance(m, ir.Op) and m.op == "reduce_max" and m.args[0] == arg.args[0]:
                    out.add(m)
    return out


def band_share(flash: ir.FlashAttention, symbols: dict[str, int], scalars: dict[str, float]) -> float:
    """The share of the M x N scores inside a flash kernel's positional band (max(lo) <= key - query <= min(hi));
    1 without one."""
    mask = flash.mask
    if mask is None or not (mask.lo or mask.hi):
        return 1.0
    m, n = int(symbols[flash.m]), int(symbols[flash.n])

    def value(bd: ir.FlashBound) -> int:
        return bd.const + sum(sign * int(scalars[name]) for sign, name in bd.params)

    lo = max(map(value, mask.lo)) if mask.lo else -n
    hi = min(map(value, mask.hi)) if mask.hi else n
    kept = sum(max(0, min(n - 1, i + hi) - max(0, i + lo) + 1) for i in range(m))
    return kept / (m * n) if m * n else 1.0


def charges(kernel: ir.Kernel, symbols: dict[str, int], band: tuple[float, bool] = (1.0, False)) -> list[Charge]:
    """Every source op's charge, each distinct expression of a tile loop once (a kernel computes a repeated
    expression once). `band`: (the share of a flash kernel's scores inside its positional band, whether the band
    is positional only) for the epilogue that stores the scores' softmax."""
    out: list[Charge] = []
    for loop, counts in _loops(kernel, symbols, band):
        seen: set = _softmax_shifts(loop.body)
        for s in ir.walk(loop.body):
            if not isinstance(s, ir.VALUE_STMTS):
                continue
            if isinstance(s, ir.Accumulate) and counts.elements(s.value.type) and s.value.type.layout is not ir.Layout.COL:
                # total += sum(v) / m = max(m, max(v)): the tile's values to one per core (the scalar unit folds those)
                out.append(Charge(s.reduce, COMBINE[s.combine], s.value.type.dtype,
                                  max(0, counts.elements(s.value.type) - 1)))
            for e in ir.walk_expr(s.value):
                if isinstance(e, ir.Op) and e not in seen:
                    seen.add(e)
                    out.extend(op_charges(e, counts))
    return out


def problem_vector_cycles(kernel: ir.Kernel, b: Binding, target: str, lowered: ir.Kernel | None = None) -> float:
    """The vector cycles the problem needs at the binding's shapes, summed over all AIV (divide by clock x AIV for
    the headline's vector term). `lowered`: the kernel as lowered; a FLASH kernel with a positional band mask
    computes only the scores inside the band."""
    p = load_params(target_for(target))
    band = (1.0, False)
    if lowered is not None and lowered.kind is ir.KernelKind.FLASH and isinstance(fa := lowered.body[0], ir.FlashAttention):
        try:
            band = (band_share(fa, b.symbols, b.scalars), fa.mask is not None and fa.mask.tensor is None)
        except (KeyError, ValueError):
            band = (1.0, False)
    return sum(c.cycles(p) for c in charges(kernel, b.symbols, band))
