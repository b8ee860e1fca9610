"""What every kind's emitter shares: the template environment, scalar C++ forms, source-line comments,
copy and sync helpers, the views of tensors, scalars and UB buffers, the stage writers that turn a
scheduled tile body into C++ lines, and the fields and manifest every emitted project has.

Every decision was made by the passes; this module and the kinds' modules only render it, and the
jinja2 templates in `codegen_templates/` lay it out.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from functools import lru_cache
from importlib import resources

import jinja2

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from ascend_dsl.diagnostics import ErrorCode as E
from ascend_dsl.dtypes import DType
from ascend_dsl.ops import OPS, Rule
from ascend_dsl.parser_scatter import named

from ..context import PassContext
from ..row_value_ops import binary
from ..tiling_rules import REPEAT_BYTES
from ..vector_scan import compensated, half_in, half_out, scratch_rows, segment, square, two_level
from . import (
    arg_reduce,
    col_select,
    flat_fold,
    gather_rows,
    launch_scalars,
    period_cache,
    positions,
    row_broadcast,
    row_fold,
    row_gather,
    row_scatter,
    row_value_broadcast,
    scalar_division,
    scatter,
    strided_broadcast,
    tile_fold,
)
from .launch_scalars import LaunchScalarView

GENERATOR = "ascend-dsl"


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    root = resources.files("codegen_templates")
    loader = jinja2.FunctionLoader(lambda name: root.joinpath(name).read_text())
    return jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined, trim_blocks=True,
                              lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)


def view_fields(view: KernelView) -> dict:
    """A view's fields by name (what its templates see)."""
    return {f.name: getattr(view, f.name) for f in fields(view)}


def render(template: str, view: KernelView | None = None, **values) -> str:
    """Render a template with the fields of a view (a frozen dataclass) as its variables; `values` add to them
    or override them (exports re-render a kernel under another entry name)."""
    return _env().get_template(template).render(**{**(view_fields(view) if view is not None else {}), **values})


def snippet(name: str, indent: str = "", **values) -> list[str]:
    """The C++ lines of a partial template, codegen_templates/snippets/<name>.cpp.jinja (multi-line blocks
    the writers place: the templates lay them out, the writers pass the values)."""
    text = _env().get_template(f"snippets/{name}.cpp.jinja").render(**values)
    return [indent + line if line else line for line in text.splitlines()]


def share_lines(ctx: PassContext, split: ir.SplitLoop, what: str) -> list[str]:
    """Init: this core's contiguous share of the split loop's extent; `what` describes it ({} is the extent)."""
    return snippet("core_share", loc=loc(ctx, split.span), what=what.format(" * ".join(split.extent)),
                   total=" * ".join(f"tiling.{s}" for s in split.extent))


def camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_") if p)


def loc(ctx: PassContext, span) -> str:
    """`file:LINE` of a DSL span, for the `// file:LINE` comments that lead back to the DSL."""
    return f"{ctx.source_name}:{span.line}"


def sync(event: str, comment: str = "", indent: str = "") -> list[str]:
    """SetFlag / WaitFlag of a HardEvent between two pipes (ascendc.md 4.4), e.g. sync("V_S")."""
    note = f"  // {comment}" if comment else ""
    return [f"{indent}SetFlag<HardEvent::{event}>(EVENT_ID0);{note}", f"{indent}WaitFlag<HardEvent::{event}>(EVENT_ID0);"]


def copy_call(way: str, kind: str, ub: str, gm: str, sizes: str) -> str:
    """A call of the emitted copy helpers (codegen_templates/copy_helpers_*.cpp.jinja); way: GmToUb, UbToGm."""
    dst, src = (ub, gm) if way == "GmToUb" else (gm, ub)
    return f"Copy{kind}{way}({dst}, {src}, {sizes});"


# ----------------------------------------------------------------------------- scalars


def c_literal(value: float | int, dtype: DType) -> str:
    if dtype.is_float:
        text = repr(float(value))
        if text in ("inf", "-inf", "nan"):
            text = {"inf": "(1.0f / 0.0f)", "-inf": "(-1.0f / 0.0f)", "nan": "(0.0f / 0.0f)"}[text]
        elif "e" not in text and "." not in text:
            text += ".0"
        lit = text if text.startswith("(") else text + "f"
        return lit if dtype is DType.F32 else f"static_cast<{dtype.ctype}>({lit})"
    return str(int(value))


_NAMED = {ir.RowLength: "rowLen_", ir.RowValue: "v"}  # the row length member; the per-row value of a PerRow


def _integer(e: ir.Expr) -> bool:
    return not e.type.dtype.is_float and e.type.dtype is not DType.BOOL


#: A float scalar cast to an integer: truncation toward zero, saturating, NaN -> 0 (as the vector Cast does).
_TO_INT = ("[](float v) {{ return v != v ? int64_t(0) : v <= -2147483648.0f ? int64_t(-2147483647 - 1) : "
           "v >= 2147483647.0f ? int64_t(2147483647) : static_cast<int64_t>(v); }}({})")


def c_scalar(e: ir.Expr, dtype: DType) -> str:
    """A scalar operand as a C++ expression of type `dtype` (immediates, members, the ops' scalar forms).
    Integer math (shape symbols, i32 parameters) is computed in int64_t (`OpInfo.int_c`), float math in
    float, then converted to `dtype`."""
    match e:
        case ir.Const(value=v):
            return c_literal(v, dtype)
        case ir.Ref(type=t) | ir.RowLength(type=t) | ir.RowValue(type=t):
            member = _NAMED.get(type(e)) or f"{e.name}_"
            return member if t.dtype is dtype else f"static_cast<{dtype.ctype}>({member})"
        case ir.Op(op="cast", args=(a,)) if _integer(e) and a.type.dtype.is_float:
            return f"static_cast<{dtype.ctype}>({_TO_INT.format(c_scalar(a, DType.F32))})"
        case ir.Op(op="cast", args=(a,)) if e.type.dtype in (DType.F16, DType.BF16):  # rounds to the narrow dtype
            narrow = c_scalar(a, e.type.dtype)
            return narrow if dtype is e.type.dtype else f"static_cast<{dtype.ctype}>({narrow})"
        case ir.Op(op=op, args=args) if OPS[op].int_c is not None and all(map(_integer, args)) and (
                _integer(e) or e.type.dtype is DType.BOOL):
            text = OPS[op].int_c.format(*(c_scalar(a, DType.I64) for a in args))
            return text if e.type.dtype is DType.BOOL else f"static_cast<{dtype.ctype}>({text})"
        case ir.Op(op=op, args=args) if OPS[op].scalar_c is not None and e.type.dtype.is_float and \
                e.type.dtype is not dtype:  # computed in its own dtype, converted once (not from rounded operands)
            return f"static_cast<{dtype.ctype}>({c_scalar(e, e.type.dtype)})"
        case ir.Op(op=op, args=args) if OPS[op].scalar_c is not None:
            info = OPS[op]  # compares read their operands as floats; a select's mask is a bool
            arg_dtypes = {Rule.COMPARE: (DType.F32, DType.F32), Rule.SELECT: (DType.BOOL, dtype, dtype)}.get(
                info.rule, (dtype,) * len(args))
            return info.scalar_c.format(*(c_scalar(a, d) for a, d in zip(args, arg_dtypes, strict=True)),
                                        T=dtype.ctype, zero=c_literal(0.0, dtype))
    raise DslError.at(E.INTERNAL, f"scalar expression '{getattr(e, 'op', e)}' has no scalar form "
                      "(select_instructions checks every one)", e.span)


