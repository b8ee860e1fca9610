"""Emit the kernel-direct AscendC project from fully lowered IR (after schedule_stages).

Every decision is made here in Python and handed to the jinja2 templates in
`codegen_templates/` as a small view model; the templates only lay the code out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources

import jinja2

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from ascend_dsl.dtypes import DType

from . import acc_workspace, emit_slots, launch_scalars
from .context import PassContext
from .emit_host import host_files
from .emit_window import build_window_view
from .passes.select_instructions import ROW_LENGTH
from .scalar_loops import SCAN_APIS, reduce_prod_lines, scan_lines
from .tiling_rules import AUTO_TILE_GRANULE, MIN_ELEMS_PER_CORE, MIN_TILES_PER_CORE, REPEAT_BYTES, block_granule

GENERATOR = "ascend-dsl"


@dataclass(frozen=True)
class EmittedProject:
    name: str
    files: dict[str, str] = field(default_factory=dict)
    manifest: dict = field(default_factory=dict)


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    root = resources.files("codegen_templates")
    loader = jinja2.FunctionLoader(lambda name: root.joinpath(name).read_text())
    return jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined, trim_blocks=True,
                              lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)


def render(template: str, **view) -> str:
    return _env().get_template(template).render(**view)


def camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_") if p)


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


_C_COMPARE = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def _integer(e: ir.Expr) -> bool:
    return not e.type.dtype.is_float and e.type.dtype is not DType.BOOL


#: A float scalar cast to an integer: truncation toward zero, saturating, NaN -> 0 (as the vector Cast does).
_TO_INT = ("[](float v) {{ return v != v ? int64_t(0) : v <= -2147483648.0f ? int64_t(-2147483647 - 1) : "
           "v >= 2147483647.0f ? int64_t(2147483647) : static_cast<int64_t>(v); }}({})")


def c_scalar(e: ir.Expr, dtype: DType) -> str:
    """A scalar operand as a C++ expression of type `dtype` (immediates and tiling members). Integer math (shape
    symbols, i32 parameters) is computed in int64_t, float math in float, then converted to `dtype`."""
    match e:
        case ir.Const(value=v):
            return c_literal(v, dtype)
        case ir.Ref(name=n, type=t):
            member = "D_" if n == ROW_LENGTH else f"{n}_"
            return member if t.dtype is dtype else f"static_cast<{dtype.ctype}>({member})"
        case ir.Op(op="cast", args=(a,)) if _integer(e) and a.type.dtype.is_float:
            return f"static_cast<{dtype.ctype}>({_TO_INT.format(c_scalar(a, DType.F32))})"
        case ir.Op(op="cast", args=(a,)) if e.type.dtype in (DType.F16, DType.BF16):  # rounds to the narrow dtype
            narrow = c_scalar(a, e.type.dtype)
            return narrow if dtype is e.type.dtype else f"static_cast<{dtype.ctype}>({narrow})"
        case ir.Op(op="cast", args=(a,)):
            return c_scalar(a, dtype)
        case ir.Op(op=op, args=(a, b)) if op in ("add", "sub", "mul") and _integer(e):
            sym = {"add": "+", "sub": "-", "mul": "*"}[op]
            return f"static_cast<{dtype.ctype}>({c_scalar(a, DType.I64)} {sym} {c_scalar(b, DType.I64)})"
        case ir.Op(op="neg", args=(a,)) if _integer(e):
            return f"static_cast<{dtype.ctype}>(-{c_scalar(a, DType.I64)})"
        case ir.Op(op=op, args=(a, b)) if op in ("max", "min") and _integer(e):
            x, y = c_scalar(a, DType.I64), c_scalar(b, DType.I64)
            return f"static_cast<{dtype.ctype}>({x} {'>' if op == 'max' else '<'} {y} ? {x} : {y})"
        case ir.Op(op=op, args=(a, b)) if op in _C_COMPARE and _integer(a) and _integer(b):
            return f"({c_scalar(a, DType.I64)} {_C_COMPARE[op]} {c_scalar(b, DType.I64)})"
        case ir.Op(op="neg", args=(a,)):
            return f"static_cast<{dtype.ctype}>(-static_cast<float>({c_scalar(a, dtype)}))"
        case ir.Op(op="reciprocal", args=(a,)):
            return f"static_cast<{dtype.ctype}>(1.0f / static_cast<float>({c_scalar(a, dtype)}))"
        case ir.Op(op=op, args=(a, b)) if op in ("add", "sub", "mul", "div"):
            sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[op]
            return (f"static_cast<{dtype.ctype}>(static_cast<float>({c_scalar(a, dtype)}) {sym} "
                    f"static_cast<float>({c_scalar(b, dtype)}))")
        case ir.Op(op=op, args=(a, b)) if op in _C_COMPARE:
            return f"(static_cast<float>({c_scalar(a, DType.F32)}) {_C_COMPARE[op]} static_cast<float>({c_scalar(b, DType.F32)}))"
        case ir.Op(op="select", args=(m, a, b)):
            return f"({c_scalar(m, DType.BOOL)} ? {c_scalar(a, dtype)} : {c_scalar(b, dtype)})"
        case ir.Op(op=op, args=(a, b)) if op in ("max", "min"):
            x, y = c_scalar(a, dtype), c_scalar(b, dtype)
            cmp = ">" if op == "max" else "<"
            return f"(static_cast<float>({x}) {cmp} static_cast<float>({y}) ? {x} : {y})"
    raise DslError.at("UNSUPPORTED", f"scalar expression '{getattr(e, 'op', e)}' cannot be lowered", e.span,
                      "compute it on a tile instead")


# ----------------------------------------------------------------------------- view model


def _phases(kernel: ir.Kernel) -> list[tuple[ir.SplitLoop, ir.TileLoop]]:
    """The split loops with their one tile loop each; every phase splits the same extent the same way."""
    out = []
    for split in kernel.phases:
        if len(split.body) != 1:
            raise DslError.at("UNSUPPORTED", "this version lowers one tile loop per split loop", split.body[1].span,
                              "merge the loops, or write a second split loop after this one")
        out.append((split, split.body[0]))
    first_split, first_tile = out[0]
    for split, tl in out[1:]:
        if split.extent != first_split.extent or tl.row_shape != first_tile.row_shape:
            raise DslError.at("UNSUPPORTED", "every split loop of a kernel splits the same extent with the same "
                              "tensors", split.span, f"split({' * '.join(first_split.extent)}, cores=AIV)")
    return out


def _loc(ctx: PassContext, span) -> str:
    return f"{ctx.source_name}:{span.line}"


def _buffer_views(tl: ir.TileLoop, suffix: str = "", tile: str | None = None) -> list[dict]:
    """Queue/TBuf members of one phase's buffers; phases after the first get a numeric suffix. `tile`:
    the member holding the tile length (default `tileLength<suffix>_`)."""
    views = []
    for b in tl.buffers_decl:
        cap = b.name[:1].upper() + b.name[1:]
        if b.position is ir.Position.VECCALC:
            member = f"{b.name}Buf{suffix}"
            decl = "TBuf<TPosition::VECCALC>"
            init = _bytes_expr(b, suffix, tile)
        else:
            prefix = "inQueue" if b.position is ir.Position.VECIN else "outQueue"
            member = f"{prefix}{cap.removesuffix('Local')[:1].upper()}{cap.removesuffix('Local')[1:]}{suffix}"
            decl = f"TQue<TPosition::{b.position.value}, 1>"
            init = f"{b.num}, {_bytes_expr(b, suffix, tile)}"
        views.append({"name": b.name, "member": member, "decl": decl, "init_args": init, "buffer": b})
    return views


def _bytes_expr(b: ir.Buffer, suffix: str = "", tile: str | None = None) -> str:
    """InitBuffer length of one buffer, in terms of the tile length (elements, or rows of Dp_)."""
    tile = tile or f"tileLength{suffix}_"
    per_bits = {
        ir.Layout.FLAT: tile,
        ir.Layout.ROWS: f"{tile} * Dp_",
        ir.Layout.COL: f"({tile} + 127) / 128 * 128",
        ir.Layout.ROW: "Dp_",
        ir.Layout.PLANE: "tiling.inTileElems",  # plane loops size their buffers on the host (emit_window.py)
        ir.Layout.POOLED: "tiling.outTileElems",
        ir.Layout.BOX: "boxElems",  # box loops size their buffers on the host (emit_box.py)
    }
    if b.layout is ir.Layout.BLOCK:
        return "32"
    if b.layout is ir.Layout.SLOTS:  # a slot accumulator's vector: whole 32-byte blocks
        return f"{emit_slots.acc_of(b.name)}Pad_ * sizeof(float)"
    if b.layout is ir.Layout.REPEATS:  # two elements per 256-byte repeat (ReduceMax/Min: value and index; ReduceMax.md), whole 32-byte blocks
        return f"(({tile} * sizeof({b.dtype.ctype}) + 255) / 256 * 2 * sizeof({b.dtype.ctype}) + 31) / 32 * 32"
    elems = per_bits[b.layout]
    if b.bits == 1:
        return f"({elems} + 255) / 256 * 32"  # one bit per element, whole 32-byte blocks
    return f"{elems} * sizeof({b.dtype.ctype})"


def _host_bytes(b: ir.Buffer) -> str:
    """The same length on the host, for tiles of `r` rows (see tiling.h.jinja)."""
    elems = {ir.Layout.ROWS: "r * padded", ir.Layout.COL: "colElems", ir.Layout.ROW: "padded"}
    if b.layout is ir.Layout.BLOCK:
        return "32"
    if b.layout is ir.Layout.SLOTS:
        return emit_slots.host_ub(emit_slots.acc_of(b.name))
    return f"({elems[b.layout]} * {b.bits} / 8 + 31) / 32 * 32"


class _StageWriter:
    def __init__(self, ctx: PassContext, buffers: dict[str, dict], tensors: dict[str, dict]):
        self.ctx = ctx
        self.buffers = buffers
        self.tensors = tensors
        self.lines: list[str] = []
        self.last_line = -1

    def mark(self, span) -> None:
        if span.line != self.last_line:
            self.lines.append(f"// {_loc(self.ctx, span)}")
            self.last_line = span.line

    def ctype(self, buf: str) -> str:
        return self.buffers[buf]["buffer"].dtype.ctype

    def copy_in(self, s: ir.CopyIn) -> None:
        q, c = self.buffers[s.buffer]["member"], self.ctype(s.buffer)
        self.mark(s.span)
        if s.index.acc:  # s[r]: a slot accumulator's totals, one per row
            self.lines += emit_slots.copy_in_lines(s, q, self.buffers[f"accTot_{s.tensor}"]["member"])
            return
        if s.index.period:  # per-channel values: rows n*C + c read w[c], one scalar read per row
            gm = self.tensors[s.tensor]["gm"]
            self.lines += [f"LocalTensor<{c}> {s.buffer} = {q}.AllocTensor<{c}>();",
                           "for (uint32_t i = 0; i < count; ++i) {",
                           f"    {s.buffer}.SetValue(i, {gm}.GetValue((rowStart_ + offset + i) % {gm}Period_));", "}",
                           "SetFlag<HardEvent::S_V>(EVENT_ID0);  // scalar writes before the vector unit reads them",
                           "WaitFlag<HardEvent::S_V>(EVENT_ID0);", f"{q}.EnQue({s.buffer});"]
            return
        self.lines += [f"LocalTensor<{c}> {s.buffer} = {q}.AllocTensor<{c}>();",
                       self.copy_call("GmToUb", s.buffer, self.tensors[s.tensor]["gm"]), f"{q}.EnQue({s.buffer});"]

    def copy_out(self, s: ir.CopyOut) -> None:
        q, c = self.buffers[s.buffer]["member"], self.ctype(s.buffer)
        self.mark(s.span)
        self.lines += [f"LocalTensor<{c}> {s.buffer} = {q}.DeQue<{c}>();",
                       self.copy_call("UbToGm", s.buffer, self.tensors[s.tensor]["gm"]),
                       f"{q}.FreeTensor({s.buffer});"]

    def copy_call(self, way: str, buf: str, gm: str) -> str:
        """The copy-helper call moving this tile of `buf` (way: "GmToUb" or "UbToGm")."""
        return _copy(way, "", buf, f"{gm}[offset]", "count")

    def accumulate(self, s: ir.Accumulate) -> None:
        """Reduce the tile to one value and fold it, on the vector unit, into this core's running value
        (an f32 UB block read by the scalar unit once, after the loop)."""
        self.mark(s.span)
        buf = s.value.name
        dt = self.buffers[buf]["buffer"].dtype
        if s.reduce == "slots":
            self.lines += emit_slots.accumulate_lines(s, buf, dt.ctype)
            return
        api = {"reduce_sum": "ReduceSum", "reduce_max": "ReduceMax", "reduce_min": "ReduceMin"}[s.reduce]
        out, tmp, slot = f"reduceOut_{dt}", f"accTmp_{dt}", f"accSlot_{s.name}"
        body = []
        if dt is not DType.F32:  # the running value is f32
            body.append(f"Cast(accCast_f32, {out}, RoundMode::CAST_NONE, 1);")
            out = "accCast_f32"
        body.append(f"{ {'add': 'Add', 'max': 'Max', 'min': 'Min'}[s.combine]}({slot}, {slot}, {out}, 1);")
        self.lines += self.reduce_lines(api, f"reduceOut_{dt}", buf, tmp, body)

    def reduce_lines(self, api: str, out: str, buf: str, tmp: str, body: list[str]) -> list[str]:
        return [f"{api}({out}, {buf}, {tmp}, static_cast<int32_t>(count));", *body]

    def vec_op(self, s: ir.VecOp, count: str = "count") -> None:
        """One instruction over `count` elements (a C++ expression)."""
        self.mark(s.span)
        attrs = dict(s.attrs)
        dst_t = self.buffers[s.dst]["buffer"].dtype
        srcs = []
        for o in s.srcs:
            if isinstance(o, str):
                srcs.append(o)
            else:  # scalar operand: typed like the tensor operand it pairs with
                tensor_srcs = [x for x in s.srcs if isinstance(x, str)]
                like = self.buffers[tensor_srcs[0]]["buffer"].dtype if tensor_srcs else dst_t
                if s.api == "Select":
                    like = dst_t
                srcs.append(c_scalar(o, like))
        if s.api in ("Compare", "Compares"):
            elems = REPEAT_BYTES // self.buffers[s.srcs[0]]["buffer"].dtype.size
            rounded = f"({count} + {elems - 1}) / {elems} * {elems}"  # Compare covers whole 256-byte repeats
            self.lines.append(f"{s.api}({s.dst}, {', '.join(srcs)}, CMPMODE::{attrs['cmp']}, {rounded});")
        elif s.api == "Select":
            self.lines.append(f"Select({s.dst}, {', '.join(srcs)}, SELMODE::{attrs['mode']}, {count});")
        elif s.api == "Cast":
            self.lines.append(f"Cast({s.dst}, {srcs[0]}, RoundMode::{attrs['round']}, {count});")
        elif s.api == "DataCopy":  # UB -> UB copies whole 32-byte blocks (the buffers are padded to them)
            elems = 32 // dst_t.size
            self.lines.append(f"DataCopy({s.dst}, {srcs[0]}, ({count} + {elems - 1}) / {elems} * {elems});")
        else:
            self.lines.append(f"{s.api}({s.dst}, {', '.join(srcs)}, {count});")


def _copy(way: str, kind: str, ub: str, gm: str, sizes: str) -> str:
    """A call of the emitted copy helpers (codegen_templates/copy_helpers_*.cpp.jinja)."""
    dst, src = (ub, gm) if way == "GmToUb" else (gm, ub)
    return f"Copy{kind}{way}({dst}, {src}, {sizes});"


_TO_SCALAR_FORM = {"Add": "Adds", "Mul": "Muls", "Max": "Maxs", "Min": "Mins"}


class _RowStageWriter(_StageWriter):
    """Row loops: whole-row tiles live in UB as `count` rows of Dp_ elements (D_ of them data)."""

    def layout(self, buf: str) -> ir.Layout:
        return self.buffers[buf]["buffer"].layout

    def copy_call(self, way: str, buf: str, gm: str) -> str:
        match self.layout(buf):
            case ir.Layout.ROWS:  # GM rows are D_ apart, UB rows Dp_ apart
                return _copy(way, "Rows", buf, f"{gm}[offset * D_]", "count, D_, Dp_")
            case ir.Layout.COL:
                return _copy(way, "", buf, f"{gm}[offset]", "count")
            case _:
                return _copy(way, "", buf, gm, "D_")

    def count_for(self, layout: ir.Layout) -> str:
        return {ir.Layout.ROWS: "count * Dp_", ir.Layout.COL: "count", ir.Layout.ROW: "D_"}[layout]

    def vec_op(self, s: ir.VecOp, count: str = "count") -> None:
        self.mark(s.span)
        dst_layout = self.layout(s.dst)
        tiles = [o for o in s.srcs if isinstance(o, str)]
        if s.api in SCAN_APIS.values():
            self.lines += scan_lines(s, self.ctype(s.dst))
            return None
        if s.api == "ReduceProd":
            self.lines += reduce_prod_lines(s, self.ctype(s.dst))
            return None
        if s.api.startswith("Reduce"):
            return self.reduce(s)
        if s.api == "GatherRows":
            return self.gather(s)
        if all(self.layout(o) is dst_layout for o in tiles):
            if s.api in ("Compare", "Compares") and dst_layout is not ir.Layout.ROWS:
                raise DslError.at("UNSUPPORTED", "comparisons of per-row values are not supported yet", s.span,
                                  "compare whole rows instead")
            return super().vec_op(s, self.count_for(dst_layout))
        self.per_row(s, dst_layout)

    def reduce_lines(self, api: str, out: str, buf: str, tmp: str, body: list[str]) -> list[str]:
        if self.layout(buf) is not ir.Layout.ROWS:  # per-row values: `count` of them, contiguous
            return super().reduce_lines(api, out, buf, tmp, body)
        return (["for (uint32_t i = 0; i < count; ++i) {",
                 f"    {api}({out}, {buf}[i * Dp_], {tmp}, static_cast<int32_t>(D_));"]
                + ["    " + line for line in body] + ["}"])

    def row_ref(self, buf: str) -> str:
        return f"{buf}[i * Dp_]" if self.layout(buf) is ir.Layout.ROWS else buf

    def per_row(self, s: ir.VecOp, dst_layout: ir.Layout) -> None:
        if dst_layout is not ir.Layout.ROWS or s.api not in ("Add", "Sub", "Mul", "Div", "Max", "Min"):
            raise DslError.at("UNSUPPORTED", f"{s.api} mixing whole rows with per-row values or row vectors is not "
                              "supported yet", s.span)
        a, b = s.srcs
        dst = self.row_ref(s.dst)
        cols = [o for o in (a, b) if self.layout(o) is ir.Layout.COL]
        if not cols:  # a row vector: the same D_ elements against every row
            self.lines += ["for (uint32_t i = 0; i < count; ++i) {",
                           f"    {s.api}({dst}, {self.row_ref(a)}, {self.row_ref(b)}, D_);", "}"]
            return
        c = self.ctype(cols[0])
        col_first = self.layout(a) is ir.Layout.COL
        x = self.row_ref(b if col_first else a)
        if s.api in _TO_SCALAR_FORM:
            body = [f"{_TO_SCALAR_FORM[s.api]}({dst}, {x}, v, D_);"]
        elif s.api == "Sub":
            body = ([f"Muls({dst}, {x}, static_cast<{c}>(-1.0f), D_);", f"Adds({dst}, {dst}, v, D_);"] if col_first
                    else [f"Adds({dst}, {x}, static_cast<{c}>(-static_cast<float>(v)), D_);"])
        else:  # Div; v / x as v * (1 / x) so dst may alias x
            body = ([f"Reciprocal({dst}, {x}, D_);", f"Muls({dst}, {dst}, v, D_);"] if col_first
                    else [f"Muls({dst}, {x}, static_cast<{c}>(1.0f / static_cast<float>(v)), D_);"])
        self.lines += ["SetFlag<HardEvent::V_S>(EVENT_ID0);  // per-row values are read by the scalar unit",
                       "WaitFlag<HardEvent::V_S>(EVENT_ID0);",
                       "for (uint32_t i = 0; i < count; ++i) {", f"    const {c} v = {cols[0]}.GetValue(i);"]
        self.lines += ["    " + line for line in body] + ["}"]

    def gather(self, s: ir.VecOp) -> None:
        """dst[i] = rows[i, idx[i]]: the scalar unit reads one element per row (no gather in the API subset)."""
        rows, idx = s.srcs
        self.lines += ["SetFlag<HardEvent::V_S>(EVENT_ID0);  // the scalar unit reads UB written by the vector unit",
                       "WaitFlag<HardEvent::V_S>(EVENT_ID0);",
                       "for (uint32_t i = 0; i < count; ++i) {",
                       f"    const uint32_t col = static_cast<uint32_t>({idx}.GetValue(i));",
                       f"    {s.dst}.SetValue(i, {rows}.GetValue(i * Dp_ + col));", "}",
                       "SetFlag<HardEvent::S_V>(EVENT_ID0);", "WaitFlag<HardEvent::S_V>(EVENT_ID0);"]

    def reduce(self, s: ir.VecOp) -> None:
        (src,) = s.srcs
        dt = self.buffers[src]["buffer"].dtype
        out, tmp = f"reduceOut_{dt}", f"reduceTmp_{dt}"
        self.lines += ["for (uint32_t i = 0; i < count; ++i) {",
                       f"    {s.api}({out}, {src}[i * Dp_], {tmp}, static_cast<int32_t>(D_));",
                       "    SetFlag<HardEvent::V_S>(EVENT_ID0);",
                       "    WaitFlag<HardEvent::V_S>(EVENT_ID0);",
                       f"    {s.dst}.SetValue(i, {out}.GetValue(0));",
                       "    SetFlag<HardEvent::S_V>(EVENT_ID0);",
                       "    WaitFlag<HardEvent::S_V>(EVENT_ID0);", "}"]


def _gm_view(kernel: ir.Kernel, split: ir.SplitLoop, tl: ir.TileLoop, t: dict, start: str,
             count: str) -> tuple[list[str], bool]:
    """Init lines of tensor `t`'s GM view for a share of `count` rows (or elements) from `start`, and
    whether the view depends on the share (tensors split with it) rather than being whole."""
    p = next(p for p in kernel.tensors if p.name == t["name"])
    base = f"(__gm__ {t['ctype']}*){t['name']}"
    if p.name in _periodic_tensors(kernel):
        period = " * ".join(f"tiling.{d}" for d in p.shape)
        return [f"{t['gm']}Period_ = {period};", f"{t['gm']}.SetGlobalBuffer({base}, {t['gm']}Period_);"], False
    if p.name in _scalar_store_only(kernel):
        return [f"{t['gm']}.SetGlobalBuffer({base}, 1);  // element 0 only (kernel-scope load/store)"], False
    if tl.row_shape and len(p.shape) > len(split.extent) and tuple(p.shape[:len(split.extent)]) == split.extent:
        elems = "D_" if count == "1" else f"{count} * D_"
        return [f"{t['gm']}.SetGlobalBuffer({base} + {start} * D_, {elems});"], True
    if tl.row_shape and " * ".join(map(str, p.shape)) == tl.row_shape[1]:
        return [f"{t['gm']}.SetGlobalBuffer({base}, D_);"], False
    return [f"{t['gm']}.SetGlobalBuffer({base} + {start}, {count});"], True


def share_views(kernel: ir.Kernel, tensors: list[dict], start: str, count: str) -> list[str]:
    """The Init lines that depend on a core's share of the first split loop's rows, for a share of
    `count` rows from row `start`: the global row of per-channel reads and the views of the split tensors
    (rows split over a group of cores re-point them at the group's row: lowering/row_groups.py)."""
    split, tl = _phases(kernel)[0]
    lines = [f"rowStart_ = {start};"] if _periodic_tensors(kernel) or kernel.slot_accumulators else []
    for t in tensors:
        view, shared = _gm_view(kernel, split, tl, t, start, count)
        lines += view if shared else []
    return lines


def _init_lines(kernel: ir.Kernel, ctx: PassContext, split: ir.SplitLoop, tl: ir.TileLoop, tensors, scalars,
                phases) -> list[str]:
    extent = " * ".join(f"tiling.{s}" for s in split.extent)
    lines = [f"// {_loc(ctx, split.span)}: this core's contiguous share of [0, {' * '.join(split.extent)})"
             + (" rows" if tl.row_shape else ""),
             f"const uint64_t total = {extent};",
             "const uint64_t start = tiling.blockLength * GetBlockIdx();",
             "blockLength_ = start < total ? (total - start < tiling.blockLength ? total - start : "
             "tiling.blockLength) : 0;",
             "tileLength_ = tiling.tileLength;"]
    lines += [f"tileLength{k}_ = tiling.tileLength{k};" for k in range(1, len(phases))]
    if tl.row_shape:
        row_len = " * ".join(f"tiling.{d}" for d in tl.row_shape[1].split(" * "))
        lines += [f"D_ = {row_len};", "Dp_ = (D_ + 127) / 128 * 128;  // UB row pitch: whole repeats"]
    lines += [f"{s['member']} = tiling.{s['name']};" for s in scalars]
    lines += [f"{sym}_ = tiling.{sym};" for sym in _value_symbols(kernel, tl)]
    if _periodic_tensors(kernel) or kernel.slot_accumulators:
        lines.append("rowStart_ = start;  // per-channel tensors are indexed by the global row")
    lines += [line for t in tensors for line in _gm_view(kernel, split, tl, t, "start", "blockLength_")[0]]
    for s in kernel.body:
        if isinstance(s, ir.ScalarLoad):  # one scalar read of GM per core, before any tile
            lines.append(f"{s.name}_ = static_cast<float>({s.tensor}Gm.GetValue(0));  // {_loc(ctx, s.span)}")
    lines += launch_scalars.init_lines(kernel)
    lines += _prologue(kernel, ctx, {t["name"]: t for t in tensors})
    if kernel.slot_accumulators:
        lines += emit_slots.init_lines(kernel, ctx)
    elif kernel.accumulators:
        lines.append(f"workspaceGm_.SetGlobalBuffer((__gm__ float*)workspace, {acc_workspace.floats(kernel)});  "
                     + ("// two 32-byte slots per core: consecutive combines alternate between them"
                        if acc_workspace.regions(kernel) > 1 else "// one 32-byte slot per core"))
    return lines


def _value_symbols(kernel: ir.Kernel, tl: ir.TileLoop) -> list[str]:
    """Shape symbols read as values (e.g. `total / N`) that need a member; D_ exists in row loops."""
    symbols = set(kernel.symbols)
    used: dict[str, None] = {}
    for s in ir.walk(kernel.body):
        value = getattr(s, "value", None)
        if isinstance(s, ir.ScalarAssign) and s.launch:  # computed by the host
            continue
        if isinstance(s, (ir.Assign, ir.Store, ir.Accumulate, ir.ScalarAssign, ir.ScalarStore)) and value is not None:
            for e in ir.walk_expr(value):
                if isinstance(e, ir.Ref) and e.name in symbols:
                    used.setdefault(e.name)
        if isinstance(s, ir.VecOp):
            for o in s.srcs:
                if not isinstance(o, str):
                    used.update({e.name: None for e in ir.walk_expr(o) if isinstance(e, ir.Ref) and e.name in symbols})
    row_len = tl.row_shape[1] if tl.row_shape else None
    return [s for s in used if s != row_len]  # a row loop's D_ already holds a one-symbol row length


def _periodic_tensors(kernel: ir.Kernel) -> list[str]:
    return list(dict.fromkeys(s.tensor for s in ir.walk(kernel.body)
                              if isinstance(s, ir.CopyIn) and s.index.period))


def _scalar_store_only(kernel: ir.Kernel) -> set[str]:
    tiled = {s.tensor for s in ir.walk(kernel.body) if isinstance(s, (ir.Store, ir.CopyOut, ir.CopyIn))}
    return {s.tensor for s in kernel.body if isinstance(s, (ir.ScalarStore, ir.ScalarLoad))} - tiled


_SCALAR_MATH = {"sqrt": "Sqrt", "rsqrt": "Rsqrt", "exp": "Exp", "log": "Ln", "abs": "Abs", "reciprocal": None}


class _ScalarWriter:
    """Kernel-scope scalar code after a split loop: the cross-core combine, scalar assignments (sqrt,
    exp, ln go through the vector unit on one element: the scalar unit has no such instructions) and
    the single-element stores of core 0."""

    #: The UB block of one-element math (after the combine slots).
    MATH_BUF = "scalarBuf_.Get<float>()[GetBlockNum() * 8]"

    def __init__(self, ctx: PassContext, tensors: dict[str, dict], kernel: ir.Kernel | None = None):
        self.ctx = ctx
        self.tensors = tensors
        self.lines: list[str] = []
        self.n = 0
        # temporaries are members' look-alikes (`s0_`): never the name of a kernel scalar (`s0` -> `s0_`)
        self.taken = {p.name for p in kernel.params} | set(kernel.symbols) | {
            getattr(s, "name", "") for s in kernel.body} if kernel is not None else set()
        self.math = False

    def fresh(self, base: str) -> str:
        while f"{base}{self.n}" in self.taken:
            self.n += 1
        name = f"{base}{self.n}"
        self.n += 1
        self.taken.add(name)
        return name

    def combine(self, accs: list[ir.AccDecl], combines: dict[str, str], span, region: str = "0") -> None:
        """`region`: where this combine's slots start in the workspace (lowering/acc_workspace.py)."""
        if len(accs) > 8:
            raise DslError.at("UNSUPPORTED", f"{len(accs)} accumulators in one split loop; at most 8 fit the "
                              "32-byte slot each core writes", span, "split the work into two loops")
        self.lines += [f"// {_loc(self.ctx, span)}: combine {', '.join(a.name for a in accs)} across cores: each core "
                       "writes its value to its 32-byte workspace slot, SyncAll, every core reads all slots",
                       "LocalTensor<float> slots = scalarBuf_.Get<float>();"]
        self.lines += [f"slots.SetValue({j}, {accs[j].name + '_' if j < len(accs) else '0.0f'});" for j in range(8)]
        at = "" if region == "0" else f"{region} + "
        self.lines += ["SetFlag<HardEvent::S_MTE3>(EVENT_ID0);", "WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);",
                       f"DataCopy(workspaceGm_[{at}GetBlockIdx() * 8], slots, 8);",
                       "SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);", "WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);",
                       "SyncAll();",
                       f"DataCopy(slots, workspaceGm_{f'[{region}]' if region != '0' else ''}, "
                       "static_cast<uint32_t>(GetBlockNum()) * 8);",
                       "SetFlag<HardEvent::MTE2_S>(EVENT_ID0);", "WaitFlag<HardEvent::MTE2_S>(EVENT_ID0);"]
        for a in accs:
            self.lines.append(f"{a.name}_ = {c_literal(a.init, DType.F32)};")
        self.lines.append("for (int64_t c = 0; c < GetBlockNum(); ++c) {")
        for j, a in enumerate(accs):
            v = f"slots.GetValue(c * 8 + {j})"
            self.lines.append("    " + {"add": f"{a.name}_ += {v};",
                                         "max": f"{a.name}_ = {v} > {a.name}_ ? {v} : {a.name}_;",
                                         "min": f"{a.name}_ = {v} < {a.name}_ ? {v} : {a.name}_;"}[combines[a.name]])
        self.lines.append("}")

    def one(self, api: str, arg: str, what: str) -> str:
        """`api` (Exp, Ln, ...) on one element on the vector unit (the scalar unit has no such instruction);
        returns the name of the const float holding the result."""
        name = self.fresh("s") + "_"
        if not self.math:
            self.math = True
            self.lines.append(f"LocalTensor<float> math = {self.MATH_BUF};")
        self.lines += [f"math.SetValue(0, {arg});  // {what} on the vector unit (one element)",
                       "SetFlag<HardEvent::S_V>(EVENT_ID0);", "WaitFlag<HardEvent::S_V>(EVENT_ID0);",
                       f"{api}(math, math, 1);",
                       "SetFlag<HardEvent::V_S>(EVENT_ID0);", "WaitFlag<HardEvent::V_S>(EVENT_ID0);",
                       f"const float {name} = math.GetValue(0);"]
        return name

    def power(self, base: str, exponent: str) -> str:
        """b ** e with torch.pow's semantics: exp(e * ln|b|), negated for b < 0 and an odd integer e; NaN for
        b < 0 and a fractional e; b == 0 gives 0 (e > 0) or inf (e < 0); e == 0 gives 1."""
        b, e = self.fresh("powBase") + "_", self.fresh("powExp") + "_"
        self.lines += [f"const float {b} = {base};", f"const float {e} = {exponent};"]
        ln = self.one("Ln", f"{b} < 0.0f ? -{b} : {b}", "ln|b| of b ** e")
        m = self.one("Exp", f"{ln} * {e}", "exp(e ln|b|) of b ** e")
        big = f"({e} >= 16777216.0f || {e} <= -16777216.0f)"  # every float this large is an even integer
        whole, odd = self.fresh("powWhole") + "_", self.fresh("powOdd") + "_"
        self.lines += [f"const bool {whole} = {big} || static_cast<float>(static_cast<int64_t>({e})) == {e};",
                       f"const bool {odd} = !{big} && {whole} && static_cast<int64_t>({e}) % 2 != 0;"]
        return (f"({e} == 0.0f ? 1.0f : {b} > 0.0f ? {m} : {b} == 0.0f ? ({e} > 0.0f ? 0.0f : (1.0f / 0.0f)) : "
                f"!{whole} ? (0.0f / 0.0f) : {odd} ? -{m} : {m})")

    def scalar(self, e: ir.Expr) -> str:
        """A C++ float expression for `e`; transcendental ops run on the vector unit first."""
        def lift(x: ir.Expr) -> ir.Expr:
            if isinstance(x, ir.Op):
                x = replace(x, args=tuple(lift(a) for a in x.args))
                if x.op in _SCALAR_MATH and _SCALAR_MATH[x.op]:
                    name = self.one(_SCALAR_MATH[x.op], c_scalar(x.args[0], DType.F32), x.op)
                    return ir.Ref(name.removesuffix("_"), ir.scalar_of(DType.F32), x.span)
                if x.op == "pow":
                    value = self.power(c_scalar(x.args[0], DType.F32), c_scalar(x.args[1], DType.F32))
                    name = self.fresh("s")
                    self.lines.append(f"const float {name}_ = {value};")
                    return ir.Ref(name, ir.scalar_of(DType.F32), x.span)
            return x
        return c_scalar(lift(e), DType.F32)

    def assign(self, s: ir.ScalarAssign) -> None:
        self.lines.append(f"// {_loc(self.ctx, s.span)}")
        self.lines.append(f"{s.name}_ = {self.scalar(s.value)};")

    def store(self, s: ir.ScalarStore, dtype: DType) -> None:
        t = self.tensors[s.tensor]
        self.lines += [f"// {_loc(self.ctx, s.span)}: one element, written by core 0",
                       "if (GetBlockIdx() == 0) {"]
        value = self.scalar(s.value)
        self.lines += [f"    LocalTensor<{t['ctype']}> one = scalarOut{camel(dtype.value)}_.Get<{t['ctype']}>();",
                       f"    one.SetValue(0, static_cast<{t['ctype']}>({value}));",
                       "    SetFlag<HardEvent::S_MTE3>(EVENT_ID0);", "    WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);",
                       f"    {_copy('UbToGm', '', 'one', t['gm'], '1')}", "}"]


def _store_dtypes(kernel: ir.Kernel, stmts) -> list[DType]:
    """Dtypes of the single-element stores among `stmts` (each gets a 32-byte UB buffer)."""
    return sorted({kernel.param(s.tensor).dtype for s in stmts if isinstance(s, ir.ScalarStore)}, key=str)


_IDENTITY = {"add": 0.0, "max": float("-inf"), "min": float("inf")}


def _updates(loop: ir.Stmt) -> dict[str, str]:
    """Accumulator -> combine ("add"/"max"/"min") of the accumulators a loop updates, in order."""
    return {s.name: s.combine for s in ir.walk((loop,)) if isinstance(s, ir.Accumulate) and s.reduce != "slots"}


def _slot_updates(loop: ir.Stmt) -> list[str]:
    """The slot accumulators a loop updates, in order."""
    return list(dict.fromkeys(s.name for s in ir.walk((loop,)) if isinstance(s, ir.Accumulate) and s.reduce == "slots"))


def _after_phase(kernel: ir.Kernel, ctx: PassContext, k: int, tensors: dict[str, dict]) -> list[str]:
    """Kernel-scope statements between split loop k and the next: combine, scalars, stores."""
    body = list(kernel.body)
    splits = [i for i, s in enumerate(body) if isinstance(s, ir.SplitLoop)]
    lo = splits[k]
    hi = splits[k + 1] if k + 1 < len(splits) else len(body)
    stmts = [s for s in body[lo + 1:hi] if not (isinstance(s, ir.ScalarAssign) and s.launch)]  # launch: the host
    split = body[lo]
    updates = _updates(split)
    accs = [a for a in kernel.accumulators if a.name in updates]
    slot_names = _slot_updates(split)
    if not accs and not stmts and not slot_names:
        return []
    w = _ScalarWriter(ctx, tensors, kernel)
    suffix = str(k) if k else ""
    if slot_names:
        w.lines += emit_slots.before_reset_lines(slot_names, suffix)
    if accs:
        w.lines += ["SetFlag<HardEvent::V_S>(EVENT_ID0);  // the scalar unit reads this core's running values",
                    "WaitFlag<HardEvent::V_S>(EVENT_ID0);"]
        w.lines += [f"{a.name}_ = accSlot_{a.name}Buf{suffix}.Get<float>().GetValue(0);" for a in accs]
    store_dtypes = _store_dtypes(kernel, stmts)
    w.lines += ["PipeBarrier<PIPE_ALL>();  // the last tile's copy-out has read its UB",
                "pipe.Reset();  // the tile buffers are dead: UB for the scalar epilogue",
                "pipe.InitBuffer(scalarBuf_, static_cast<uint32_t>(GetBlockNum()) * 32 + 32);"]
    w.lines += [f"pipe.InitBuffer(scalarOut{camel(d.value)}_, 32);" for d in store_dtypes]
    if slot_names:
        w.lines += emit_slots.staging_lines(slot_names, ctx.target.ub_budget)
    if accs:
        w.combine(accs, updates, split.span, acc_workspace.region(acc_workspace.index(kernel, k)))
    if slot_names:  # after the scalar combine's SyncAll, if any: the partial vectors were copied out before it
        w.lines += emit_slots.combine_lines(slot_names, ctx, split.span, syncall=not accs)
    for s in stmts:
        if isinstance(s, ir.ScalarAssign):
            w.assign(s)
        elif isinstance(s, ir.ScalarStore):
            w.store(s, kernel.param(s.tensor).dtype)
        elif isinstance(s, ir.AccDecl):
            w.lines.append(f"{s.name}_ = {c_literal(s.init, DType.F32)};")
    return ["{"] + ["    " + line for line in w.lines] + ["}"]


def _device_statements(stmts) -> list[ir.Stmt]:
    """The kernel-scope statements the device runs (launch scalars are the host's)."""
    return [s for s in stmts if isinstance(s, ir.ScalarStore) or (isinstance(s, ir.ScalarAssign) and not s.launch)]


def _prologue(kernel: ir.Kernel, ctx: PassContext, tensors: dict[str, dict]) -> list[str]:
    """Init, before any tile buffer: the device's kernel-scope statements written before the first split loop
    (scalars computed from `load(x[0])` values, single-element stores); UB is reset after them."""
    first = next(i for i, s in enumerate(kernel.body) if isinstance(s, ir.SplitLoop))
    stmts = _device_statements(kernel.body[:first])
    if not stmts:
        return []
    w = _ScalarWriter(ctx, tensors, kernel)
    w.lines += ["pipe.InitBuffer(scalarBuf_, static_cast<uint32_t>(GetBlockNum()) * 32 + 32);  // one-element math"]
    w.lines += [f"pipe.InitBuffer(scalarOut{camel(d.value)}_, 32);" for d in _store_dtypes(kernel, stmts)]
    for s in stmts:
        if isinstance(s, ir.ScalarAssign):
            w.assign(s)
        else:
            w.store(s, kernel.param(s.tensor).dtype)
    w.lines += ["PipeBarrier<PIPE_ALL>();  // the single-element copies are done with their UB",
                "pipe.Reset();  // the whole UB for the tile buffers"]
    return ["{  // kernel-scope statements before the first split loop"] + ["    " + line for line in w.lines] + ["}"]


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
                case ir.Accumulate():
                    w.accumulate(s)
        stages[stage.kind] = w.lines
    return stages


def compute_frame(buffers: list[dict]) -> tuple[list[str], list[str]]:
    """Lines around the Compute stage: take inputs from VECIN queues, allocate outputs in VECOUT
    queues and bind scratch TBufs (head); free the inputs and enqueue the outputs (tail)."""
    head, tail = [], []
    for b in buffers:
        buf: ir.Buffer = b["buffer"]
        c = buf.dtype.ctype
        if buf.position is ir.Position.VECIN:
            head.append(f"LocalTensor<{c}> {buf.name} = {b['member']}.DeQue<{c}>();")
            tail.append(f"{b['member']}.FreeTensor({buf.name});")
        elif buf.position is ir.Position.VECOUT:
            head.append(f"LocalTensor<{c}> {buf.name} = {b['member']}.AllocTensor<{c}>();")
            tail.insert(0, f"{b['member']}.EnQue<{c}>({buf.name});")
        else:
            head.append(f"LocalTensor<{c}> {buf.name} = {b['member']}.Get<{c}>();")
    return head, tail


def _phase_view(kernel: ir.Kernel, ctx: PassContext, k: int, tl: ir.TileLoop, tensor_map) -> dict:
    suffix = str(k) if k else ""
    buffers = _buffer_views(tl, suffix)
    by_name = {b["name"]: b for b in buffers}
    stages = write_stages(tl, lambda: (_RowStageWriter if tl.row_shape else _StageWriter)(ctx, by_name, tensor_map))
    head, tail = compute_frame(buffers)
    # Each core starts from the identity of the combine; the declared initial value joins once, when
    # the per-core values are combined.
    acc_init = [f"Duplicate({by_name[f'accSlot_{n}']['member']}.Get<float>(), {c_literal(_IDENTITY[c], DType.F32)}, 8);"
                f"  // {n}: this core's running value" for n, c in _updates(tl).items()]
    acc_init += emit_slots.acc_init_lines(_slot_updates(tl), suffix)
    acc_init += emit_slots.totals_lines([b.name.removeprefix("accTot_") for b in tl.buffers_decl
                                         if b.name.startswith("accTot_")], suffix)
    if _slot_updates(tl):  # Compute maps rows to slots: the tile's first row
        stages[ir.StageKind.COPYIN].insert(0, "tileRow_ = offset;  // the rows' slots are found in Compute")
    return {"suffix": suffix, "acc_init": acc_init, "buffers": buffers, "copyin": stages[ir.StageKind.COPYIN],
            "compute": head + stages[ir.StageKind.COMPUTE] + tail, "copyout": stages[ir.StageKind.COPYOUT],
            "tile": f"tileLength{suffix}_", "max_tile": tl.max_tile, "loc": _loc(ctx, tl.span),
            "tile_granule": AUTO_TILE_GRANULE if tl.size is None else tl.size,
            "init_buffers": [f"pipe.InitBuffer({b['member']}, {b['init_args']});" for b in buffers],
            "ub_formula": " + ".join(f"{b.num} * {_host_bytes(b)}" for b in tl.buffers_decl) if tl.row_shape else "",
            "after": _after_phase(kernel, ctx, k, tensor_map),
            "rows": "blockLength_", "chunk": None}  # several split loops with chunked rows: emit_chunk.py


def build_view(kernel: ir.Kernel, ctx: PassContext) -> dict:
    if ir.cube_loop(kernel) is not None:  # MIX kernel (matmul + epilogue)
        from .emit_cube import build_view as build_mix_view

        return build_mix_view(kernel, ctx)
    phases = _phases(kernel)
    split, tl = phases[0]
    for _, t in phases:
        if t.max_tile is None and t.row_shape is None and not t.plane_rank and not t.box:
            raise DslError.at("INTERNAL", "tile size was not planned", t.span)
    name = kernel.name
    cls = f"Kernel{camel(name)}"
    outputs = {p.name for p in kernel.outputs}
    tensors = [{"name": p.name, "gm": f"{p.name}Gm", "ctype": p.dtype.ctype, "host_ctype": p.dtype.ctype
                if p.dtype not in (DType.F16, DType.BF16) else "uint16_t",
                "role": "output" if p.name in outputs else "input",
                "numel_host": " * ".join(str(d) for d in p.shape)} for p in kernel.tensors]
    tensor_map = {t["name"]: t for t in tensors}
    scalars = [{"name": p.name, "member": f"{p.name}_", "ctype": p.dtype.ctype} for p in kernel.scalars]
    phase_views = [_phase_view(kernel, ctx, k, t, tensor_map) for k, (_, t) in enumerate(phases)]
    first = phase_views[0]
    buffers = [b for ph in phase_views for b in ph["buffers"]]

    extent = split.extent
    view = {
        "name": name, "entry": f"{name}_custom", "cls": cls, "source": ctx.source_name, "target": ctx.target.name,
        "tiling_type": f"{camel(name)}TilingData", "tiling_fn": f"{camel(name)}ComputeTiling",
        "tensors": tensors, "scalars": scalars, "symbols": list(kernel.symbols), "buffers": buffers,
        "buffer_num": tl.buffers, "copyin": first["copyin"], "compute": first["compute"],
        "copyout": first["copyout"], "phases": phase_views,
        "extent_expr": " * ".join(extent), "extent_tiling": " * ".join(f"tiling.{s}" for s in extent),
        "extent_host": " * ".join(extent), "split_loc": _loc(ctx, split.span), "tile_loc": _loc(ctx, tl.span),
        "max_tile": tl.max_tile, "tile_granule": first["tile_granule"],
        "block_granule": block_granule(kernel), "min_per_core": MIN_ELEMS_PER_CORE,
        "min_tiles_per_core": MIN_TILES_PER_CORE,
        "copy_helpers": "copy_helpers_pad.cpp.jinja" if ctx.target.has_datacopypad else
        "copy_helpers_nopad.cpp.jinja",
        "soc_version": ctx.target.soc_version,
        "workspace": bool(kernel.accumulators or kernel.slot_accumulators),  # accumulator slots per core
        "workspace_per_core": emit_slots.workspace_per_core(kernel) if kernel.slot_accumulators
        else str(acc_workspace.bytes_per_core(kernel)),
        "tiling_fields": emit_slots.tiling_fields(kernel),
        "launch_checks": emit_slots.launch_checks(kernel, ctx, ctx.target.ub_budget)
        if kernel.slot_accumulators else [],
        "mix": False,
        "chunk": False,  # rows longer than UB: see _chunk_view
        "chunk_first": False, "multi_chunk": False, "chunk_all_passes": [], "chunk_processes": [],
    }
    # Kernel-scope scalars: accumulators, named scalars, and the symbols read as values.
    kscalars = [s.name for s in kernel.body if isinstance(s, (ir.AccDecl, ir.ScalarAssign, ir.ScalarLoad))]
    view["kernel_scalars"] = [f"float {n}_ = 0.0f;" for n in dict.fromkeys(kscalars)]
    view["launch_scalars"] = launch_scalars.view(kernel, ctx.source_name)
    view["kernel_scalars"] += [f"uint64_t {sym}_ = 0;  // shape symbol read as a value"
                               for sym in _value_symbols(kernel, tl)]
    periodic = _periodic_tensors(kernel)
    view["kernel_scalars"] += (["uint64_t rowStart_ = 0;  // this core's first row"]
                               if periodic or kernel.slot_accumulators else []) + \
        [f"uint64_t {n}GmPeriod_ = 0;  // rows n*C + c read {n}[c]" for n in periodic]
    view["kernel_scalars"] += emit_slots.members(kernel) if kernel.slot_accumulators else []
    view["acc_init"] = first["acc_init"]
    store_dtypes = _store_dtypes(kernel, kernel.body)
    first_split = next(i for i, s in enumerate(kernel.body) if isinstance(s, ir.SplitLoop))
    view["epilogue_bufs"] = (["TBuf<TPosition::VECCALC> scalarBuf_;  // combine slots + one-element math"]
                             if any(ph["after"] for ph in phase_views)
                             or _device_statements(kernel.body[:first_split]) else [])
    view["epilogue_bufs"] += [f"TBuf<TPosition::VECCALC> scalarOut{camel(d.value)}_;  // one {d} element"
                              for d in store_dtypes]
    view["epilogue_bufs"] += (["TBuf<TPosition::VECCALC> slotBuf_;  // slot accumulators' totals while combining"]
                              if kernel.slot_accumulators else [])
    if kernel.slot_accumulators and not tl.row_shape:
        raise DslError.at("UNSUPPORTED", "slot accumulators need row loops", kernel.slot_accumulators[0].span)
    view["slot_host"] = emit_slots.host_lines(kernel, ctx, ctx.target.ub_budget) if kernel.slot_accumulators else []
    if tl.plane_rank:  # pooling over planes: lowering/emit_window.py
        return build_window_view(kernel, ctx, split, tl, view)
    if tl.box:  # reductions over a non-last dim: lowering/emit_box.py
        from .emit_box import build_box_view

        return build_box_view(kernel, ctx, split, tl, view)
    view["init"] = _init_lines(kernel, ctx, split, tl, tensors, scalars, phases)
    # after `init`, which the chunked path extends (it returns before the whole-row buffers)
    view["init_buffers"] = [f"// {_loc(ctx, tl.span)}: UB buffers, sized for the largest tile", *first["init_buffers"]]
    view["row_mode"] = tl.row_shape is not None
    view["unit"] = "rows" if tl.row_shape else "elements"
    view["extra_members"] = ["uint64_t D_ = 0;  // row length", "uint64_t Dp_ = 0;  // row pitch in UB"] \
        if tl.row_shape else []
    if tl.row_shape:
        view["row_len"] = tl.row_shape[1]
        view["ub_budget"] = ctx.target.ub_budget
        view["ub_formula"] = first["ub_formula"]
        _chunk_view(kernel, ctx, tl, tensor_map, view)
    return view


def _chunk_view(kernel: ir.Kernel, ctx: PassContext, tl: ir.TileLoop, tensor_map, view: dict) -> None:
    """Rows longer than UB: the chunked path (lowering/emit_chunk.py), or the reason there is none."""
    from . import row_groups
    from .emit_chunk import chunk_view, several_chunk_views

    loops = [t for _, t in _phases(kernel)]
    if len(loops) > 1:
        return several_chunk_views(kernel, ctx, loops, tensor_map, view)
    if isinstance(tl.chunked, str):
        view["tiling_error"] = (f"one row does not fit the Unified Buffer, and this kernel cannot run in column "
                                f"chunks: {tl.chunked}")
    elif tl.chunked is not None:
        row_buffers = {b["name"]: b for b in view["phases"][0]["buffers"]}
        grouped = row_groups.groupable(kernel, [tl.chunked])
        view.update(chunk_view(kernel, ctx, tl.chunked, tensor_map, row_buffers,
                               group_views=share_views(kernel, view["tensors"], "groupRow", "1") if grouped
                               else None))
        if grouped:  # the group's partial slots in the GM workspace
            view.update(workspace=True, workspace_per_core=row_groups.workspace_per_core(kernel))
        view["chunk_first"] = True
        view["chunk_all_passes"] = view["chunk_passes"]
        view["chunk_processes"] = [{"fn": view["chunk_fn"], "lines": view["chunk_process"]}]
        view["init"] += view["chunk_init"] + view["chunk_enter"]


def emit(kernel: ir.Kernel, ctx: PassContext) -> EmittedProject:
    if ir.cube_loop(kernel) is not None:  # MIX kernel (matmul + epilogue)
        from .emit_cube import emit as emit_mix

        return emit_mix(kernel, ctx)
    view = build_view(kernel, ctx)
    name = kernel.name
    manifest = {
        "generator": GENERATOR, "kernel": name, "source": ctx.source_name, "target": ctx.target.name,
        "entry": view["entry"], "kernel_type": "AIV_ONLY",
        "workspace_bytes_per_core": (int(view["workspace_per_core"]) if view["workspace_per_core"].isdigit()
                                     else view["workspace_per_core"])
        if view["workspace"] else 0, "tiling_type": view["tiling_type"], "tiling_fn": view["tiling_fn"],
        "symbols": view["symbols"],
        "tensors": [{"name": p.name, "dtype": p.dtype.value, "shape": list(p.shape),
                     "role": "output" if p in kernel.outputs else "input"} for p in kernel.tensors],
        "scalars": [{"name": p.name, "dtype": p.dtype.value, "default": p.default} for p in kernel.scalars],
        "max_tile": view["max_tile"], "tile_unit": view["unit"],
        "buffers": [{"name": b.name, "position": b.position.value, "dtype": b.dtype.value, "num": b.num}
                    for _, tl in _phases(kernel) for b in tl.buffers_decl],
    }
    files = {
        f"{name}_kernel.cpp": render(view.get("kernel_template", "kernel.cpp.jinja"), **view),
        f"{name}_tiling.h": render(view.get("tiling_template", "tiling.h.jinja"), **view),
        **host_files(view, ctx.target),
        "manifest.json": json.dumps(manifest, indent=2) + "\n",
    }
    return EmittedProject(name, files, manifest)
