"""Kind RESIZE: a plane loop that resamples (`store(y[p], resize_linear(load(x[p])))`), resize_*.jinja.

A tile is `planes` whole planes, or, when one plane does not fit UB, a band of `rows` output rows of one
plane with the input rows they read ([lo, hi), from the row tables). The input copy is one contiguous GM
range (planes p0.. from input row lo); output rows land 32-byte aligned in UB (`OWp_` apart) and go out
with one DataCopyPad per 4095 rows. Each core fills its index and weight tables once (Init, scalar unit):
per output column the byte offset of its source column(s) in an input row and, for linear, its two
weights; per output row its source row(s) and weights. The index arithmetic is that of PyTorch's CPU kernel
(aten/src/ATen/native/cpu/UpSampleKernel.cpp, UpSample.h), bit for bit, with the float scale in / out: nearest
floor(scale * o); nearest-exact floor(real + 0.5) and linear half-pixel (align_corners=False) from
real = max(scale * (o + 0.5) - 0.5, 0), which the x86 build rounds once (a fused multiply-add; the template's
HalfPixel reproduces it in integers); linear corner-aligned (in - 1) / (out - 1) * o; linear weights in fp32 for
every dtype (PyTorch's opmath_t: a fuzz finding, tests/fuzz_cases/mismatch-f16-linear-resize-weights-in-f32.adsl,
showed torch 2.13's f16 bilinear equal to fp32 weights bit for bit, and off by up to 0.5 with f16-rounded ones), bicubic
weights rounded to the data's dtype (as PyTorch's bicubic stores them: bit for bit).
An output row is then one vector Gather (nearest) or, for linear, per source row two Gathers weighted by
the column tables and added, the rows combined with their scalar weights: f16 computes in f32. A rank-1
plane ([N, C, L]) is one row. A rank-3 plane ([N, C, D, H, W], a volume) adds depth tables (source slice(s) and
weights per output depth slice): a tile is whole volumes, or one output depth slice's band of output rows with
the input rows [lo, hi) of its one or two source depth slices (two copies, the second 32-byte aligned after the
first); trilinear combines two bilinear rows with the depth weights, as PyTorch's t0 * w0 + t1 * w1. Bicubic
(2-D) keeps four column offset and weight tables and four source rows per output row (16 Gathers), summed in
PyTorch's order ((t0 * w0 + t1 * w1) + t2 * w2) + t3 * w3; its source position is the half-pixel one without the
clamp at 0 (SignedHalfPixel), its f32 weights Keys' A = -0.75 cubic in factored form (no cancellation: a few
ulps from exact, where PyTorch's expanded form is up to 7e-7 off; the two differ by up to 8e-7). The host tiling returns 0 blocks (`TILING`) when a single output row with
its input rows and the tables does not fit UB.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir

from ..context import PassContext
from ..tiling_rules import MIN_TILES_PER_CORE
from .shared import KernelView, buffer_views, kernel_fields, loc, manifest, share_lines


@dataclass(frozen=True, kw_only=True)
class ResizeView(KernelView):
    buffer_num: int
    copy_helpers: str
    row_mode: bool = False  # copy_helpers_pad: no row helpers
    share: tuple[str, ...]  # Init: this core's share of the planes
    ctype: str
    rank: int
    mode: str  # nearest | nearest_exact | linear | cubic
    align_corners: bool
    in_dims_tiling: tuple[str, ...]  # (D, H, W) as tiling fields ("1" for the dims a plane of rank < 3 lacks)
    out_dims_tiling: tuple[str, ...]
    in_dims: tuple[str, ...]  # ... and as host variables
    out_dims: tuple[str, ...]
    in_queue: str
    out_queue: str
    in_buf: str
    out_buf: str
    in_gm: str
    out_gm: str
    resize_loc: str
    copy_in_loc: str
    copy_out_loc: str
    elem_bytes: int
    extent_host: str
    tile_loc: str
    ub_budget: int
    min_tiles_per_core: int


def _dims(shape: tuple[str | int, ...], prefix: str) -> tuple[str, ...]:
    """(D, H, W): a plane's spatial dims, "1" for those a plane of rank 1 or 2 lacks."""
    dims = tuple(str(d) if isinstance(d, int) else f"{prefix}{d}" for d in shape)
    return ("1",) * (3 - len(dims)) + dims


