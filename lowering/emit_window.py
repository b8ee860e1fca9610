"""Emission of plane loops (pooling): `for blk in split(N * C)` over [N, C, *spatial] tensors.

A tile is `planes` whole planes, or, when one plane does not fit UB, a band of `rows` output
rows (along the first spatial dim) of one plane together with the input rows its windows read.
Both cases copy one contiguous GM range per tensor:

    input : planes p0.. and input rows [lo, hi) -> offset p0 * inPlane + lo * inInner,
            count (planes - 1) * inPlane + (hi - lo) * inInner   (planes > 1 only with whole planes)
    output: offset p0 * outPlane + o0 * outInner, count (planes - 1) * outPlane + rows * outInner

The host tiling (codegen_templates/window_tiling.h.jinja) picks planes per tile and band rows from
the runtime shapes and checks the window parameters and output sizes (0 blocks = refused).
Windows: with DataCopyPad (910B) and rank >= 2 the input rows land 32-byte aligned in UB, the
taps along the outer spatial dims are whole-row vector Max / Add into an f32 row, and the taps
along the last dim run on the scalar unit over that row (`_pool_lines_rows`); otherwise every tap
is a scalar read (`_pool_lines`; lowering/scalar_loops.py explains why element-shifted vector
windows are not expressible). Every scalar access is counted by the emulator.
"""

from __future__ import annotations

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError

from .context import PassContext
from .scalar_loops import POOL_APIS, SYNC_FROM_SCALAR, SYNC_TO_SCALAR

_MAX = "(-1.0f / 0.0f)"  # -inf: padding never wins a max


def _loc(ctx: PassContext, span) -> str:
    return f"{ctx.source_name}:{span.line}"


def _dims(p: ir.TensorParam, lead: int) -> tuple[str | int, ...]:
    return p.shape[lead:]


def _dim_c(d: str | int, prefix: str = "tiling.") -> str:
    return str(d) if isinstance(d, int) else f"{prefix}{d}"


def _window_args(ops: list[ir.VecOp]) -> tuple[ir.Operand, ...]:
    args = {op.srcs[1:] for op in ops}
    if len(args) != 1:
        raise DslError.at("UNSUPPORTED", "pools in one plane loop must share kernel=, stride=, padding=, dilation=",
                          ops[1].span, "write one kernel per window shape")
    return next(iter(args))


def _param_c(o: ir.Operand, kernel_side: bool) -> str:
    """kernel / stride / padding as an int64_t C++ expression (a literal or the scalar parameter)."""
    if isinstance(o, ir.Const):
        return str(int(o.value))
    if isinstance(o, ir.Ref):
        return f"static_cast<int64_t>({o.name}_)" if kernel_side else f"static_cast<int64_t>({o.name})"
    raise DslError.at("INTERNAL", f"unexpected window parameter {o!r}", getattr(o, "span", None))


def _output_loops(lines: list[str], dims: int) -> str:
    """Open the loop over planes and `dims` output loops (r0 over the band's rows, r1.. over the
    inner output dims), each with its window start s_i; returns the indentation inside them."""
    lines.append("for (uint32_t q = 0; q < planes; ++q) {")
    ind = "    "
    for i in range(dims):
        bound = "rows" if i == 0 else f"outDim{i}_"
        lines.append(f"{ind}for (uint32_t r{i} = 0; r{i} < {bound}; ++r{i}) {{")
        ind += "    "
        first = f"o0 + r{i}" if i == 0 else f"r{i}"
        lines.append(f"{ind}const int64_t s{i} = static_cast<int64_t>({first}) * s - pad;  // window start, dim {i}")
    return ind