def slot_expr(name: str, row: str) -> str:
    """The slot of slot accumulator `name` that row `row` adds into (members set by emit/slots.py)."""
    return f"(({row}) / {name}RowsPerSlot_) % {name}Slots_"


#: The running value each core starts from, per combine.
IDENTITY = {ir.Combine.ADD: 0.0, ir.Combine.MAX: float("-inf"), ir.Combine.MIN: float("inf"), ir.Combine.MUL: 1.0}


# ----------------------------------------------------------------------------- views


@dataclass(frozen=True)
class TensorView:
    name: str
    gm: str  # the GlobalTensor member
    ctype: str
    host_ctype: str  # 16-bit floats are uint16_t on the host
    role: str  # "input" | "output"
    numel_host: str  # elements, over the host's shape variables
    numel: str  # elements, over the kernel's shape members


@dataclass(frozen=True)
class ScalarView:
    name: str
    member: str
    ctype: str


@dataclass(frozen=True)
class BufferView:
    """A UB buffer as the kernel class declares it: a TQue or TBuf member and its InitBuffer arguments."""

    name: str
    member: str
    decl: str
    init_args: str
    buffer: ir.Buffer


@dataclass(frozen=True)
class LaunchCheck:
    """A condition the host checks before the tiling, and the error it prints when false."""

    cond: str
    msg: str


@dataclass(frozen=True, kw_only=True)
class KernelView:
    """The fields every emitted project has (launch_main, CMakeLists and the emulator driver use them)."""

    name: str
    entry: str
    cls: str
    source: str
    target: str
    soc_version: str
    tiling_type: str
    tiling_fn: str
    tensors: tuple[TensorView, ...]
    scalars: tuple[ScalarView, ...]
    symbols: tuple[str, ...]
    buffers: tuple[BufferView, ...]
    mix: bool = False
    split_k: bool = False  # MIX: K may be split over cube cores (partial sums after the Matmul API's workspace)
    workspace: bool = False  # per-core GM workspace (accumulator slots)
    workspace_per_core: str = "0"
    launch_checks: tuple[LaunchCheck, ...] = ()
    launch_scalars: tuple[LaunchScalarView, ...] = ()  # kernel-scope scalars the host computes at launch
    core_cap: int = 0  # `split(..., cores=K)`: the host tiling launches at most K blocks (0: no cap)
    core_cap_loc: str = ""
    tiling_error: str = "the host tiling found no tile that fits the Unified Buffer (one row is too long)"
    #: a host function `void F(const Tiling&, char* buf, unsigned long n)` in the tiling header that says why the
    #: tiling launched no block, with the sizes (the TILING message; "" keeps tiling_error)
    tiling_why: str = ""
    #: GM workspace bytes when the host tiling sizes it (a C++ expression over `tiling`; multi-stage kernels'
    #: workspace tensors, emit/chain.py); "" keeps each kind's own rule.
    gm_workspace: str = ""


def tensor_views(kernel: ir.Kernel) -> tuple[TensorView, ...]:
    outputs = {p.name for p in kernel.outputs}
    return tuple(TensorView(p.name, f"{p.name}Gm", p.dtype.ctype,
                            p.dtype.ctype if p.dtype not in (DType.F16, DType.BF16) else "uint16_t",
                            "output" if p.name in outputs else "input", " * ".join(str(d) for d in p.shape),
                            " * ".join(f"{d}_" if isinstance(d, str) else str(d) for d in p.shape))
                 for p in kernel.tensors)


def kernel_fields(kernel: ir.Kernel, ctx: PassContext) -> dict:
    """The KernelView fields every kind computes the same way (name, entry, tensors, ...)."""
    name = kernel.name
    return {"name": name, "entry": f"{name}_custom", "cls": f"Kernel{camel(name)}", "source": ctx.source_name,
            "target": ctx.target.name, "soc_version": ctx.target.soc_version,
            "tiling_type": f"{camel(name)}TilingData", "tiling_fn": f"{camel(name)}ComputeTiling",
            "tensors": tensor_views(kernel),
            "scalars": tuple(ScalarView(p.name, f"{p.name}_", p.dtype.ctype) for p in kernel.scalars),
            "symbols": tuple(kernel.symbols), "launch_scalars": launch_scalars.views(kernel, ctx.source_name),
            **core_cap(kernel, ctx)}


def core_cap(kernel: ir.Kernel, ctx: PassContext) -> dict:
    """`cores=K` of the kernel's split loops: they share one launch, so the smallest cap bounds it."""
    capped = [s for s in kernel.body if isinstance(s, ir.SplitLoop) and s.cores is not None]
    if not capped:
        return {}
    s = min(capped, key=lambda s: s.cores)
    return {"core_cap": s.cores, "core_cap_loc": loc(ctx, s.span)}


