"""Emission of box loops: reductions over a non-last dim (`sum(load(x[t]), axis=1)`, x: [A, R, C]).

The split runs over the output positions, flat (A * C of them; `M_` = C positions per row of the
reduced axis, `D_` = R its extent). Core shares are multiples of 32 bytes of the output (as for flat
splits), so no two cores write the same block; a tile is `len` consecutive positions that never
cross a row of M_ positions, so its elements along the reduced axis are `D_` rows of `len`
elements, `M_` elements apart in GM. Per tile:

    acc = identity (per reduction: 0, 1, -inf, +inf)
    for q0 in 0, Qc, 2 Qc, .. < D_:                       (chunks of Qc = chunkRows_ rows)
        x box <- one strided DataCopyPad: Qc blocks of len elements, srcStride (M_ - len) elements,
                 each landing in a UB row `pitch` elements long (32-byte aligned for every box dtype)
        element-wise box ops over Qc * pitch elements   (padding columns only meet padding columns)
        per reduction: halving tree of Add/Max/Min/Mul over the chunk's rows, then acc op= row 0
    flat ops over len elements (mean: acc * 1 / D_, casts, per-position inputs), store len elements

Only the first `len` elements of an accumulator row are combined and stored, so padding never
reaches GM (the emulator's UB-UNINIT check would report it). The host tiling (box_tiling.h.jinja)
picks len and Qc from the UB budget. The strided copy needs DataCopyPad: 910B targets only
(check_constraints rejects box loops on targets without it).
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from ascend_dsl.dtypes import DType

from . import launch_scalars
from .context import PassContext
from .emit import _StageWriter, _value_symbols, c_literal
from .tiling_rules import MIN_ELEMS_PER_CORE, MIN_TILES_PER_CORE, block_granule

_COMBINE = {"ReduceSum": "Add", "ReduceMax": "Max", "ReduceMin": "Min", "ReduceProd": "Mul"}
_IDENTITY = {"ReduceSum": 0.0, "ReduceMax": float("-inf"), "ReduceMin": float("inf"), "ReduceProd": 1.0}


def _loc(ctx: PassContext, span) -> str:
    return f"{ctx.source_name}:{span.line}"


def _dim_c(d: str | int, prefix: str = "tiling.") -> str:
    return str(d) if isinstance(d, int) else f"{prefix}{d}"


def _is_reduction(s: ir.VecOp, bufs: dict[str, ir.Buffer]) -> bool:
    return s.api in _COMBINE and bufs[s.srcs[0]].layout is ir.Layout.BOX


def _read_later(buf: str, later: list[ir.VecOp]) -> bool:
    """Whether `buf`'s current contents are read by a later op (before it is overwritten)."""
    for s in later:
        if buf in s.srcs:
            return True
        if s.dst == buf:
            return False
    return False


def _tree(s: ir.VecOp, ctype: str, scratch: str | None) -> list[str]:
    """acc op= (the chunk's rows combined): a halving tree over rows `pitch` apart, in place on the box,
    or through `scratch` when the box is read again after the reduction."""
    op, src, acc = _COMBINE[s.api], s.srcs[0], s.dst
    if scratch is None:
        return ["for (uint32_t n = rows; n > 1;) {  // fold the upper half of the rows onto the lower half",
                "    const uint32_t h = n / 2;",
                f"    {op}({src}, {src}, {src}[(n - h) * pitch], h * pitch);",
                "    n -= h;",
                "}",
                f"{op}({acc}, {acc}, {src}, len);  // only the len data columns reach the accumulator"]
    return ["if (rows == 1) {",
            f"    {op}({acc}, {acc}, {src}, len);",
            "} else {  // the box is read again: the first fold writes the scratch box",
            "    uint32_t n = rows / 2;",
            f"    {op}({scratch}, {src}, {src}[n * pitch], n * pitch);",
            "    if (rows % 2 == 1) {",
            f"        {op}({acc}, {acc}, {src}[(rows - 1) * pitch], len);",
            "    }",
            "    while (n > 1) {",
            "        const uint32_t h = n / 2;",
            f"        {op}({scratch}, {scratch}, {scratch}[(n - h) * pitch], h * pitch);",
            "        n -= h;",
            "    }",
            f"    {op}({acc}, {acc}, {scratch}, len);",
            "}"]