def _pool_lines(s: ir.VecOp, ctype: str, rank: int, ctx: PassContext) -> list[str]:
    """One scalar loop nest: every output element of the tile, each over its window clipped to the input."""
    avg = s.api == "AvgPool"
    src = s.srcs[0]
    lines = [(f"// {_loc(ctx, s.span)}: {'average' if avg else 'max'} pooling on the scalar unit "
              "(no windowed instruction in the API subset)"), *SYNC_TO_SCALAR]
    if avg:
        lines.append("const float window = static_cast<float>(" + " * ".join(["k"] * rank) +
                     ");  // count_include_pad: padding counts as zeros")
    # output loops: r0 over the band's rows, r1.. over the full inner output dims
    ind = _output_loops(lines, rank)
    lines.append(f"{ind}float acc = {'0.0f' if avg else _MAX};")
    for i in range(rank):  # the window's taps inside the input: from the first tap >= 0, dil apart
        lines.append(f"{ind}for (int64_t w{i} = s{i} < 0 ? s{i} + (dil - 1 - s{i}) / dil * dil : s{i}; "
                     f"w{i} < s{i} + span && w{i} < static_cast<int64_t>(inDim{i}_); w{i} += dil) {{")
        ind += "    "
    terms = ["(w0 - lo) * inInner_"] + [f"w{i}" + "".join(f" * inDim{j}_" for j in range(i + 1, rank))
                                        for i in range(1, rank)]
    lines.append(f"{ind}const float v = static_cast<float>({src}.GetValue(static_cast<uint32_t>(q * inPlane_ + "
                 f"{' + '.join(terms)})));")
    lines.append(f"{ind}acc += v;" if avg else f"{ind}acc = (v > acc || v != v) ? v : acc;  // NaN propagates")
    for _ in range(rank):
        ind = ind[:-4]
        lines.append(f"{ind}}}")
    out_terms = ["r0 * outInner_"] + [f"r{i}" + "".join(f" * outDim{j}_" for j in range(i + 1, rank))
                                      for i in range(1, rank)]
    value = "acc / window" if avg else "acc"
    lines.append(f"{ind}{s.dst}.SetValue(q * outPlane_ + {' + '.join(out_terms)}, static_cast<{ctype}>({value}));")
    for _ in range(rank):
        ind = ind[:-4]
        lines.append(f"{ind}}}")
    lines.append("}")
    return lines + SYNC_FROM_SCALAR


def _pool_lines_rows(s: ir.VecOp, in_ctype: str, out_ctype: str, rank: int, ctx: PassContext) -> list[str]:
    """Rank >= 2 with row-aligned UB input (rows `inWp_` apart, 32-byte aligned): the taps of the outer
    spatial dims combine whole input rows with vector Max / Add into an f32 row, then the taps along
    the last dim run on the scalar unit over that row (k reads per output instead of k**rank)."""
    avg = s.api == "AvgPool"
    src, last = s.srcs[0], rank - 1
    combine = "Add" if avg else "Max"
    wide = in_ctype == "float"
    lines = [(f"// {_loc(ctx, s.span)}: {'average' if avg else 'max'} pooling: outer-dim taps as whole-row vector "
              f"{combine}s, last-dim taps on the scalar unit")]
    if avg:
        lines.append("const float window = static_cast<float>(" + " * ".join(["k"] * rank) +
                     ");  // count_include_pad: padding counts as zeros")
    # output rows: r0 over the band, r1.. over the inner output dims but the last
    ind = _output_loops(lines, last)
    lines.append(f"{ind}uint32_t taps = 0;")
    for i in range(last):
        lines.append(f"{ind}for (int64_t w{i} = s{i} < 0 ? s{i} + (dil - 1 - s{i}) / dil * dil : s{i}; "
                     f"w{i} < s{i} + span && w{i} < static_cast<int64_t>(inDim{i}_); w{i} += dil) {{")
        ind += "    "
    row = "(w0 - lo) * inInnerRows_" + "".join(
        f" + w{i}" + "".join(f" * inDim{j}_" for j in range(i + 1, last)) for i in range(1, last))
    lines.append(f"{ind}const uint32_t row = static_cast<uint32_t>((q * inRowsPerPlane_ + {row}) * inWp_);")
    if wide:
        lines += [f"{ind}if (taps++ == 0) {{", f"{ind}    Muls(poolRow, {src}[row], 1.0f, inW_);", f"{ind}}} else {{",
                  f"{ind}    {combine}(poolRow, poolRow, {src}[row], inW_);", f"{ind}}}"]
    else:  # 16-bit rows widen to f32 first
        lines += [f"{ind}if (taps++ == 0) {{", f"{ind}    Cast(poolRow, {src}[row], RoundMode::CAST_NONE, inW_);",
                  f"{ind}}} else {{", f"{ind}    Cast(poolCast, {src}[row], RoundMode::CAST_NONE, inW_);",
                  f"{ind}    {combine}(poolRow, poolRow, poolCast, inW_);", f"{ind}}}"]
    for _ in range(last):
        ind = ind[:-4]
        lines.append(f"{ind}}}")
    lines += [f"{ind}if (taps == 0) {{  // every outer tap is padding",
              f"{ind}    Duplicate(poolRow, {'0.0f' if avg else _MAX}, static_cast<int32_t>(inW_));", f"{ind}}}",
              *(f"{ind}{x}" for x in SYNC_TO_SCALAR),
              f"{ind}for (uint32_t r{last} = 0; r{last} < outDim{last}_; ++r{last}) {{"]
    ind += "    "
    lines += [f"{ind}const int64_t s{last} = static_cast<int64_t>(r{last}) * s - pad;",
              f"{ind}float acc = {'0.0f' if avg else _MAX};",
              (f"{ind}for (int64_t w = s{last} < 0 ? s{last} + (dil - 1 - s{last}) / dil * dil : s{last}; "
               f"w < s{last} + span && w < static_cast<int64_t>(inW_); w += dil) {{"),
              f"{ind}    const float v = poolRow.GetValue(static_cast<uint32_t>(w));",
              f"{ind}    {'acc += v;' if avg else 'acc = (v > acc || v != v) ? v : acc;'}",
              f"{ind}}}"]
    out_terms = ["r0 * outInner_"] + [f"r{i}" + "".join(f" * outDim{j}_" for j in range(i + 1, rank))
                                      for i in range(1, rank)]
    value = "acc / window" if avg else "acc"
    lines.append(f"{ind}{s.dst}.SetValue(q * outPlane_ + {' + '.join(out_terms)}, static_cast<{out_ctype}>({value}));")
    ind = ind[:-4]
    lines += [f"{ind}}}", *(f"{ind}{x}" for x in SYNC_FROM_SCALAR)]  # the next row's vector ops overwrite poolRow
    for _ in range(last):
        ind = ind[:-4]
        lines.append(f"{ind}}}")
    lines.append("}")
    return lines