def buffer_views(tl: ir.TileLoop, suffix: str = "", tile: str | None = None) -> tuple[BufferView, ...]:
    """Queue/TBuf members of one loop's buffers; loops after the first get a numeric suffix. `tile`:
    the member holding the tile length (default `tileLength<suffix>_`)."""
    views = []
    for b in tl.buffers_decl:
        cap = b.name[:1].upper() + b.name[1:]
        if b.position is ir.Position.VECCALC:
            member, decl = f"{b.name}Buf{suffix}", "TBuf<TPosition::VECCALC>"
            if b.layout is ir.Layout.SCAN:  # sized from the row length (the chunk length in a chunk pass)
                chunked = tl.kind is ir.LoopKind.CHUNKS
                init = scan_bytes_expr(tile if chunked else "rowPitch_", scratch_rows(b, chunked), segment(chunked))
            else:
                init = bytes_expr(b, suffix, tile)
        else:
            prefix = "inQueue" if b.position is ir.Position.VECIN else "outQueue"
            stem = cap.removesuffix("Local")
            member = f"{prefix}{stem[:1].upper()}{stem[1:]}{suffix}"
            decl, init = f"TQue<TPosition::{b.position.value}, 1>", f"{b.num}, {bytes_expr(b, suffix, tile)}"
        views.append(BufferView(b.name, member, decl, init, b))
    return tuple(views)


def bytes_expr(b: ir.Buffer, suffix: str = "", tile: str | None = None) -> str:
    """InitBuffer length of one buffer, in terms of the tile length (elements, or rows of rowPitch_)."""
    tile = tile or f"tileLength{suffix}_"
    per_bits = {
        ir.Layout.FLAT: tile,
        ir.Layout.ROWS: f"{tile} * rowPitch_",
        ir.Layout.COL: f"({tile} + 127) / 128 * 128",
        ir.Layout.ROW: "rowPitch_",
        ir.Layout.PLANE: "tiling.inTileElems",  # plane loops size their buffers on the host (window.py)
        ir.Layout.POOLED: "tiling.outTileElems",
        ir.Layout.BOX: "boxElems",  # box loops size their buffers on the host (box.py)
    }
    if b.role is ir.BufferRole.FOLD_TMP:  # half a row per row, or a block when the fold cannot run (tile_fold.py)
        return tile_fold.init_bytes(b.dtype.ctype, tile)
    if b.layout is ir.Layout.BLOCK:
        return "32"
    if b.layout is ir.Layout.BLOCKS:  # a 32-byte block per row, rows rounded up to a Brcb repeat (8 rows)
        return f"({tile} + 7) / 8 * 8 * 32"
    if b.layout is ir.Layout.SLOTS:  # a slot accumulator's vector: whole 32-byte blocks
        return f"{b.of}Pad_ * sizeof(float)"
    if b.layout is ir.Layout.PERIOD:  # a per-channel tensor cached per core (plan_period_cache.py)
        return str(ir.PERIOD_CACHE_BYTES)
    if b.layout is ir.Layout.NAMED_ROWS:  # rows of another length (emit/gather_rows.py)
        return gather_rows.init_bytes(b, tile)
    if b.layout is ir.Layout.REPEATS:  # two elements per 256-byte repeat (ReduceMax/Min: value and index;
        # ReduceMax.md), whole 32-byte blocks
        return f"(({tile} * sizeof({b.dtype.ctype}) + 255) / 256 * 2 * sizeof({b.dtype.ctype}) + 31) / 32 * 32"
    elems = per_bits[b.layout]
    if b.bits == 1:
        return f"({elems} + 255) / 256 * 32"  # one bit per element, whole 32-byte blocks
    return f"{elems} * sizeof({b.dtype.ctype})"


def scan_lines(s: ir.VecOp, src_dtype: DType, dst_dtype: DType, chunk: str | None = None,
               carry: str | None = None, scratch: ir.Buffer | None = None) -> list[str]:
    """A ScanSum / ScanProd pseudo-instruction (lowering/vector_scan.py) over `count` rows of rowLen_ elements, or
    over one chunk of `count` elements (`chunk`: the chunk length member the tables were built for; `carry`:
    the member holding the row's running value between chunks, `<carry>Comp` its Kahan compensation)."""
    attrs = dict(s.attrs)
    prod = s.api == "ScanProd"
    whole = chunk is None and scratch is not None
    in16, out16 = whole and half_in(scratch), whole and half_out(scratch)
    if (in16 and src_dtype.size != 2) or (out16 and dst_dtype.size != 2):
        raise DslError.at(E.INTERNAL, f"scan into '{s.dst}': its scratch {scratch.name} has 16-bit gather tables for a "
                          f"{src_dtype.value} -> {dst_dtype.value} scan", s.span)
    return snippet("scan", prod=prod, direct=whole and (in16 or src_dtype is DType.F32), in16=in16, out16=out16,
                   src_ctype=src_dtype.ctype, dst_ctype=dst_dtype.ctype,
                   square=square(chunk or "rowLen_", segment(chunk is not None), in16, out16),
                   reverse=attrs["reverse"] == "true", exclusive=attrs["exclusive"] == "true",
                   src=s.srcs[0], dst=s.dst, w=attrs["scratch"], op="Mul" if prod else "Add",
                   n="count" if chunk else "rowLen_", geom=chunk or "rowLen_", rows="1" if chunk else "count",
                   at="" if chunk else "[i * rowPitch_]", carry=carry, comp=carry and carry.removesuffix("_") + "Comp_",
                   identity="1.0f" if prod else "0.0f", cast_in=src_dtype is not DType.F32,
                   cast_out=dst_dtype is not DType.F32,
                   round="CAST_RINT" if dst_dtype is DType.BF16 else "CAST_NONE", L=segment(chunk is not None),
                   kahan=scratch is not None and compensated(scratch) and not prod and dst_dtype is DType.F32,
                   steps_up=segment(chunk is not None).bit_length() - 1)


def scan_table_lines(views, n: str = "rowLen_") -> list[str]:
    """Build the gather tables of the loop's vector scans, once per launch before its tile loop (whole rows:
    when this core has rows, i.e. its buffers were set up), or per row at the start of a chunked pass."""
    lines = []
    for b in views:
        if b.buffer.role is ir.BufferRole.SCAN_TMP:
            lines += snippet("scan_tables", w=b.name, member=b.member, n=n, reverse=b.buffer.of.startswith("rev"), L=segment(n != "rowLen_"),
                             whole=n == "rowLen_", two_level=two_level(b.buffer), in16=half_in(b.buffer),
                             out16=half_out(b.buffer), square=square(n, segment(n != "rowLen_"), half_in(b.buffer),
                                                                     half_out(b.buffer)),
                             guard="blockLength_ > 0" if n == "rowLen_" else "")
    return lines


