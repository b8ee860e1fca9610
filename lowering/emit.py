"""Emit the kernel-direct AscendC project from fully lowered IR (after schedule_stages).

Every decision is made here in Python and handed to the jinja2 templates in
`codegen_templates/` as a small view model; the templates only lay the code out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

import jinja2

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from ascend_dsl.dtypes import DType

from .context import PassContext
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


def c_scalar(e: ir.Expr, dtype: DType) -> str:
    """A scalar operand as a C++ expression of type `dtype` (immediates and tiling members)."""
    match e:
        case ir.Const(value=v):
            return c_literal(v, dtype)
        case ir.Ref(name=n, type=t):
            member = f"{n}_"
            return member if t.dtype is dtype else f"static_cast<{dtype.ctype}>({member})"
        case ir.Op(op="cast", args=(a,)):
            return c_scalar(a, dtype)
        case ir.Op(op="neg", args=(a,)):
            return f"static_cast<{dtype.ctype}>(-static_cast<float>({c_scalar(a, dtype)}))"
        case ir.Op(op="reciprocal", args=(a,)):
            return f"static_cast<{dtype.ctype}>(1.0f / static_cast<float>({c_scalar(a, dtype)}))"
        case ir.Op(op=op, args=(a, b)) if op in ("add", "sub", "mul", "div"):
            sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[op]
            return (f"static_cast<{dtype.ctype}>(static_cast<float>({c_scalar(a, dtype)}) {sym} "
                    f"static_cast<float>({c_scalar(b, dtype)}))")
        case ir.Op(op=op, args=(a, b)) if op in ("max", "min"):
            x, y = c_scalar(a, dtype), c_scalar(b, dtype)
            cmp = ">" if op == "max" else "<"
            return f"(static_cast<float>({x}) {cmp} static_cast<float>({y}) ? {x} : {y})"
    raise DslError.at("UNSUPPORTED", f"scalar expression '{getattr(e, 'op', e)}' cannot be lowered", e.span,
                      "compute it on a tile instead")


# ----------------------------------------------------------------------------- view model


def _single_tile_loop(kernel: ir.Kernel) -> tuple[ir.SplitLoop, ir.TileLoop]:
    splits = [s for s in kernel.body if isinstance(s, ir.SplitLoop)]
    if len(splits) != 1 or len(splits[0].body) != 1:
        where = (splits[1] if len(splits) > 1 else splits[0].body[1]).span
        raise DslError.at("UNSUPPORTED", "this version lowers one split loop holding one tile loop", where,
                          "merge the loops, or write separate kernels")
    return splits[0], splits[0].body[0]


def _loc(ctx: PassContext, span) -> str:
    return f"{ctx.source_name}:{span.line}"


def _buffer_views(tl: ir.TileLoop) -> list[dict]:
    views = []
    for b in tl.buffers_decl:
        cap = b.name[:1].upper() + b.name[1:]
        if b.position is ir.Position.VECCALC:
            member = f"{b.name}Buf"
            decl = "TBuf<TPosition::VECCALC>"
            size = _bytes_expr(b)
            init = size
        else:
            prefix = "inQueue" if b.position is ir.Position.VECIN else "outQueue"
            member = f"{prefix}{cap.removesuffix('Local')[:1].upper()}{cap.removesuffix('Local')[1:]}"
            decl = f"TQue<TPosition::{b.position.value}, 1>"
            init = f"{b.num}, {_bytes_expr(b)}"
        views.append({"name": b.name, "member": member, "decl": decl, "init_args": init, "buffer": b})
    return views


def _bytes_expr(b: ir.Buffer) -> str:
    """InitBuffer length of one buffer, in terms of the tile length (elements, or rows of Dp_)."""
    per_bits = {
        ir.Layout.FLAT: "tileLength_",
        ir.Layout.ROWS: "tileLength_ * Dp_",
        ir.Layout.COL: "(tileLength_ + 127) / 128 * 128",
        ir.Layout.ROW: "Dp_",
    }
    if b.layout is ir.Layout.BLOCK:
        return "32"
    elems = per_bits[b.layout]
    if b.bits == 1:
        return f"({elems} + 255) / 256 * 32"  # one bit per element, whole 32-byte blocks
    return f"{elems} * sizeof({b.dtype.ctype})"


def _host_bytes(b: ir.Buffer) -> str:
    """The same length on the host, for tiles of `r` rows (see tiling.h.jinja)."""
    elems = {ir.Layout.ROWS: "r * padded", ir.Layout.COL: "colElems", ir.Layout.ROW: "padded"}
    if b.layout is ir.Layout.BLOCK:
        return "32"
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
        if s.api.startswith("Reduce"):
            return self.reduce(s)
        if all(self.layout(o) is dst_layout for o in tiles):
            if s.api in ("Compare", "Compares") and dst_layout is not ir.Layout.ROWS:
                raise DslError.at("UNSUPPORTED", "comparisons of per-row values are not supported yet", s.span,
                                  "compare whole rows instead")
            return super().vec_op(s, self.count_for(dst_layout))
        self.per_row(s, dst_layout)

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


def _init_lines(kernel: ir.Kernel, ctx: PassContext, split: ir.SplitLoop, tl: ir.TileLoop, tensors, buffers,
                scalars) -> list[str]:
    extent = " * ".join(f"tiling.{s}" for s in split.extent)
    lines = [f"// {_loc(ctx, split.span)}: this core's contiguous share of [0, {' * '.join(split.extent)})"
             + (" rows" if tl.row_shape else ""),
             f"const uint64_t total = {extent};",
             "const uint64_t start = tiling.blockLength * GetBlockIdx();",
             "blockLength_ = start < total ? (total - start < tiling.blockLength ? total - start : "
             "tiling.blockLength) : 0;",
             "tileLength_ = tiling.tileLength;"]
    if tl.row_shape:
        lines += [f"D_ = tiling.{tl.row_shape[1]};", "Dp_ = (D_ + 127) / 128 * 128;  // UB row pitch: whole repeats"]
    lines += [f"{s['member']} = tiling.{s['name']};" for s in scalars]
    params = {p.name: p for p in kernel.tensors}
    for t in tensors:
        p = params[t["name"]]
        base = f"(__gm__ {t['ctype']}*){t['name']}"
        if tl.row_shape and len(p.shape) == 2:
            lines.append(f"{t['gm']}.SetGlobalBuffer({base} + start * D_, blockLength_ * D_);")
        elif tl.row_shape and p.shape == (tl.row_shape[1],):
            lines.append(f"{t['gm']}.SetGlobalBuffer({base}, D_);")
        else:
            lines.append(f"{t['gm']}.SetGlobalBuffer({base} + start, blockLength_);")
    lines.append(f"// {_loc(ctx, tl.span)}: UB buffers, sized for the largest tile")
    lines += [f"pipe.InitBuffer({b['member']}, {b['init_args']});" for b in buffers]
    return lines


def build_view(kernel: ir.Kernel, ctx: PassContext) -> dict:
    if ir.cube_loop(kernel) is not None:  # MIX kernel (matmul + epilogue)
        from .emit_cube import build_view as build_mix_view

        return build_mix_view(kernel, ctx)
    split, tl = _single_tile_loop(kernel)
    if tl.max_tile is None and tl.row_shape is None:
        raise DslError.at("INTERNAL", "tile size was not planned", tl.span)
    name = kernel.name
    cls = f"Kernel{camel(name)}"
    buffers = _buffer_views(tl)
    by_name = {b["name"]: b for b in buffers}
    outputs = {p.name for p in kernel.outputs}
    tensors = [{"name": p.name, "gm": f"{p.name}Gm", "ctype": p.dtype.ctype, "host_ctype": p.dtype.ctype
                if p.dtype not in (DType.F16, DType.BF16) else "uint16_t",
                "role": "output" if p.name in outputs else "input",
                "numel_host": " * ".join(str(d) for d in p.shape)} for p in kernel.tensors]
    tensor_map = {t["name"]: t for t in tensors}
    scalars = [{"name": p.name, "member": f"{p.name}_", "ctype": p.dtype.ctype} for p in kernel.scalars]

    stages: dict[ir.StageKind, list[str]] = {}
    for stage in tl.body:
        w = (_RowStageWriter if tl.row_shape else _StageWriter)(ctx, by_name, tensor_map)
        for s in stage.body:
            match s:
                case ir.CopyIn():
                    w.copy_in(s)
                case ir.CopyOut():
                    w.copy_out(s)
                case ir.VecOp():
                    w.vec_op(s)
        stages[stage.kind] = w.lines
    # Compute: take inputs from VECIN queues and output tensors from VECOUT queues, bind scratch.
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
    compute = head + stages[ir.StageKind.COMPUTE] + tail

    extent = split.extent
    view = {
        "name": name, "entry": f"{name}_custom", "cls": cls, "source": ctx.source_name, "target": ctx.target.name,
        "tiling_type": f"{camel(name)}TilingData", "tiling_fn": f"{camel(name)}ComputeTiling",
        "tensors": tensors, "scalars": scalars, "symbols": list(kernel.symbols), "buffers": buffers,
        "buffer_num": tl.buffers, "copyin": stages[ir.StageKind.COPYIN], "compute": compute,
        "copyout": stages[ir.StageKind.COPYOUT],
        "extent_expr": " * ".join(extent), "extent_tiling": " * ".join(f"tiling.{s}" for s in extent),
        "extent_host": " * ".join(extent), "split_loc": _loc(ctx, split.span), "tile_loc": _loc(ctx, tl.span),
        "max_tile": tl.max_tile, "tile_granule": AUTO_TILE_GRANULE if tl.size is None else tl.size,
        "block_granule": block_granule(kernel), "min_per_core": MIN_ELEMS_PER_CORE,
        "min_tiles_per_core": MIN_TILES_PER_CORE,
        "copy_helpers": "copy_helpers_pad.cpp.jinja" if ctx.target.has_datacopypad else
        "copy_helpers_nopad.cpp.jinja",
        "soc_version": ctx.target.soc_version,
    }
    if tl.size is not None:  # an explicit size is used as is (the host may still shrink it for short shares)
        view["tile_granule"] = tl.size
    view["init"] = _init_lines(kernel, ctx, split, tl, tensors, buffers, scalars)
    view["row_mode"] = tl.row_shape is not None
    view["unit"] = "rows" if tl.row_shape else "elements"
    view["extra_members"] = ["uint64_t D_ = 0;  // row length", "uint64_t Dp_ = 0;  // row pitch in UB"] \
        if tl.row_shape else []
    if tl.row_shape:
        view["row_len"] = tl.row_shape[1]
        view["ub_budget"] = ctx.target.ub_budget
        view["ub_formula"] = " + ".join(f"{b.num} * {_host_bytes(b)}" for b in tl.buffers_decl)
    return view


def emit(kernel: ir.Kernel, ctx: PassContext) -> EmittedProject:
    if ir.cube_loop(kernel) is not None:  # MIX kernel (matmul + epilogue)
        from .emit_cube import emit as emit_mix

        return emit_mix(kernel, ctx)
    view = build_view(kernel, ctx)
    name = kernel.name
    manifest = {
        "generator": GENERATOR, "kernel": name, "source": ctx.source_name, "target": ctx.target.name,
        "entry": view["entry"], "kernel_type": "AIV_ONLY", "tiling_type": view["tiling_type"], "tiling_fn": view["tiling_fn"],
        "symbols": view["symbols"],
        "tensors": [{"name": p.name, "dtype": p.dtype.value, "shape": list(p.shape),
                     "role": "output" if p in kernel.outputs else "input"} for p in kernel.tensors],
        "scalars": [{"name": p.name, "dtype": p.dtype.value, "default": p.default} for p in kernel.scalars],
        "max_tile": view["max_tile"], "tile_unit": view["unit"],
        "buffers": [{"name": b.name, "position": b.position.value, "dtype": b.dtype.value, "num": b.num}
                    for b in _single_tile_loop(kernel)[1].buffers_decl],
    }
    files = {
        f"{name}_kernel.cpp": render("kernel.cpp.jinja", **view),
        f"{name}_tiling.h": render("tiling.h.jinja", **view),
        f"{name}_main.cpp": render("launch_main.cpp.jinja", **view),
        "CMakeLists.txt": render("CMakeLists.txt.jinja", **view),
        "manifest.json": json.dumps(manifest, indent=2) + "\n",
    }
    return EmittedProject(name, files, manifest)