def _pitched_copy_in(buf: str, gm: str, ctype: str) -> list[str]:
    """Input rows into UB `inWp_` apart (32-byte aligned): one copy when rows are whole 32-byte blocks
    already, else DataCopyPad with one block per row (each padded to 32 bytes), <= 4095 rows per call."""
    return ["const uint64_t rowsIn = (planes - 1) * inRowsPerPlane_ + (hi - lo) * inInnerRows_;",
            "const uint64_t base = p0 * inPlane_ + lo * inInner_;",
            "if (inWp_ == inW_) {",
            f"    CopyGmToUb({buf}, {gm}[base], static_cast<uint32_t>(rowsIn * inW_));",
            "} else {",
            "    for (uint64_t c = 0; c < rowsIn; c += 4095) {  // blockCount <= 4095",
            "        const uint64_t n = rowsIn - c < 4095 ? rowsIn - c : 4095;",
            f"        DataCopyPad({buf}[static_cast<uint32_t>(c * inWp_)], {gm}[base + c * inW_],",
            (f"                    DataCopyExtParams{{static_cast<uint16_t>(n), "
             f"static_cast<uint32_t>(inW_ * sizeof({ctype})), 0, 0, 0}},"),
            f"                    DataCopyPadExtParams<{ctype}>{{false, 0, 0, 0}});",
            "    }",
            "}"]