def scan_bytes_expr(n: str, rows: int, seg: int) -> str:
    """Bytes of a vector scan's scratch for rows of `n` elements in segments of `seg` (lowering/vector_scan.py;
    ir.Buffer.bytes_for for chunks)."""
    return f"({n} + {8 * seg - 1}) / {8 * seg} * 8 * {rows * 4}"


def host_bytes(b: ir.Buffer) -> str:
    """The same length on the host, for tiles of `r` rows (see tiling.h.jinja)."""
    elems = {ir.Layout.ROWS: "r * padded", ir.Layout.COL: "colElems", ir.Layout.ROW: "padded"}
    if b.role is ir.BufferRole.FOLD_TMP:
        return tile_fold.host_bytes(b.dtype.ctype)
    if b.layout is ir.Layout.BLOCK:
        return "32"
    if b.layout is ir.Layout.BLOCKS:
        return "((r + 7) / 8 * 8 * 32)"
    if b.layout is ir.Layout.SCAN:
        return f"({scan_bytes_expr('padded', scratch_rows(b, False), segment(False))})"
    if b.layout is ir.Layout.SLOTS:  # a slot accumulator's vector (emit/slots.py)
        return f"({b.of}Slots + 7) / 8 * 32"
    if b.layout is ir.Layout.PERIOD:
        return str(ir.PERIOD_CACHE_BYTES)
    if b.layout is ir.Layout.NAMED_ROWS:  # rows of another length (emit/gather_rows.py)
        return gather_rows.host_bytes(b)
    return f"({elems[b.layout]} * {b.bits} / 8 + 31) / 32 * 32"


def rows_of(tl: ir.TileLoop) -> ir.RowTiles | None:
    return tl.shape if tl.kind is ir.LoopKind.ROWS else None


def value_symbols(kernel: ir.Kernel, tl: ir.TileLoop) -> list[str]:
    """Shape symbols read as values (e.g. `total / N`) that need a member (`N_`), the row length's symbol included:
    rowLen_ holds the row length, not a member named after its symbol."""
    symbols = set(kernel.symbols)
    used: dict[str, None] = {}
    for s in ir.walk(kernel.body):
        value = getattr(s, "value", None)
        if isinstance(s, ir.ScalarAssign) and s.launch:  # computed by the host
            continue
        if isinstance(s, (*ir.VALUE_STMTS, ir.ScalarAssign, ir.ScalarStore)) and value is not None:
            used.update({e.name: None for e in ir.walk_expr(value) if isinstance(e, ir.Ref) and e.name in symbols})
        for op in s.ops if isinstance(s, ir.PerRow) else (s,) if isinstance(s, ir.VecOp) else ():
            for o in op.srcs:
                if not isinstance(o, str):
                    used.update({e.name: None for e in ir.walk_expr(o) if isinstance(e, ir.Ref) and e.name in symbols})
    return list(used)


def manifest(kernel: ir.Kernel, ctx: PassContext, view: KernelView, kernel_type: str, max_tile: int | None,
             tile_unit: str, buffers: tuple[ir.Buffer, ...], workspace: int | str | None = None, **extra) -> dict:
    """manifest.json: what the project is (entry, tiling, tensors, buffers); `extra` before the buffers. The
    kernel's own workspace tensors (multi-stage kernels) are not among its tensors: the caller lists them."""
    out = {"generator": GENERATOR, "kernel": kernel.name, "source": ctx.source_name, "target": ctx.target.name,
           "entry": view.entry, "kernel_type": kernel_type}
    if workspace is not None:
        out["workspace_bytes_per_core"] = workspace
    out.update({"tiling_type": view.tiling_type, "tiling_fn": view.tiling_fn, "symbols": list(view.symbols),
                "tensors": tensor_entries(kernel), "scalars": scalar_entries(kernel),
                "max_tile": max_tile, "tile_unit": tile_unit, **extra,
                "buffers": [{"name": b.name, "position": b.position.value, "dtype": b.dtype.value, "num": b.num}
                            for b in buffers]})
    return out


def tensor_entries(kernel: ir.Kernel) -> list[dict]:
    """The manifest's `tensors`: the kernel's bound tensors (its workspace tensors are listed by the caller)."""
    return [{"name": p.name, "dtype": p.dtype.value, "shape": list(p.shape),
             "role": "output" if p in kernel.outputs else "input"} for p in kernel.bound_tensors]


def scalar_entries(kernel: ir.Kernel) -> list[dict]:
    """The manifest's `scalars`."""
    return [{"name": p.name, "dtype": p.dtype.value, "default": p.default} for p in kernel.scalars]


# ----------------------------------------------------------------------------- stage writers


def find(buffers: dict[str, BufferView], role: ir.BufferRole, of: str | None = None,
         dtype: DType | None = None) -> BufferView:
    """The buffer of a role (allocate_buffers): an accumulator's running value, a reduction's scratch, ..."""
    return next(b for b in buffers.values() if b.buffer.role is role and (of is None or b.buffer.of == of)
                and (dtype is None or b.buffer.dtype is dtype))


_COMBINE_API = {ir.Combine.ADD: "Add", ir.Combine.MAX: "Max", ir.Combine.MIN: "Min"}