@dataclass(frozen=True)
class PlaneParts:
    """What resize and antialias plane kernels read off their IR alike; `fields`: the view fields they share."""
    mode: str  # the Resize op's mode attribute
    dtype: ir.DType  # the input buffer's
    out_buf: str
    rank: int  # of a plane
    fields: dict


def plane_parts(kernel: ir.Kernel, ctx: PassContext, dims) -> PlaneParts:
    """The buffers, this core's share, the in/out plane dims through `dims(shape, prefix)`, queues, GM names and
    spans of a plane kernel (one split, one plane tile loop with a CopyIn, a Resize op and a CopyOut)."""
    split = kernel.phases[0]
    tl = split.body[0]
    lead, params = len(split.extent), {p.name: p for p in kernel.tensors}
    views = buffer_views(tl)
    stmts = [s for st in tl.body for s in st.body]
    copy_in = next(s for s in stmts if isinstance(s, ir.CopyIn))
    copy_out = next(s for s in stmts if isinstance(s, ir.CopyOut))
    resize = next(s for s in stmts if isinstance(s, ir.VecOp) and s.api == "Resize")
    in_view = next(b for b in views if b.name == copy_in.buffer)
    out_view = next(b for b in views if b.name == copy_out.buffer)
    in_shape, out_shape = params[copy_in.tensor].shape[lead:], params[copy_out.tensor].shape[lead:]
    return PlaneParts(dict(resize.attrs)["mode"], in_view.buffer.dtype, copy_out.buffer, tl.shape.rank, dict(
        **kernel_fields(kernel, ctx), buffers=views, buffer_num=tl.buffers, copy_helpers="copy_helpers_pad.cpp.jinja",
        share=tuple(share_lines(ctx, split, "the [0, {}) planes")),
        in_dims_tiling=dims(in_shape, "tiling."), out_dims_tiling=dims(out_shape, "tiling."),
        in_dims=dims(in_shape, ""), out_dims=dims(out_shape, ""), in_queue=in_view.member, out_queue=out_view.member,
        in_buf=copy_in.buffer, in_gm=f"{copy_in.tensor}Gm", out_gm=f"{copy_out.tensor}Gm",
        resize_loc=loc(ctx, resize.span), copy_in_loc=loc(ctx, copy_in.span), copy_out_loc=loc(ctx, copy_out.span),
        extent_host=" * ".join(split.extent), tile_loc=loc(ctx, tl.span), ub_budget=ctx.target.ub_budget))


def build_view(kernel: ir.Kernel, ctx: PassContext) -> ResizeView:
    plane = plane_parts(kernel, ctx, _dims)
    op = plane.mode
    return ResizeView(
        **plane.fields, ctype=plane.dtype.ctype, out_buf=plane.out_buf, rank=plane.rank,
        mode={"resize_nearest": "nearest", "resize_nearest_exact": "nearest_exact",
              "resize_cubic": "cubic", "resize_cubic_ac": "cubic"}.get(op, "linear"),
        align_corners=op.endswith("_ac"), elem_bytes=plane.dtype.size, min_tiles_per_core=MIN_TILES_PER_CORE,
        tiling_error="one output row of a plane, the input rows it reads and the per-column index tables (16 bytes "
                     "per output column for linear, 32 for cubic, 4 for nearest) do not fit the Unified Buffer (a 1-D plane: its "
                     "whole input row too)")


def project_manifest(kernel: ir.Kernel, ctx: PassContext, view: ResizeView) -> dict:
    return manifest(kernel, ctx, view, "AIV_ONLY", None, "planes", tuple(b.buffer for b in view.buffers), 0)
