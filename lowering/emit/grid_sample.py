"""Kind GRID: a plane loop that samples planes at a grid tensor's positions (`grid_sample`), grid_sample_*.jinja.

`store(y[p], grid_sample(load(x[p]), grid, mode=, padding_mode=, align_corners=))` with x [N, C, H, W], grid
[N, OH, OW, 2] and y [N, C, OH, OW]. A tile is up to `tileLength` whole planes of one batch n (a tile never spans
two batches: they read different grids), copied in at a pitch of HWp_ elements (32-byte aligned, one element more
than a plane) with element H * W of each plane set to 0: the zero slot every out-of-range tap reads, as PyTorch's
masked gathers read 0 (padding_mode="zeros"; for "border" only the second tap past the last row or column, whose
weight is 0). The output positions are taken in chunks of up to `chunk` grid points: the chunk's (x, y) pairs are
copied in, split into x and y by a Gather, and on the vector unit turned into source positions as PyTorch's CPU
kernel computes them (aten/src/ATen/native/cpu/GridSamplerKernel.cpp, ComputeLocationBase: align_corners=False
((g + 1) * (size / 2)) - 0.5, True (g + 1) * ((size - 1) / 2), each rounded to f32; border: clamped to
[0, size - 1]; zeros: clamped to [-2, size + 1], which changes no tap's weight or validity and keeps the integer
conversion exact). Bilinear: the corner is floor(x) (Cast CAST_FLOOR, float to float), weights w = x - floor(x),
e = 1 - w, nw = s * e, ne = s * w, sw = n * e, se = n * w, summed ((nw + ne) + sw) + se as PyTorch; nearest:
rint (CAST_RINT, ties to even as _mm256_round_ps). A tap's validity is a 0 / 1 float
(clamp(i + 1, 0, 1) * clamp(size - i, 0, 1): exact on integral floats); its byte offset m * (lin - H * W) + H * W,
times 4, is exact in f32 (planes below 2^22 elements) and converted to u32. The chunk's offsets and weights are
computed once and serve every plane of the tile: per plane 4 Gathers (nearest: 1), 4 Mul and 3 Add.
The host tiling returns 0 blocks (`TILING`) when one plane with the smallest chunk's tables does not fit UB.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir
from ascend_dsl.ops import grid_params

from ..context import PassContext
from .shared import KernelView, buffer_views, kernel_fields, loc, manifest, share_lines

#: f32 tables of the chunk's length (TBufs) besides the grid and output queues and the deinterleave offsets.
TABLES = {"bilinear": ("gx", "gy", "fx", "fy", "mx0", "mx1", "my0", "my1", "wx", "wy", "a", "b", "off0", "off1", "off2",
                       "off3"),
          "nearest": ("gx", "gy", "fx", "fy", "mx0", "my0", "a", "b", "off0")}


@dataclass(frozen=True, kw_only=True)
class GridView(KernelView):
    buffer_num: int
    copy_helpers: str
    row_mode: bool = True  # copy_helpers_pad: CopyRowsGmToUb (planes at a pitch)
    share: tuple[str, ...]
    mode: str  # bilinear | nearest
    padding: str  # zeros | border
    align_corners: bool
    tables: int
    tables_list: tuple[str, ...]
    in_queue: str
    out_queue: str
    in_buf: str
    out_buf: str
    x_name: str
    grid_name: str
    y_name: str
    sample_loc: str
    copy_in_loc: str
    copy_out_loc: str
    tile_loc: str
    dims: tuple[str, ...]  # N, C, H, W, OH, OW as tiling fields
    host_dims: tuple[str, ...]  # ... as host variables
    ub_budget: int


def build_view(kernel: ir.Kernel, ctx: PassContext) -> GridView:
    split = kernel.phases[0]
    tl = split.body[0]
    params = {p.name: p for p in kernel.tensors}
    views = buffer_views(tl)
    stmts = [s for st in tl.body for s in st.body]
    copy_in = next(s for s in stmts if isinstance(s, ir.CopyIn))
    copy_out = next(s for s in stmts if isinstance(s, ir.CopyOut))
    sample = next(s for s in stmts if isinstance(s, ir.VecOp) and s.api == "Resize")
    attrs = dict(sample.attrs)
    op = attrs["mode"]
    mode, padding, align = grid_params(op)
    x, y = params[copy_in.tensor], params[copy_out.tensor]
    dims = (*x.shape, *y.shape[2:])
    in_view = next(b for b in views if b.name == copy_in.buffer)
    out_view = next(b for b in views if b.name == copy_out.buffer)
    return GridView(
        **kernel_fields(kernel, ctx), buffers=views, buffer_num=tl.buffers,
        copy_helpers="copy_helpers_pad.cpp.jinja",
        share=tuple(share_lines(ctx, split, "the [0, {}) planes")), mode=mode, padding=padding, align_corners=align,
        tables=len(TABLES[mode]), tables_list=TABLES[mode], in_queue=in_view.member, out_queue=out_view.member, in_buf=copy_in.buffer,
        out_buf=copy_out.buffer, x_name=x.name, grid_name=attrs["grid"], y_name=y.name,
        sample_loc=loc(ctx, sample.span), copy_in_loc=loc(ctx, copy_in.span), copy_out_loc=loc(ctx, copy_out.span),
        tile_loc=loc(ctx, tl.span), dims=tuple(f"tiling.{d}" if isinstance(d, str) else str(d) for d in dims),
        host_dims=tuple(map(str, dims)),
        ub_budget=ctx.target.ub_budget,
        tiling_error="one input plane (at a 32-byte pitch, with its zero slot) and the tables of a chunk of 64 grid "
                     f"points ({len(TABLES[mode]) * 4 + 32} bytes per point) do not fit the Unified Buffer")


def project_manifest(kernel: ir.Kernel, ctx: PassContext, view: GridView) -> dict:
    return manifest(kernel, ctx, view, "AIV_ONLY", None, "planes", tuple(b.buffer for b in view.buffers), 0)