class StageWriter:
    """The C++ lines of one stage of a flat tile loop: `count` elements at `offset` of the core's share."""

    def __init__(self, ctx: PassContext, buffers: dict[str, BufferView], tensors: dict[str, TensorView]):
        self.ctx = ctx
        self.buffers = buffers
        self.tensors = tensors
        self.lines: list[str] = []
        self.last_line = -1

    def mark(self, span) -> None:
        if span.line != self.last_line:
            self.lines.append(f"// {loc(self.ctx, span)}")
            self.last_line = span.line

    def ctype(self, buf: str) -> str:
        return self.buffers[buf].buffer.dtype.ctype

    def copy_in(self, s: ir.CopyIn) -> None:
        q, c = self.buffers[s.buffer].member, self.ctype(s.buffer)
        if self.buffers[s.buffer].buffer.role is ir.BufferRole.ROW_VECTOR:  # copied in once per core (row_vectors.py)
            return
        self.mark(s.span)
        if s.index.acc:  # s[r]: a slot accumulator's totals, one per row, from this core's copy in UB
            n, totals = s.tensor, find(self.buffers, ir.BufferRole.SLOT_TOTALS, s.tensor).member
            self.lines += [f"LocalTensor<float> {s.buffer} = {q}.AllocTensor<float>();",
                           f"LocalTensor<float> accTot_{n} = {totals}.Get<float>();",
                           "for (uint32_t i = 0; i < count; ++i) {",
                           f"    {s.buffer}.SetValue(i, accTot_{n}.GetValue({slot_expr(n, 'rowStart_ + offset + i')}));",
                           "}", *sync("S_V", "scalar writes before the vector unit reads them"), f"{q}.EnQue({s.buffer});"]
            return
        if s.index.period and (s.index.stride or s.index.rows):  # broadcast over other split symbols
            self.lines += row_broadcast.copy_in_lines(s, q, c, self.tensors[s.tensor].gm, sync)
            return
        if s.index.period:  # per-channel values: rows n*C + c read w[c], one scalar read per row
            gm = self.tensors[s.tensor].gm
            cache = period_cache.cache_view(self.buffers, s.tensor)
            self.lines += [f"LocalTensor<{c}> {s.buffer} = {q}.AllocTensor<{c}>();",
                           *period_cache.copy_in_lines(s.buffer, c, gm, cache, self.buffers),
                           *sync("S_V", "scalar writes before the vector unit reads them"), f"{q}.EnQue({s.buffer});"]
            return
        if self.buffers[s.buffer].buffer.layout is ir.Layout.NAMED_ROWS:  # a named tensor's rows for a vector gather (gather_rows.py)
            self.lines += gather_rows.copy_in_lines(s, self.buffers[s.buffer].buffer, q, c, self.tensors[s.tensor].gm)
            return
        if s.index.by and s.index.group:  # rows chosen by an index tensor along a middle dim
            by = self.tensors[s.index.by]
            self.lines += row_gather.group_copy_in_lines(s, q, c, self.tensors[s.tensor].gm, by.gm)
            return
        if s.index.by:  # rows chosen by an index tensor
            by = self.tensors[s.index.by]
            self.lines += row_gather.copy_in_lines(s, q, c, self.tensors[s.tensor].gm, by.gm, by.ctype)
            return
        self.lines += [f"LocalTensor<{c}> {s.buffer} = {q}.AllocTensor<{c}>();",
                       self.copy_call("GmToUb", s.buffer, self.tensors[s.tensor].gm), f"{q}.EnQue({s.buffer});"]

    def copy_out(self, s: ir.CopyOut) -> None:
        q, c = self.buffers[s.buffer].member, self.ctype(s.buffer)
        self.mark(s.span)
        self.lines += [f"LocalTensor<{c}> {s.buffer} = {q}.DeQue<{c}>();",
                       self.copy_call("UbToGm", s.buffer, self.tensors[s.tensor].gm), f"{q}.FreeTensor({s.buffer});"]

    def copy_call(self, way: str, buf: str, gm: str) -> str:
        """The copy-helper call moving this tile of `buf` (way: "GmToUb" or "UbToGm")."""
        return copy_call(way, "", buf, f"{gm}[offset]", "count")

    def accumulate(self, s: ir.Accumulate) -> None:
        """Reduce the tile to one value and fold it, on the vector unit, into this core's running value
        (an f32 UB block read by the scalar unit once, after the loop)."""
        self.mark(s.span)
        buf = s.value.name
        dt = self.buffers[buf].buffer.dtype
        out = find(self.buffers, ir.BufferRole.REDUCE_OUT, dtype=dt).name
        tmp = find(self.buffers, ir.BufferRole.ACC_TMP, dtype=dt).name
        slot = find(self.buffers, ir.BufferRole.ACC_SLOT, s.name).name
        body, value = [], out
        if dt is not DType.F32:  # the running value is f32
            value = find(self.buffers, ir.BufferRole.ACC_CAST).name
            body.append(f"Cast({value}, {out}, RoundMode::CAST_NONE, 1);")
        body.append(f"{_COMBINE_API[s.combine]}({slot}, {slot}, {value}, 1);")
        if s.fold_in_place:  # a dead flat tile: its halves folded into itself (passes/plan_flat_folds.py)
            self.lines += [*flat_fold.lines(OPS[s.reduce].api, out, buf, tmp, dt.ctype), *body]
            return
        self.lines += self.reduce_lines(OPS[s.reduce].api, out, buf, tmp, body)

    def slot_accumulate(self, s: ir.SlotAccumulate) -> None:
        """Add each row's value into its slot of this core's partial vector (scalar unit)."""
        self.mark(s.span)
        buf = s.value.name
        vec, n = find(self.buffers, ir.BufferRole.SLOT_VECTOR, s.name).name, s.name
        self.lines += [*sync("V_S", "the scalar unit reads the per-row values"),
                       "for (uint32_t i = 0; i < count; ++i) {",
                       f"    const uint32_t k = static_cast<uint32_t>({slot_expr(n, 'rowStart_ + tileRow_ + i')});",
                       f"    {vec}.SetValue(k, {vec}.GetValue(k) + static_cast<float>({buf}.GetValue(i)));"
                       + ("" if self.ctype(buf) == "float" else "  // f32 slots"),
                       "}", *sync("S_V", "before the vector unit reuses the buffers")]

    def reduce_lines(self, api: str, out: str, buf: str, tmp: str, body: list[str]) -> list[str]:
        return [f"{api}({out}, {buf}, {tmp}, static_cast<int32_t>(count));", *body]

    def vec_op(self, s: ir.VecOp, count: str = "count") -> None:
        """One instruction over `count` elements (a C++ expression)."""
        self.mark(s.span)
        attrs = dict(s.attrs)
        dst_t = self.buffers[s.dst].buffer.dtype
        tensor_srcs = [x for x in s.srcs if isinstance(x, str)]
        # scalar operands are typed like the tensor operand they pair with (a Select's like its result)
        like = self.buffers[tensor_srcs[0]].buffer.dtype if tensor_srcs and s.api != "Select" else dst_t
        srcs = [o if isinstance(o, str) else c_scalar(o, like) for o in s.srcs]
        if s.api in ("Compare", "Compares"):
            elems = REPEAT_BYTES // self.buffers[s.srcs[0]].buffer.dtype.size
            rounded = f"({count} + {elems - 1}) / {elems} * {elems}"  # Compare covers whole 256-byte repeats
            self.lines.append(f"{s.api}({s.dst}, {', '.join(srcs)}, CMPMODE::{attrs['cmp']}, {rounded});")
        elif s.api == "Select":
            self.lines.append(f"Select({s.dst}, {', '.join(srcs)}, SELMODE::{attrs['mode']}, {count});")
        elif s.api == "Cast":
            self.lines.append(f"Cast({s.dst}, {srcs[0]}, RoundMode::{attrs['round']}, {count});")
        elif s.api == "DataCopy":  # UB -> UB copies whole 32-byte blocks (the buffers are padded to them)
            elems = 32 // dst_t.size
            self.lines.append(f"DataCopy({s.dst}, {srcs[0]}, ({count} + {elems - 1}) / {elems} * {elems});")
        elif (d := scalar_division.divisor(s, like)) is not None:  # x / d: one Muls, or two where 1 / d is not normal
            self.lines += scalar_division.lines(s.dst, srcs[0], c_scalar(d, DType.F32), count)
        else:
            self.lines.append(f"{s.api}({s.dst}, {', '.join(srcs)}, {count});")


