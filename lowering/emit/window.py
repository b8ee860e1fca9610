"""Kind WINDOW: plane loops (pooling), `for blk in split(N * C)` over [N, C, *spatial] tensors (window_*.jinja).

A tile is `planes` whole planes, or, when one plane does not fit UB, a band of `rows` output
rows (along the first spatial dim) of one plane together with the input rows its windows read;
3-D on 910B, when one output slice does not fit either, a band of `rows1` output rows of dim 1 of
one output slice (`bands1`: one copy per input slice it reads). Whole planes and dim-0 bands copy
one contiguous GM range per tensor:

    input : planes p0.. and input rows [lo, hi) -> offset p0 * inPlane + lo * inInner,
            count (planes - 1) * inPlane + (hi - lo) * inInner   (planes > 1 only with whole planes)
    output: offset p0 * outPlane + o0 * outInner, count (planes - 1) * outPlane + rows * outInner

The host tiling (codegen_templates/window_tiling.h.jinja) picks planes per tile and band rows from
the runtime shapes and checks the window parameters and output sizes (0 blocks = refused; `tiling_why`
says which cause, with the sizes). Windows: with DataCopyPad (910B) the input and output rows of the
last dim sit 32 bytes apart in UB and every tap runs on the vector unit: 1-D snippets/pool_rows.cpp.jinja
(one Gather per tap of a row), 2-3 dims snippets/pool_bands.cpp.jinja (chunks of output rows: one level-0
Max / Add per outer tap and column group over the chunk's rows, PoolRows in the kernel class, one Gather
per last-dim tap over the chunk; f16 max in half, the rest in f32); with dilation a 3-D tile may be one
output slice holding only its depth taps' slices (`sparse`). Otherwise (310P) every tap is a scalar read
(snippets/pool.cpp.jinja), counted by the emulator.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from ascend_dsl.diagnostics import ErrorCode as E

from ..context import PassContext
from ..scalar_loops import POOL_APIS
from ..tiling_rules import MIN_TILES_PER_CORE
from .shared import KernelView, buffer_views, compute_frame, kernel_fields, loc, manifest, share_lines, snippet

#: Output elements per last-dim tap Gather (rows path): bounds the offset table and the f32 tap / accumulator rows
#: (8 KB each) on wide planes; a multiple of 16 (chunks of 16-bit output rows stay 32-byte aligned).
POOL_CHUNK = 2048


@dataclass(frozen=True, kw_only=True)
class WindowView(KernelView):
    buffer_num: int
    copy_helpers: str
    share: tuple[str, ...]  # Init: this core's share of the planes
    in_ctype: str
    in_dims_tiling: tuple[str, ...]
    out_dims_tiling: tuple[str, ...]
    window_kernel: tuple[str, ...]  # the window's parameters in the kernel
    window_host: tuple[str, ...]  # ... and in the host tiling
    copyin: tuple[str, ...]
    compute: tuple[str, ...]
    copyout: tuple[str, ...]
    row_mode: bool = False
    rank: int
    rows_path: bool
    bands1: bool  # rank >= 3 on the rows path: tiles may be bands of dim-1 rows of one output slice
    in_dims: tuple[str, ...]
    out_dims: tuple[str, ...]
    in_bytes: int
    out_align: int  # elements: output rows start this far apart in UB (32 bytes of the narrowest output)
    acc_row: bool  # the taps combine in an f32 accumulator row (the output is not the working type)
    work: str  # C++ type the taps combine in (2-3 dims): half for max pooling of f16, else float
    work_bytes: int
    combine: str  # 2-3 dims: Max or Add (PoolRows)
    pad_value: str  # 2-3 dims: the padding value of the window (C++ float literal: 0 for avg, -inf for max)
    cast: bool  # 2-3 dims: the input rows are widened to f32 (poolT) before the taps combine them
    pool_chunk: int = POOL_CHUNK
    extent_host: str
    tile_loc: str
    ub_budget: int
    ub_formula: str
    min_tiles_per_core: int


def _dim_c(d: str | int, prefix: str = "tiling.") -> str:
    return str(d) if isinstance(d, int) else f"{prefix}{d}"


def _param_c(o: ir.Operand, kernel_side: bool) -> str:
    """kernel / stride / padding as an int64_t C++ expression (a literal or the scalar parameter)."""
    if isinstance(o, ir.Const):
        return str(int(o.value))
    if isinstance(o, ir.Ref):
        return f"static_cast<int64_t>({o.name}_)" if kernel_side else f"static_cast<int64_t>({o.name})"
    raise DslError.at(E.INTERNAL, f"unexpected window parameter {o!r}", getattr(o, "span", None))


def _work_type(avg: bool, in_ctype: str, out_ctypes: set[str]) -> str:
    """The type the taps of a 2-3 dim window combine in: max of f16 stays in half (exact), the rest widens to f32."""
    return "half" if not avg and in_ctype == "half" and out_ctypes == {"half"} else "float"


def _pool_lines(s: ir.VecOp, in_ctype: str, out_ctype: str, rank: int, rows_path: bool, ctx: PassContext,
                work: str = "float") -> list[str]:
    """The loop nest of one pool over the tile's planes (snippets/pool_rows.cpp.jinja on the vector unit,
    snippets/pool.cpp.jinja on the scalar unit); the flattened offsets of an input element (by its taps w_i),
    an input row, and an output element or row (by r_i) are computed here."""
    avg = s.api == "AvgPool"
    common = dict(loc=loc(ctx, s.span), avg=avg, rank=rank, src=s.srcs[0], dst=s.dst, out_ctype=out_ctype,
                  wide=in_ctype == "float", combine="Add" if avg else "Max")
    last = rank - 1
    if rows_path and rank > 1:  # chunks of output rows: level-0 outer taps over the chunk, one Gather per last-dim tap
        return snippet("pool_bands", work=work, work_bytes=4 if work == "float" else 2, cast=in_ctype != work,
                       acc_row=out_ctype != work, **common)
    if rows_path:  # rows of the last dim: inputs inWp_ apart, outputs outWp_ apart
        def rows_of(v: str, dims: str, first: int) -> str:  # taps / outputs of dims first..last-1 as UB rows
            return "".join(f" + {v}{i}" + "".join(f" * {dims}{j}_" for j in range(i + 1, last)) for i in range(first, last))
        if rank == 1:
            row, out_row = "q * inWp_", "q"
        elif rank >= 3:  # bands of dim-1 rows (rows1 of them, input rows [lo1, hi1)); whole: rows1 = outDim1_, lo1 = 0
            row = ("(q * inRowsPerPlane_ + ((w0 - lo) * (hi1 - lo1) + (w1 - lo1)) * inInnerRows1_"
                   + rows_of("w", "inDim", 2) + ") * inWp_")
            out_row = "q * outRowsPerPlane_ + (r0 * rows1 + r1) * outInnerRows1_" + rows_of("r", "outDim", 2)
        else:
            row = "(q * inRowsPerPlane_ + (w0 - lo) * inInnerRows_" + rows_of("w", "inDim", 1) + ") * inWp_"
            out_row = "q * outRowsPerPlane_ + r0 * outInnerRows_" + rows_of("r", "outDim", 1)
        return snippet("pool_rows", row=row, out_row=out_row, bands1=rank >= 3, **common)
    terms = ["(w0 - lo) * inInner_"] + [f"w{i}" + "".join(f" * inDim{j}_" for j in range(i + 1, rank))
                                        for i in range(1, rank)]
    out_terms = ["r0 * outInner_"] + [f"r{i}" + "".join(f" * outDim{j}_" for j in range(i + 1, rank))
                                      for i in range(1, rank)]
    return snippet("pool", terms=" + ".join(terms), out_terms=" + ".join(out_terms), **common)


def build_view(kernel: ir.Kernel, ctx: PassContext) -> WindowView:
    split = kernel.phases[0]
    tl = split.body[0]
    rank = tl.shape.rank
    fields = kernel_fields(kernel, ctx)
    views = buffer_views(tl)
    buffers = {b.name: b for b in views}
    stmts = [s for st in tl.body for s in st.body]
    pools = [s for s in stmts if isinstance(s, ir.VecOp) and s.api in POOL_APIS.values()]
    plan: ir.WindowPlan = tl.shape.plan  # plan_windows.py
    k_arg, s_arg, p_arg, d_arg = plan.window
    idims, odims = plan.in_dims, plan.out_dims
    in_bufs = [b.buffer for b in views if b.buffer.position is ir.Position.VECIN]
    rows_path = plan.rows_path
    bands1 = rows_path and rank >= 3  # a tile may be a band of dim-1 rows of one output slice
    in_ctype = in_bufs[0].dtype.ctype
    out_bufs = [b.buffer for b in views if b.buffer.position is ir.Position.VECOUT]
    out_ctypes = {b.dtype.ctype for b in out_bufs}
    work = _work_type(pools[0].api == "AvgPool", in_ctype, out_ctypes) if pools else "float"
    if len({p.api for p in pools}) > 1:
        work = "float"

    window = [f"const int64_t k = {_param_c(k_arg, True)};", f"const int64_t s = {_param_c(s_arg, True)};",
              f"const int64_t pad = {_param_c(p_arg, True)};", f"const int64_t dil = {_param_c(d_arg, True)};",
              "const int64_t span = (k - 1) * dil + 1;  // extent of a window (dilation: taps dil apart)"]
    copyin, copyout = [], []
    for s in stmts:
        if isinstance(s, ir.CopyIn):
            b, gm = buffers[s.buffer], f"{s.tensor}Gm"
            c = b.buffer.dtype.ctype
            copyin += [f"// {loc(ctx, s.span)}", f"LocalTensor<{c}> {s.buffer} = {b.member}.AllocTensor<{c}>();"]
            if rows_path:
                copyin += snippet("pitched_copy_in", buf=s.buffer, gm=gm, ctype=c, rank=rank, bands1=bands1,
                                  window=window)
            else:
                copyin.append(f"CopyGmToUb({s.buffer}, {gm}[p0 * inPlane_ + lo * inInner_], "
                              "static_cast<uint32_t>((planes - 1) * inPlane_ + (hi - lo) * inInner_));")
            copyin.append(f"{b.member}.EnQue({s.buffer});")
        elif isinstance(s, ir.CopyOut):
            b, gm = buffers[s.buffer], f"{s.tensor}Gm"
            c = b.buffer.dtype.ctype
            copyout += [f"// {loc(ctx, s.span)}", f"LocalTensor<{c}> {s.buffer} = {b.member}.DeQue<{c}>();"]
            if rows_path:
                copyout += snippet("pitched_copy_out", buf=s.buffer, gm=gm, ctype=c, rank=rank, bands1=bands1)
            else:
                copyout.append(f"CopyUbToGm({gm}[p0 * outPlane_ + o0 * outInner_], {s.buffer}, "
                               "static_cast<uint32_t>((planes - 1) * outPlane_ + rows * outInner_));")
            copyout.append(f"{b.member}.FreeTensor({s.buffer});")
    head, tail = compute_frame(views)
    compute = head + window
    if rows_path and rank > 1:
        compute += [f"LocalTensor<{work}> poolU = poolUBuf.Get<{work}>();",
                    "LocalTensor<uint32_t> poolOff = poolOffBuf.Get<uint32_t>();",
                    f"LocalTensor<{work}> poolTap = poolTapBuf.Get<{work}>();",
                    *(["LocalTensor<float> poolT = poolTBuf.Get<float>();"] if in_ctype != work else []),
                    *(["LocalTensor<float> poolAcc = poolAccBuf.Get<float>();"] if out_ctypes != {work} else [])]
    elif rows_path:
        compute += ["const uint32_t poolM = static_cast<uint32_t>((pad + 7) / 8 * 8);  // the row's place in poolRow",
                    "LocalTensor<float> poolRow = poolRowBuf.Get<float>();",
                    "LocalTensor<float> poolTap = poolTapBuf.Get<float>();",
                    "LocalTensor<uint32_t> poolOff = poolOffBuf.Get<uint32_t>();",
                    *(["LocalTensor<float> poolCast = poolCastBuf.Get<float>();"] if in_ctype != "float" else []),
                    *(["LocalTensor<float> poolAcc = poolAccBuf.Get<float>();"] if out_ctypes != {"float"} else [])]
    for s in pools:
        out_ctype = buffers[s.dst].buffer.dtype.ctype
        compute += _pool_lines(s, in_ctype, out_ctype, rank, rows_path, ctx, work)
    compute += tail

    ub_terms = []
    for b in views:
        elems = "inE" if b.buffer.position is ir.Position.VECIN else "outE"
        ub_terms.append(f"nb * (({elems} * {b.buffer.dtype.size} + 31) / 32 * 32)")  # host code: no device types
    if rows_path and rank > 1:  # poolU, the offsets, the tap, poolAcc, poolT (the host's poolScratch)
        ub_terms.append("scratch")
    elif rows_path:  # the f32 row scratch, the gathered tap, the gather offsets (u32), the f32 accumulator (TBufs)
        ub_terms.append(f"{1 if in_ctype == 'float' else 2} * ((rowE * 4 + 31) / 32 * 32)")
        ub_terms.append(f"{2 if out_ctypes == {'float'} else 3} * ((outRowE * 4 + 31) / 32 * 32)")
    return WindowView(
        **fields, buffers=views, buffer_num=tl.buffers,
        copy_helpers="copy_helpers_pad.cpp.jinja" if ctx.target.has_datacopypad else "copy_helpers_nopad.cpp.jinja",
        share=tuple(share_lines(ctx, split, "the [0, {}) planes")), in_ctype=in_ctype,
        in_dims_tiling=tuple(_dim_c(d) for d in idims), out_dims_tiling=tuple(_dim_c(d) for d in odims), copyin=tuple(copyin), copyout=tuple(copyout),
        compute=tuple(compute), window_kernel=tuple(window),
        window_host=(f"const int64_t k = {_param_c(k_arg, False)};", f"const int64_t s = {_param_c(s_arg, False)};",
                     f"const int64_t pad = {_param_c(p_arg, False)};", f"const int64_t dil = {_param_c(d_arg, False)};"),
        in_dims=tuple(_dim_c(d, "") for d in idims), out_dims=tuple(_dim_c(d, "") for d in odims),
        ub_budget=ctx.target.ub_budget, ub_formula=" + ".join(ub_terms), rank=rank, rows_path=rows_path, bands1=bands1,
        in_bytes=in_bufs[0].dtype.size, out_align=32 // min(b.dtype.size for b in out_bufs),
        acc_row=out_ctypes != {work} if rank > 1 else out_ctypes != {"float"}, work=work,
        work_bytes=4 if work == "float" else 2,
        combine="Add" if pools and pools[0].api == "AvgPool" else "Max",
        pad_value="0.0f" if pools and pools[0].api == "AvgPool" else "(-1.0f / 0.0f)", cast=in_ctype != work, extent_host=" * ".join(split.extent), tile_loc=loc(ctx, tl.span),
        min_tiles_per_core=MIN_TILES_PER_CORE,
        tiling_error="the host tiling refused these shapes: an invalid window, output sizes that do not match "
                     "it, or a smallest tile over the Unified Buffer budget (`ascend-lower --validate tiling` at these "
                     "shapes says which, with the bytes)",
        tiling_why=f"{fields['tiling_fn']}Why")


def project_manifest(kernel: ir.Kernel, ctx: PassContext, view: WindowView) -> dict:
    return manifest(kernel, ctx, view, "AIV_ONLY", None, "planes", tuple(b.buffer for b in view.buffers), 0)
