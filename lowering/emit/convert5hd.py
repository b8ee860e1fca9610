"""Kind CONVERT5HD: the compiler-written launch of the NC1HWC0 conv route (lowering/passes/route_conv5hd.py), on
the vector cores (AIV only; convert5hd_*.jinja).

It writes x [N, C, H, W] as x5hd [N][C1][H][W][16] and the weight w [K, C, KH, KW] as w5hd [K][C1][KH][KW][16]
(C1 = ceil(C / 16); channels past C are zero). A task moves 16 channel rows of up to `chunk` elements (an image's
pixels, or an output channel's taps) into UB by one DataCopyPad (rows 32-byte aligned), zeroes the missing channel
rows (Duplicate), transposes them to [element][16] by one TransDataTo5HD (16-bit: f16 and bf16 alike, as raw
halves) and copies the result out contiguously: x tasks are (image, channel block, pixel chunk), then weight tasks
(output channel, channel block), round-robin over the cores. docs/design.md "Convolution speed: the NC1HWC0 route".
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir

from ..context import PassContext
from .shared import KernelView, kernel_fields, loc, manifest

#: Elements (pixels or taps) per task: 16 rows of CHUNK halves in, CHUNK x 16 halves out, each queue double-buffered
#: (session 31: copy-in and transpose overlap the previous task's copy-out) = 128 KB of UB; the transpose repeats
#: CHUNK / 16 <= 255 times.
CHUNK = 1024


@dataclass(frozen=True, kw_only=True)
class Convert5hdView(KernelView):
    conv_loc: str
    x: str
    w: str
    x5hd: str
    w5hd: str
    e: dict[str, str]     # n, c, h, w (x), k, kh, kw (w) as the kernel reads them: a symbol's member or a literal
    host: dict[str, str]  # the same as the host tiling reads them
    chunk: int
    aiv: int
    ub: int


def build_view(kernel: ir.Kernel, ctx: PassContext) -> Convert5hdView:
    st = kernel.body[0]
    assert isinstance(st, ir.Convert5hd)
    x, w = kernel.param(st.x), kernel.param(st.w)
    sizes = dict(zip("nchw", x.shape, strict=True)) | {"k": w.shape[0], "kh": w.shape[2], "kw": w.shape[3]}
    return Convert5hdView(**kernel_fields(kernel, ctx), buffers=(),
                          tiling_error="the NC1HWC0 conversion found no tile: an image plane or a kernel window of "
                                       "more than 65535 elements, or more than 4095 channel blocks",
                          conv_loc=loc(ctx, st.span), x=st.x, w=st.w,
                          e={a: f"{d}_" if isinstance(d, str) else str(d) for a, d in sizes.items()},
                          host={a: str(d) for a, d in sizes.items()}, x5hd=st.x5hd, w5hd=st.w5hd, chunk=CHUNK,
                          aiv=ctx.target.aiv, ub=ctx.target.ub_bytes)


def project_manifest(kernel: ir.Kernel, ctx: PassContext, view: Convert5hdView) -> dict:
    return manifest(kernel, ctx, view, "AIV_ONLY", view.chunk, "elements (pixels or taps) per 16-channel block", (),
                    data_movement="DataCopyPad GM -> UB (16 channel rows), TransDataTo5HD, DataCopy UB -> GM")