class RowStageWriter(StageWriter):
    """Row loops: whole-row tiles live in UB as `count` rows of rowPitch_ elements (rowLen_ of them data)."""

    def layout(self, buf: str) -> ir.Layout:
        return self.buffers[buf].buffer.layout

    def copy_call(self, way: str, buf: str, gm: str) -> str:
        match self.layout(buf):
            case ir.Layout.ROWS:  # GM rows are rowLen_ apart, UB rows rowPitch_ apart
                return copy_call(way, "Rows", buf, f"{gm}[offset * rowLen_]", "count, rowLen_, rowPitch_")
            case ir.Layout.COL:
                return copy_call(way, "", buf, f"{gm}[offset]", "count")
            case _:
                return copy_call(way, "", buf, gm, "rowLen_")

    def vec_op(self, s: ir.VecOp, count: str = "count") -> None:
        self.mark(s.span)
        if s.api in ("ScanSum", "ScanProd"):  # blocked prefix on the vector unit (lowering/vector_scan.py)
            self.lines += scan_lines(s, self.buffers[s.srcs[0]].buffer.dtype, self.buffers[s.dst].buffer.dtype,
                                     scratch=self.buffers[dict(s.attrs)["scratch"]].buffer)
        elif s.api == "ReduceProd":
            src_dt = self.buffers[s.srcs[0]].buffer.dtype  # halving tree on the vector unit (row_prod snippet)
            self.lines += snippet("row_prod", src=s.srcs[0], dst=s.dst, ctype=self.ctype(s.dst), cast=src_dt is not DType.F32,
                                  w=find(self.buffers, ir.BufferRole.REDUCE_TMP, dtype=DType.F32).name)
        elif s.api.startswith("Reduce"):
            self.reduce(s)
        elif s.api == "GatherRows":
            self.gather(s)
        elif s.api == "GatherElems":
            self.gather_elements(s)
        elif s.api == col_select.API:  # index_select with K indices: x read whole, per element
            self.lines += col_select.compute_lines(s, lambda n: self.tensors[n].gm, sync,
                                                   self.layout(s.srcs[0]) is ir.Layout.ROWS)
        elif s.api == gather_rows.OFFSETS:  # an index as the byte offsets of a vector gather (gather_rows.py)
            self.lines += gather_rows.offset_lines(s, self.buffers[s.srcs[0]].buffer, gather_rows.symbol(s.srcs[1]))
        elif s.api == gather_rows.API:  # a named tensor's rows in UB, one Gather per row (gather_rows.py)
            self.lines += gather_rows.compute_lines(s, self.buffers[s.srcs[3]].buffer,
                                                    self.layout(s.srcs[0]) is ir.Layout.ROWS)
        elif s.api == col_select.MIDDLE:  # gather along a middle dim: x read whole, per element
            self.lines += col_select.middle_lines(s, lambda n: self.tensors[n].gm, c_scalar(s.srcs[2], DType.I64),
                                                  c_scalar(s.srcs[3], DType.I64), sync)
        elif s.api in row_scatter.APIS and dict(s.attrs).get("elems") == "1":  # single elements along dim 0
            dt = self.buffers[s.dst].buffer.dtype
            value = None if named(s.srcs[2]) else c_scalar(s.srcs[2], dt)  # scatter's value=
            rows = find(self.buffers, ir.BufferRole.REDUCE_TMP, dtype=s.srcs[1].type.dtype).name  # an index row
            self.lines += row_scatter.element_lines(s, lambda n: self.tensors[n].gm, c_scalar(s.srcs[3], DType.I64),
                                                    dt, self.ctype(s.dst), sync, rows, value)
        elif s.api in row_scatter.APIS:  # the tile's rows, then the source rows the index names for them
            dt = self.buffers[s.dst].buffer.dtype
            alpha = s.srcs[4]
            self.lines += row_scatter.compute_lines(
                s, lambda n: self.tensors[n].gm, find(self.buffers, ir.BufferRole.REDUCE_TMP, dtype=dt).name,
                c_scalar(s.srcs[3], DType.I64),
                None if isinstance(alpha, ir.Const) and alpha.value == 1 else c_scalar(alpha, dt), sync)
        elif s.api in scatter.APIS:  # a copy of the rows, then a scalar loop over each row's columns
            rows, idx, src = s.srcs
            dt = self.buffers[s.dst].buffer.dtype
            src_tile = isinstance(src, str)
            self.lines += scatter.row_lines(s.api, s.dst, rows, idx, self.layout(idx) is ir.Layout.ROW,
                                            src if src_tile else c_scalar(src, dt), src_tile, dt, self.ctype(s.dst), sync)
        elif s.api in positions.APIS:  # per row: CreateVecIndex / Duplicate of the row's index
            self.lines += positions.row_lines(s, c_scalar(s.srcs[0], DType.I64))
        elif s.api in ("ArgMax", "ArgMin"):
            dt = self.buffers[s.srcs[0]].buffer.dtype
            idx = next((b.buffer.name for b in self.buffers.values() if b.buffer.role is ir.BufferRole.ARG_INDEX), None)
            self.lines += arg_reduce.row_lines(s, find(self.buffers, ir.BufferRole.REDUCE_OUT, dtype=dt).name,
                                               find(self.buffers, ir.BufferRole.REDUCE_TMP, dtype=dt).name, dt, idx)
        else:  # one layout (mixed layouts are PerRow: select_instructions)
            count = {ir.Layout.ROWS: "count * rowPitch_", ir.Layout.COL: "count", ir.Layout.ROW: "rowLen_"}[self.layout(s.dst)]
            super().vec_op(s, count)

    def reduce_lines(self, api: str, out: str, buf: str, tmp: str, body: list[str]) -> list[str]:
        if self.layout(buf) is not ir.Layout.ROWS:  # per-row values: `count` of them, contiguous
            return super().reduce_lines(api, out, buf, tmp, body)
        return (["for (uint32_t i = 0; i < count; ++i) {",
                 *("    " + line for line in row_fold.lines(api, out, f"{buf}[i * rowPitch_]", tmp, self.ctype(buf)))]
                + ["    " + line for line in body] + ["}"])

    def row_ref(self, buf: str) -> str:
        return f"{buf}[i * rowPitch_]" if self.layout(buf) is ir.Layout.ROWS else buf

    def per_row(self, s: ir.PerRow) -> None:
        """Row by row: the row's per-row value `v` (if any) read by the scalar unit, then the ops over rowLen_ elements."""
        self.mark(s.span)
        if s.col is None and len(s.ops) == 1 and s.ops[0].api in strided_broadcast.APIS \
                and all(isinstance(o, str) for o in s.ops[0].srcs):  # a row vector: strips of all rows at once
            op = s.ops[0]
            strided = {o: self.layout(o) is ir.Layout.ROWS for o in (op.dst, *op.srcs)}
            self.lines += strided_broadcast.lines(op.api, op.dst, op.srcs, strided, self.ctype(op.dst), "rowPitch_", "count",
                                                  "rowLen_", "(rowLen_ + lanes - 1) / lanes * ((count + 254) / 255) >= count")
            return
        body = []
        for op in s.ops:
            like = self.buffers[next((o for o in op.srcs if isinstance(o, str)), op.dst)].buffer.dtype
            srcs = [self.row_ref(o) if isinstance(o, str) else c_scalar(o, like) for o in op.srcs]
            if (d := scalar_division.divisor(op, like)) is not None:  # x / v: one Muls, or two where 1 / v is not normal
                body += ["    " + line for line in scalar_division.lines(self.row_ref(op.dst), srcs[0],
                                                                         c_scalar(d, DType.F32), "rowLen_")]
                continue
            body.append(f"    {op.api}({self.row_ref(op.dst)}, {', '.join(srcs)}, rowLen_);")
        rows = []
        if s.col is not None:
            rows += sync("V_S", "per-row values are read by the scalar unit")
            body.insert(0, f"    const {self.ctype(s.col)} v = {s.col}.GetValue(i);")
        rows += ["for (uint32_t i = 0; i < count; ++i) {", *body, "}"]
        blocks = self.row_value_blocks(s)
        self.lines += row_value_broadcast.lines(binary(s), s.col, blocks, self.ctype(s.col), rows) if blocks else rows

    def row_value_blocks(self, s: ir.PerRow) -> str | None:
        """The Brcb scratch for this per-row op's values (lowering/passes/plan_row_value_blocks.py), if it has one."""
        op = binary(s)
        if op is None:
            return None
        dt = self.buffers[s.col].buffer.dtype
        if any(self.buffers[n].buffer.dtype is not dt for n in (op.dst, op.x)):
            return None
        return next((b.name for b in self.buffers.values() if b.buffer.role is ir.BufferRole.ROW_VALUE_BLOCKS
                     and b.buffer.dtype is dt), None)

    def gather(self, s: ir.VecOp) -> None:
        """dst[i] = rows[i, idx[i]]: the scalar unit reads one element per row (no gather in the API subset)."""
        rows, idx = s.srcs
        self.lines += [*sync("V_S", "the scalar unit reads UB written by the vector unit"),
                       "for (uint32_t i = 0; i < count; ++i) {",
                       f"    const uint32_t col = static_cast<uint32_t>({idx}.GetValue(i));",
                       f"    {s.dst}.SetValue(i, {rows}.GetValue(i * rowPitch_ + col));", "}", *sync("S_V")]

    def gather_elements(self, s: ir.VecOp) -> None:
        """dst[i, j] = src[i, idx[i, j]] (offsets: idx * sizeof(T), legalize.py): each row is copied to a row scratch
        of rowPitch_ elements first, so an index past the row reads its padding (never written: the emulator reports it
        reaching GM) or leaves the scratch (Gather's bounds check), never the next row."""
        src, offsets = s.srcs
        dt = self.buffers[src].buffer.dtype
        row = find(self.buffers, ir.BufferRole.REDUCE_TMP, dtype=dt).name
        by_row = "" if self.layout(offsets) is ir.Layout.ROW else "[i * rowPitch_]"  # a row vector: every row's columns
        self.lines += ["for (uint32_t i = 0; i < count; ++i) {",
                       f"    DataCopy({row}, {src}[i * rowPitch_], static_cast<uint32_t>(rowPitch_));",
                       f"    Gather({s.dst}[i * rowPitch_], {row}, {offsets}{by_row}.ReinterpretCast<uint32_t>(), 0u, "
                       "static_cast<uint32_t>(rowLen_));", "}"]

    def reduce(self, s: ir.VecOp) -> None:
        (src,) = s.srcs
        dt = self.buffers[src].buffer.dtype
        out = find(self.buffers, ir.BufferRole.REDUCE_OUT, dtype=dt).name
        tmp = find(self.buffers, ir.BufferRole.REDUCE_TMP, dtype=dt).name
        if self.ctype(s.dst) == dt.ctype:  # the count form's dst needs element alignment only (ReduceSum.md): row i's
            # value goes straight to element i of the per-row values, no scalar step per row (session 34)
            per_row = ["for (uint32_t i = 0; i < count; ++i) {",
                       *("    " + line for line in row_fold.lines(s.api, f"{s.dst}[i]", f"{src}[i * rowPitch_]", tmp,
                                                                    dt.ctype)), "}"]
            fold = next((b.buffer.name for b in self.buffers.values() if b.buffer.role is ir.BufferRole.FOLD_TMP
                         and b.buffer.dtype is dt), None)
            if fold is not None and tile_fold.applies(s.api) and self.layout(src) is ir.Layout.ROWS:
                per_row = tile_fold.lines(s.api, s.dst, src, fold, tmp, dt.ctype, per_row)
            self.lines += per_row
            return
        self.lines += ["for (uint32_t i = 0; i < count; ++i) {",
                       *("    " + line for line in row_fold.lines(s.api, out, f"{src}[i * rowPitch_]", tmp, dt.ctype)),
                       *sync("V_S", indent="    "), f"    {s.dst}.SetValue(i, {out}.GetValue(0));",
                       *sync("S_V", indent="    "), "}"]