def _host_bytes(b: ir.Buffer, flat: str = "len") -> str:
    """UB bytes of one buffer: boxes of `boxElems`, flat tiles of `flat` elements (the host's `len`, or
    the kernel's tiling.tileLength), whole 256-byte repeats (Compare rounds its count up to them)."""
    elems = "boxElems" if b.layout is ir.Layout.BOX else flat
    if b.bits == 1:
        return f"(({elems} + 255) / 256 * 32 + 32)"
    return f"(({elems} * {b.dtype.size} + 255) / 256 * 256)"


def build_box_view(kernel: ir.Kernel, ctx: PassContext, split: ir.SplitLoop, tl: ir.TileLoop, base: dict) -> dict:
    """The view model for a box loop; `base` holds the fields shared with every kernel (emit.build_view)."""
    axis, dim = tl.box
    others = [s for s in kernel.body if s is not split and not (isinstance(s, ir.ScalarAssign) and s.launch)]
    if others:
        raise DslError.at("UNSUPPORTED", "a kernel with a box loop (a reduction over a non-last dim) has that split "
                          "loop only", others[0].span, "write the kernel-scope work as a second kernel")
    buffers = {b["name"]: b for b in base["buffers"]}
    bufs = {b.name: b for b in tl.buffers_decl}
    stmts = [s for st in tl.body for s in st.body]
    params = {p.name: p for p in kernel.tensors}
    extent = split.extent
    inner = extent[axis:]  # positions per row of the reduced axis: the output dims after it
    box_dtypes = {b.dtype for b in tl.buffers_decl if b.layout is ir.Layout.BOX and b.dtype is not DType.BOOL}
    granule = 32 // min((d.size for d in box_dtypes), default=4)  # box row pitch: 32-byte rows for every box dtype

    init = [f"// {_loc(ctx, split.span)}: this core's contiguous share of the [0, {' * '.join(extent)}) output "
            "positions (a multiple of 32 bytes of the output)",
            f"const uint64_t total = {' * '.join(f'tiling.{s}' for s in extent)};",
            "const uint64_t start = tiling.blockLength * GetBlockIdx();",
            ("blockLength_ = start < total ? (total - start < tiling.blockLength ? total - start : "
             "tiling.blockLength) : 0;"),
            "start_ = start;",
            "tileLength_ = tiling.tileLength;",
            "chunkRows_ = tiling.chunkRows;",
            f"D_ = tiling.{dim};  // the reduced axis",
            f"M_ = {' * '.join(f'tiling.{s}' for s in inner)};  // positions per row of the reduced axis"]
    init += [f"{s['member']} = tiling.{s['name']};" for s in base["scalars"]]
    init += launch_scalars.init_lines(kernel)
    init += [f"{sym}_ = tiling.{sym};" for sym in _value_symbols(kernel, tl)]  # symbols read as values
    for t in base["tensors"]:
        p = params[t["name"]]
        ptr = f"(__gm__ {t['ctype']}*){t['name']}"
        if tuple(p.shape) == extent:
            init.append(f"{t['gm']}.SetGlobalBuffer({ptr} + start, blockLength_);")
        else:
            init.append(f"{t['gm']}.SetGlobalBuffer({ptr}, total * D_);  // a box tensor: read by strided copies")
    init.append(f"// {_loc(ctx, tl.span)}: UB buffers, sized by the host for the largest box and tile")
    init.append(f"const uint32_t boxElems = tiling.chunkRows * ((tiling.tileLength + {granule - 1}) / {granule} * "
                f"{granule});  // rows x pitch")
    for b in base["buffers"]:
        buf: ir.Buffer = b["buffer"]
        nbytes = _host_bytes(buf, "tiling.tileLength")
        args = nbytes if buf.position is ir.Position.VECCALC else f"{buf.num}, {nbytes}"
        init.append(f"pipe.InitBuffer({b['member']}, {args});")

    writer = _StageWriter(ctx, buffers, {})
    box_in = [s for s in stmts if isinstance(s, ir.CopyIn) and bufs[s.buffer].layout is ir.Layout.BOX]
    flat_in = [s for s in stmts if isinstance(s, ir.CopyIn) and bufs[s.buffer].layout is not ir.Layout.BOX]
    outs = [s for s in stmts if isinstance(s, ir.CopyOut)]
    ops = [s for s in stmts if isinstance(s, ir.VecOp)]
    chunk_ops = [s for s in ops if bufs[s.dst].layout is ir.Layout.BOX or _is_reduction(s, bufs)]
    flat_ops = [s for s in ops if s not in chunk_ops]
    reductions = [s for s in chunk_ops if _is_reduction(s, bufs)]

    def ctype(name: str) -> str:
        return bufs[name].dtype.ctype

    lines = [f"const uint32_t pitch = (len + {granule - 1}) / {granule} * {granule};  "
             "// UB row pitch of the boxes (elements)"]
    # per-tile values: outputs (VECOUT), flat temporaries and accumulators (VECCALC)
    for b in base["buffers"]:
        buf = b["buffer"]
        c = buf.dtype.ctype
        if buf.layout is ir.Layout.BOX:
            continue
        if buf.position is ir.Position.VECOUT:
            lines.append(f"LocalTensor<{c}> {buf.name} = {b['member']}.AllocTensor<{c}>();")
        elif buf.position is ir.Position.VECCALC:
            lines.append(f"LocalTensor<{c}> {buf.name} = {b['member']}.Get<{c}>();")
    for s in reductions:
        d = bufs[s.dst].dtype
        lines.append(f"Duplicate({s.dst}, {c_literal(_IDENTITY[s.api], d)}, static_cast<int32_t>(len));  "
                     f"// {_loc(ctx, s.span)}: the accumulator starts at the identity")
    for s in flat_in:  # per-position inputs: their copies start before the chunks
        b, c = buffers[s.buffer], ctype(s.buffer)
        lines += [f"{{  // {_loc(ctx, s.span)}",
                  f"    LocalTensor<{c}> {s.buffer} = {b['member']}.AllocTensor<{c}>();",
                  f"    CopyGmToUb({s.buffer}, {s.tensor}Gm[p], len);",
                  f"    {b['member']}.EnQue({s.buffer});", "}"]
    lines += [f"// {_loc(ctx, tl.span)}: the reduced axis in chunks of chunkRows_ rows",
              "for (uint64_t q0 = 0; q0 < D_; q0 += chunkRows_) {",
              "    const uint32_t rows = static_cast<uint32_t>(D_ - q0 < chunkRows_ ? D_ - q0 : chunkRows_);",
              "    const uint32_t count = rows * pitch;"]
    body: list[str] = []
    for s in box_in:
        b, c = buffers[s.buffer], ctype(s.buffer)
        body += [f"{{  // {_loc(ctx, s.span)}: rows q0.. of {s.tensor}, M_ elements apart in GM, into UB rows pitch "
                 "elements apart",
                 f"    LocalTensor<{c}> {s.buffer} = {b['member']}.AllocTensor<{c}>();",
                 "    if (len == M_ && pitch == len) {  // whole rows, no padding: the chunk is contiguous in GM and UB",
                 f"        DataCopy({s.buffer}, {s.tensor}Gm[base + q0 * M_], count);",
                 "    } else {",
                 f"        DataCopyPad({s.buffer}, {s.tensor}Gm[base + q0 * M_],",
                 f"                    DataCopyExtParams{{static_cast<uint16_t>(rows), "
                 f"static_cast<uint32_t>(len * sizeof({c})),",
                 f"                                      static_cast<uint32_t>((M_ - len) * sizeof({c})),",
                 f"                                      static_cast<uint32_t>((pitch * sizeof({c}) - (len * sizeof({c}) + 31)"
                 " / 32 * 32) / 32), 0},",
                 f"                    DataCopyPadExtParams<{c}>{{false, 0, 0, 0}});",
                 "    }",
                 f"    {b['member']}.EnQue({s.buffer});",
                 "}"]
    body.append("{")
    inner_lines = []
    for b in base["buffers"]:
        buf = b["buffer"]
        if buf.layout is not ir.Layout.BOX:
            continue
        c = buf.dtype.ctype
        if buf.position is ir.Position.VECIN:
            inner_lines.append(f"LocalTensor<{c}> {buf.name} = {b['member']}.DeQue<{c}>();")
        else:
            inner_lines.append(f"LocalTensor<{c}> {buf.name} = {b['member']}.Get<{c}>();")
    for i, s in enumerate(chunk_ops):
        if _is_reduction(s, bufs):
            writer.lines = []
            writer.mark(s.span)
            src = s.srcs[0]
            scratch = f"boxTmp_{bufs[src].dtype}" if _read_later(src, chunk_ops[i + 1:]) else None
            if scratch is not None and scratch not in bufs:
                raise DslError.at("INTERNAL", f"no scratch box for the reduction of live box '{src}'", s.span)
            inner_lines += writer.lines + _tree(s, ctype(src), scratch)
        else:
            writer.lines = []
            writer.last_line = -1
            writer.vec_op(s, "count")
            inner_lines += writer.lines
    for s in box_in:
        inner_lines.append(f"{buffers[s.buffer]['member']}.FreeTensor({s.buffer});")
    body += ["    " + x for x in inner_lines] + ["}"]
    lines += ["    " + x for x in body] + ["}"]
    # the flat ops over the tile's positions, then the store
    for s in flat_in:
        b, c = buffers[s.buffer], ctype(s.buffer)
        lines.append(f"LocalTensor<{c}> {s.buffer} = {b['member']}.DeQue<{c}>();")
    writer.lines = []
    writer.last_line = -1
    for s in flat_ops:
        writer.vec_op(s, "len")
    lines += writer.lines
    for s in flat_in:
        lines.append(f"{buffers[s.buffer]['member']}.FreeTensor({s.buffer});")
    for s in outs:
        b, c = buffers[s.buffer], ctype(s.buffer)
        lines += [f"{b['member']}.EnQue<{c}>({s.buffer});"]
    for s in outs:
        b, c = buffers[s.buffer], ctype(s.buffer)
        lines += [f"{{  // {_loc(ctx, s.span)}",
                  f"    LocalTensor<{c}> out = {b['member']}.DeQue<{c}>();",
                  f"    CopyUbToGm({s.tensor}Gm[p], out, len);",
                  f"    {b['member']}.FreeTensor(out);", "}"]

    # Whole-row shares use fewer cores (a third of them still saturates GM bandwidth: ~100 GB/s per core of
    # ~1.6 TB/s) with long bursts, if the vector unit keeps up: one 256-byte repeat per cycle against
    # ~54 bytes per cycle of GM reads per core, with a 2x margin for instruction heads.
    vec_bytes = sum(bufs[s.srcs[0] if _is_reduction(s, bufs) else s.dst].dtype.size for s in chunk_ops)
    in_bytes = max((b.dtype.size for b in tl.buffers_decl if b.layout is ir.Layout.BOX
                    and b.position is ir.Position.VECIN), default=4)
    whole_rows = vec_bytes * 2 * 54 <= 256 * in_bytes
    ub_formula = " + ".join(f"{b.num} * {_host_bytes(b)}" for b in tl.buffers_decl)
    members = ["uint64_t start_ = 0;      // this core's first output position",
               "uint64_t chunkRows_ = 0;  // rows of the reduced axis per chunk",
               "uint64_t D_ = 0;          // extent of the reduced axis",
               "uint64_t M_ = 0;          // output positions per row of the reduced axis"]
    view = dict(base)
    view.update({
        "init": init, "extra_members": members, "tile_body": lines, "row_mode": False, "unit": "positions",
        "max_tile": None, "kernel_template": "box_kernel.cpp.jinja", "tiling_template": "box_tiling.h.jinja",
        "ub_budget": ctx.target.ub_budget, "ub_formula": ub_formula, "pitch_granule": granule,
        "box_in_bytes": in_bytes, "whole_row_shares": whole_rows,
        "whole_row_why": f"vector work per box element: {vec_bytes} B of repeats per {in_bytes} B read"
                         f" ({'low' if whole_rows else 'too high'} for whole-row shares on a third of the cores)",
        "inner_host": " * ".join(inner), "depth_host": dim, "axis": axis,
        "block_granule": block_granule(kernel), "min_per_core": MIN_ELEMS_PER_CORE,
        "min_tiles_per_core": MIN_TILES_PER_CORE,
    })
    return view