def build_window_view(kernel: ir.Kernel, ctx: PassContext, split: ir.SplitLoop, tl: ir.TileLoop,
                      base: dict) -> dict:
    """The view model for a plane loop; `base` holds the fields shared with every kernel (emit.build_view)."""
    others = [s for s in kernel.body if s is not split and not (isinstance(s, ir.ScalarAssign) and s.launch)]
    if others:
        raise DslError.at("UNSUPPORTED", "a kernel with a pooling loop has that split loop only", others[0].span,
                          "write the kernel-scope work as a second kernel")
    lead, rank = len(split.extent), tl.plane_rank
    buffers = {b["name"]: b for b in base["buffers"]}
    stmts = [s for st in tl.body for s in st.body]
    pools = [s for s in stmts if isinstance(s, ir.VecOp) and s.api in POOL_APIS.values()]
    others = [s for s in stmts if isinstance(s, ir.VecOp) and s.api not in POOL_APIS.values()]
    if others or not pools:
        raise DslError.at("UNSUPPORTED", "a plane loop lowers pooling only: store(y[p], max_pool(load(x[p]), ...))",
                          (others or [tl])[0].span)
    k_arg, s_arg, p_arg, d_arg = _window_args(pools)
    params = {p.name: p for p in kernel.tensors}
    ins = [params[s.tensor] for s in stmts if isinstance(s, ir.CopyIn)]
    outs = [params[s.tensor] for s in stmts if isinstance(s, ir.CopyOut)]
    in_dims, out_dims = {_dims(p, lead) for p in ins}, {_dims(p, lead) for p in outs}
    if len(in_dims) != 1 or len(out_dims) != 1:
        raise DslError.at("UNSUPPORTED", "the planes of one plane loop must share their spatial shape", tl.span)
    (idims,), (odims,) = in_dims, out_dims
    in_bufs = [b["buffer"] for b in base["buffers"] if b["buffer"].position is ir.Position.VECIN]
    # Outer-dim taps as whole-row vector ops need 32-byte aligned UB rows: a pitched DataCopyPad (910B);
    # 1-D pooling (no outer dims) and targets without DataCopyPad take every tap on the scalar unit.
    rows_path = rank >= 2 and ctx.target.has_datacopypad and len(in_bufs) == 1
    in_ctype = in_bufs[0].dtype.ctype

    members = ["uint64_t bandRows_ = 0;  // output rows (first spatial dim) per tile",
               "uint64_t inPlane_ = 0, inInner_ = 0, outPlane_ = 0, outInner_ = 0, outOuter_ = 0;"]
    members += [f"uint64_t inDim{i}_ = 0, outDim{i}_ = 0;" for i in range(rank)]
    extent = " * ".join(f"tiling.{s}" for s in split.extent)
    init = [f"// {_loc(ctx, split.span)}: this core's contiguous share of the [0, {' * '.join(split.extent)}) planes",
            f"const uint64_t total = {extent};",
            "const uint64_t start = tiling.blockLength * GetBlockIdx();",
            ("blockLength_ = start < total ? (total - start < tiling.blockLength ? total - start : "
             "tiling.blockLength) : 0;"),
            "tileLength_ = tiling.tileLength;",
            "bandRows_ = tiling.bandRows;"]
    init += [f"inDim{i}_ = {_dim_c(d)};" for i, d in enumerate(idims)]
    init += [f"outDim{i}_ = {_dim_c(d)};" for i, d in enumerate(odims)]
    init += ["inInner_ = " + (" * ".join(f"inDim{i}_" for i in range(1, rank)) or "1") + ";",
             "outInner_ = " + (" * ".join(f"outDim{i}_" for i in range(1, rank)) or "1") + ";",
             "inPlane_ = inDim0_ * inInner_;", "outPlane_ = outDim0_ * outInner_;", "outOuter_ = outDim0_;"]
    if rows_path:
        members += ["uint64_t inW_ = 0, inWp_ = 0, inInnerRows_ = 0, inRowsPerPlane_ = 0;  // input rows in UB",
                    "TBuf<TPosition::VECCALC> poolRowBuf;  // f32 row: the outer-dim taps combined",
                    *(["TBuf<TPosition::VECCALC> poolCastBuf;  // f32 row: one 16-bit input row widened"]
                      if in_ctype != "float" else [])]
        init += [f"inW_ = inDim{rank - 1}_;",
                 f"inWp_ = (inW_ * sizeof({in_ctype}) + 31) / 32 * 32 / sizeof({in_ctype});  // UB row pitch",
                 "inInnerRows_ = inInner_ / inW_;", "inRowsPerPlane_ = inDim0_ * inInnerRows_;"]
    init += [f"{s['member']} = tiling.{s['name']};" for s in base["scalars"]]
    for t in base["tensors"]:
        plane = "inPlane_" if t["role"] == "input" else "outPlane_"
        init.append(f"{t['gm']}.SetGlobalBuffer((__gm__ {t['ctype']}*){t['name']} + start * {plane}, "
                    f"blockLength_ * {plane});")
    init.append(f"// {_loc(ctx, tl.span)}: UB buffers, sized by the host for the largest tile")
    views = []
    for b in base["buffers"]:
        buf: ir.Buffer = b["buffer"]
        elems = "tiling.inTileElems" if buf.position is ir.Position.VECIN else "tiling.outTileElems"
        init.append(f"pipe.InitBuffer({b['member']}, tiling.bufferNum, ({elems} * sizeof({buf.dtype.ctype}) + 31) "
                    "/ 32 * 32);")
        views.append(b)
    if rows_path:
        init += ["pipe.InitBuffer(poolRowBuf, (inW_ * sizeof(float) + 31) / 32 * 32);",
                 *(["pipe.InitBuffer(poolCastBuf, (inW_ * sizeof(float) + 31) / 32 * 32);"]
                   if in_ctype != "float" else [])]
    if any(b["buffer"].position is ir.Position.VECCALC for b in base["buffers"]):
        raise DslError.at("INTERNAL", "plane loops have no UB temporaries", tl.span)

    copyin, copyout = [], []
    for s in stmts:
        if isinstance(s, ir.CopyIn):
            b, gm = buffers[s.buffer], f"{s.tensor}Gm"
            c = b["buffer"].dtype.ctype
            copyin += [f"// {_loc(ctx, s.span)}", f"LocalTensor<{c}> {s.buffer} = {b['member']}.AllocTensor<{c}>();"]
            if rows_path:
                copyin += _pitched_copy_in(s.buffer, gm, c)
            else:
                copyin.append(f"CopyGmToUb({s.buffer}, {gm}[p0 * inPlane_ + lo * inInner_], "
                              "static_cast<uint32_t>((planes - 1) * inPlane_ + (hi - lo) * inInner_));")
            copyin.append(f"{b['member']}.EnQue({s.buffer});")
        elif isinstance(s, ir.CopyOut):
            b, gm = buffers[s.buffer], f"{s.tensor}Gm"
            c = b["buffer"].dtype.ctype
            copyout += [f"// {_loc(ctx, s.span)}", f"LocalTensor<{c}> {s.buffer} = {b['member']}.DeQue<{c}>();",
                        (f"CopyUbToGm({gm}[p0 * outPlane_ + o0 * outInner_], {s.buffer}, "
                         "static_cast<uint32_t>((planes - 1) * outPlane_ + rows * outInner_));"),
                        f"{b['member']}.FreeTensor({s.buffer});"]
    head, tail = [], []
    for b in base["buffers"]:
        buf = b["buffer"]
        c = buf.dtype.ctype
        if buf.position is ir.Position.VECIN:
            head.append(f"LocalTensor<{c}> {buf.name} = {b['member']}.DeQue<{c}>();")
            tail.append(f"{b['member']}.FreeTensor({buf.name});")
        else:
            head.append(f"LocalTensor<{c}> {buf.name} = {b['member']}.AllocTensor<{c}>();")
            tail.insert(0, f"{b['member']}.EnQue<{c}>({buf.name});")
    window = [f"const int64_t k = {_param_c(k_arg, True)};", f"const int64_t s = {_param_c(s_arg, True)};",
              f"const int64_t pad = {_param_c(p_arg, True)};", f"const int64_t dil = {_param_c(d_arg, True)};",
              "const int64_t span = (k - 1) * dil + 1;  // extent of a window (dilation: taps dil apart)"]
    if rows_path:
        head += ["LocalTensor<float> poolRow = poolRowBuf.Get<float>();",
                 *(["LocalTensor<float> poolCast = poolCastBuf.Get<float>();"] if in_ctype != "float" else [])]
    compute = head + window
    for s in pools:
        out_ctype = buffers[s.dst]["buffer"].dtype.ctype
        compute += (_pool_lines_rows(s, in_ctype, out_ctype, rank, ctx) if rows_path else
                    _pool_lines(s, out_ctype, rank, ctx))
    compute += tail

    ub_terms = []
    for b in base["buffers"]:
        buf = b["buffer"]
        elems = "inE" if buf.position is ir.Position.VECIN else "outE"
        ub_terms.append(f"nb * (({elems} * {buf.dtype.size} + 31) / 32 * 32)")  # host code: no device types
    if rows_path:  # the f32 row scratch (TBufs, single)
        scratch = 1 if in_ctype == "float" else 2
        ub_terms.append(f"{scratch} * ((in[{rank - 1}] * sizeof(float) + 31) / 32 * 32)")
    view = dict(base)
    view.update({
        "init": init, "extra_members": members, "copyin": copyin, "copyout": copyout, "compute": compute,
        "row_mode": False, "unit": "planes", "max_tile": None, "window_kernel": window,
        "kernel_template": "window_kernel.cpp.jinja", "tiling_template": "window_tiling.h.jinja",
        "window_host": [f"const int64_t k = {_param_c(k_arg, False)};", f"const int64_t s = {_param_c(s_arg, False)};",
                        f"const int64_t pad = {_param_c(p_arg, False)};",
                        f"const int64_t dil = {_param_c(d_arg, False)};"],
        "in_dims": [_dim_c(d, "") for d in idims], "out_dims": [_dim_c(d, "") for d in odims],
        "ub_budget": ctx.target.ub_budget, "ub_formula": " + ".join(ub_terms), "rank": rank,
        "rows_path": rows_path, "in_bytes": in_bufs[0].dtype.size,
        "tiling_error": "the window parameters or output sizes are invalid, or one output row of a plane does "
                        "not fit the Unified Buffer",
    })
    return view