def write_stages(tl: ir.TileLoop, new_writer) -> dict[ir.StageKind, list[str]]:
    """The C++ lines of each stage of a scheduled tile loop; `new_writer()` gives a fresh stage writer."""
    stages: dict[ir.StageKind, list[str]] = {k: [] for k in ir.StageKind}
    for stage in tl.body:
        w = new_writer()
        for s in stage.body:
            match s:
                case ir.CopyIn():
                    w.copy_in(s)
                case ir.CopyOut():
                    w.copy_out(s)
                case ir.VecOp():
                    w.vec_op(s)
                case ir.PerRow():
                    w.per_row(s)
                case ir.Accumulate():
                    w.accumulate(s)
                case ir.SlotAccumulate():
                    w.slot_accumulate(s)
        stages[stage.kind] = w.lines
    return stages


def compute_frame(buffers: tuple[BufferView, ...]) -> tuple[list[str], list[str]]:
    """Lines around the Compute stage: take inputs from VECIN queues, allocate outputs in VECOUT
    queues and bind scratch TBufs (head); free the inputs and enqueue the outputs (tail)."""
    head, tail = [], []
    for b in buffers:
        c, name = b.buffer.dtype.ctype, b.name
        if b.buffer.position is ir.Position.VECIN:
            head.append(f"LocalTensor<{c}> {name} = {b.member}.DeQue<{c}>();")
            tail.append(f"{b.member}.FreeTensor({name});")
        elif b.buffer.position is ir.Position.VECOUT:
            head.append(f"LocalTensor<{c}> {name} = {b.member}.AllocTensor<{c}>();")
            tail.insert(0, f"{b.member}.EnQue<{c}>({name});")
        else:
            head.append(f"LocalTensor<{c}> {name} = {b.member}.Get<{c}>();")
    return head, tail


