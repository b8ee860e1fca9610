"""Kind ANTIALIAS: a plane loop storing `resize_linear / resize_cubic(load(x[p]), antialias=True)`, antialias_*.jinja.

F.interpolate(x, size=y.shape[2:], mode="bilinear" | "bicubic", antialias=True[, align_corners=True]) of 2-D f32
planes, as PyTorch's CPU kernel computes it (aten/src/ATen/native/cpu/UpSampleKernel.cpp,
separable_upsample_generic_Nd_kernel_impl): separable, first along W (skipped when W is unchanged) into rows of
OW, then along H (skipped when H is unchanged). Per output position the filter's taps come from
_compute_indices_min_size_weights_aa: center = scale * (o + 0.5), support = scale * (1 | 2) when downsampling (else
1 | 2), xmin = int64(center - support + 0.5) clamped at 0, xsize = int64(center + support + 0.5) clamped at the
input size, minus xmin, weights filter((j + xmin - center + 0.5) / scale) normalised by their f32 sum (triangle;
Keys' cubic with A = -0.5). Init computes them on the scalar unit in f32: the indices exactly as PyTorch (its
`+ 0.5` is exact in double; `HalfUp` does it without rounding), the weights within a few ulps (PyTorch rounds
`(d + 0.5) * invscale` once, in double). A tile is a band of output rows of one plane with the input rows
[lo, hi) it reads (row ranges are non-decreasing): along W, per input row, a Gather per tap (offset tables per
tap of every output column; a column's taps past its own read the row's zero slot, so a non-finite neighbour
never meets a 0 weight), multiplied by the tap's weight and added in PyTorch's order; along H, per output row,
its input rows times scalar weights, added in order. At most 64 taps per position and one output row with its
input rows must fit UB, else the host returns 0 blocks (`TILING`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir

from ..context import PassContext
from .resize import plane_parts
from .shared import KernelView, manifest


@dataclass(frozen=True, kw_only=True)
class AntialiasView(KernelView):
    buffer_num: int
    copy_helpers: str
    row_mode: bool = True  # copy_helpers_pad: rows at a pitch
    share: tuple[str, ...]
    cubic: bool
    half_taps: int  # PyTorch's interp_size / 2: 1 (bilinear), 2 (bicubic)
    align_corners: bool
    in_dims_tiling: tuple[str, ...]
    out_dims_tiling: tuple[str, ...]
    in_dims: tuple[str, ...]
    out_dims: tuple[str, ...]
    in_queue: str
    out_queue: str
    in_buf: str
    in_gm: str
    out_gm: str
    resize_loc: str
    copy_in_loc: str
    copy_out_loc: str
    extent_host: str
    tile_loc: str
    ub_budget: int


def _dims(shape, prefix: str) -> tuple[str, ...]:
    return tuple(f"{prefix}{d}" if isinstance(d, str) else str(d) for d in shape)


def build_view(kernel: ir.Kernel, ctx: PassContext) -> AntialiasView:
    plane = plane_parts(kernel, ctx, _dims)
    op = plane.mode
    return AntialiasView(
        **plane.fields, cubic=op.startswith("resize_cubic"), half_taps=2 if op.startswith("resize_cubic") else 1,
        align_corners=op.endswith("_ac"),
        tiling_error="one output row with the input rows it reads and the filter tables does not fit the Unified "
                     "Buffer, or a position has more than 64 filter taps (downsampling by more than 31; bicubic 15)")


def project_manifest(kernel: ir.Kernel, ctx: PassContext, view: AntialiasView) -> dict:
    return manifest(kernel, ctx, view, "AIV_ONLY", None, "planes", tuple(b.buffer for b in view.buffers), 0)