class ScalarWriter:
    """Kernel-scope scalar code: scalar assignments (VectorMath ops run on the vector unit on one element:
    the scalar unit has no such instructions) and single-element stores."""

    #: The UB block of one-element math (after the combine slots).
    MATH_BUF = "scalarBuf_.Get<float>()[GetBlockNum() * 8]"

    def __init__(self, ctx: PassContext, tensors: dict[str, TensorView], kernel: ir.Kernel,
                 math_buf: str | None = None):
        self.ctx = ctx
        self.tensors = tensors
        self.math_buf = math_buf or self.MATH_BUF
        self.lines: list[str] = []
        self.n = 0
        self.math = False
        # temporaries are members' look-alikes (`s0_`): never the name of a kernel scalar (`s0` -> `s0_`)
        self.taken = {p.name for p in kernel.params} | set(kernel.symbols) | {getattr(s, "name", "")
                                                                            for s in kernel.body}

    def fresh(self, base: str) -> str:
        while f"{base}{self.n}" in self.taken:
            self.n += 1
        name = f"{base}{self.n}"
        self.n += 1
        self.taken.add(name)
        return name

    def one(self, api: str, arg: str, what: str) -> str:
        """`api` (Exp, Ln, ...) on one element on the vector unit; the name of the const float holding it."""
        name = self.fresh("s") + "_"
        if not self.math:
            self.math = True
            self.lines.append(f"LocalTensor<float> math = {self.math_buf};")
        self.lines += [f"math.SetValue(0, {arg});  // {what} on the vector unit (one element)", *sync("S_V"),
                       f"{api}(math, math, 1);", *sync("V_S"), f"const float {name} = math.GetValue(0);"]
        return name

    def power(self, base: str, exponent: str) -> str:
        """b ** e with torch.pow's semantics (the scalar twin of legalize._power): exp(e * ln|b|), where |b| = 1
        takes exp(0) = 1 (so 1 ** nan = 1 and (-1) ** inf = 1); negated for b < 0 and an odd integer e, NaN for
        b < 0 and a fractional e (but b = -inf: inf or 0); b = 0 gives 0 (e > 0) or inf (e < 0), negative for -0
        and an odd e; e == 0 gives 1 (even for a NaN b). Whether e is an integer: trunc through int64, asked only
        for a finite e below 2^24 (above, every float is an even integer; a NaN or inf is never cast)."""
        b, e = self.fresh("powBase") + "_", self.fresh("powExp") + "_"
        self.lines += [f"const float {b} = {base};", f"const float {e} = {exponent};"]
        ln = self.one("Ln", f"{b} < 0.0f ? -{b} : {b}", "ln|b| of b ** e")
        m = self.one("Exp", f"({b} == 1.0f || {b} == -1.0f) ? 0.0f : {ln} * {e}", "exp(e ln|b|) of b ** e")
        big = f"({e} >= 16777216.0f || {e} <= -16777216.0f)"  # every float this large is an even integer
        whole, odd = self.fresh("powWhole") + "_", self.fresh("powOdd") + "_"
        self.lines += [f"const bool {whole} = {big} || ({e} == {e} && static_cast<float>(static_cast<int64_t>({e})) == {e});",
                       f"const bool {odd} = !{big} && {whole} && static_cast<int64_t>({e}) % 2 != 0;"]
        zero = f"({e} > 0.0f ? 0.0f : (1.0f / 0.0f))"
        return (f"({e} == 0.0f ? 1.0f : {b} == 0.0f ? ((1.0f / {b} < 0.0f && {odd}) ? -{zero} : {zero}) : "
                f"!({b} < 0.0f) ? {m} : {whole} ? ({odd} ? -{m} : {m}) : "
                f"{b} == -(1.0f / 0.0f) ? {m} : (0.0f / 0.0f))")

    def scalar(self, e: ir.Expr) -> str:
        """A C++ float expression for `e`; its VectorMath ops run on the vector unit first."""
        def lift(x: ir.Expr) -> ir.Expr:
            if isinstance(x, ir.Op):
                return replace(x, args=tuple(lift(a) for a in x.args))
            if isinstance(x, ir.VectorMath):
                args = [c_scalar(lift(a), DType.F32) for a in x.args]
                if x.op == "pow":
                    value = self.power(*args)
                    name = self.fresh("s")
                    self.lines.append(f"const float {name}_ = {value};")
                else:
                    name = self.one(OPS[x.op].vector_math, args[0], x.op).removesuffix("_")
                return ir.Ref(name, ir.scalar_of(DType.F32), x.span)
            return x
        return c_scalar(lift(e), DType.F32)
