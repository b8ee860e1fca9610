"""Kind CONV: an implicit-GEMM convolution on the cube unit (AIC only; conv_*.jinja).

Per output image the convolution is Y[K, OH*OW] = W[K, C*KH*KW] x Xcol[C*KH*KW, OH*OW]. A tile is
`tileM` output channels x `tileRows` output rows x `tileW` output columns; its reduction runs in steps of
`tileC` input channels. Per step: the weight tile goes GM (ND) -> L1 (NZ) with one `DataCopy(Nd2NzParams)`;
the image-to-column tile is gathered into L1 by the same DMA, one call per (channel, kh, kw) tap (no im2col
tensor in GM). Two layouts of the gathered tile, chosen statically:
- dense (row stride 1, no padding along W): each output row fills `woPad` = OW rounded up to 16 columns
  with contiguous input pixels; row stride and top/bottom padding only change which input rows a tap
  copies;
- sparse (stride > 1 or padding along W): each output pixel owns one fractal column (its value in
  column 0), because a DMA cannot place a pixel at a sub-32-byte offset nor skip input pixels; it costs
  16x the cube work of the dense layout (Load3Dv2 from an NC1HWC0 feature map is the fast path, not
  lowered yet).
Taps outside the input (padding) are not copied: `InitConstValue` zero-fills the L1 tile first.
`LoadData` (2-D) moves both tiles to L0A (Zz) and L0B (Zn, each fractal transposed); `Mmad` accumulates
into L0C; after the last step `Fixpipe` writes each output row (dense) or pixel (sparse) to GM in NCHW
(NZ -> ND), with ReLU and the f16/bf16 conversion on the way out when the kernel asks.
The pipes are ordered by SetFlag/WaitFlag pairs on every hand-off (the cube gets no auto-sync), one
stage at a time: no ping-pong buffers yet. Formats and APIs: ascendc_next.md §1.2, §1.4-§1.6.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from ..context import PassContext
from .shared import KernelView, LaunchCheck, kernel_fields, loc, manifest

_QUANT = {DType.F32: "NoQuant", DType.F16: "F322F16", DType.BF16: "F322BF16"}


@dataclass(frozen=True, kw_only=True)
class ConvView(KernelView):
    split_loc: str
    conv_loc: str
    store_loc: str
    in_ctype: str
    out_ctype: str
    x: str
    w: str
    out: str
    n: str
    c: str
    h: str
    w_dim: str
    k: str
    kh: str
    kw: str
    oh: str
    ow: str
    dil_h: int
    dil_w: int
    stride_h: int
    stride_w: int
    pad_h: int
    pad_w: int
    sparse: bool
    zero_fill: bool
    quant: str
    relu: bool
    max_m: int
    max_n: int
    max_k: int
    esize: int
    aic: int
    l0a: int
    l0b: int
    l0c: int
    l1: int


def build_view(kernel: ir.Kernel, ctx: PassContext) -> ConvView:
    loop = ir.conv_loop(kernel)
    conv, plan, t = loop.conv, loop.plan, ctx.target
    x, w = kernel.param(conv.x), kernel.param(conv.w)
    n, c, h, wd = x.shape
    k, _, kh, kw = w.shape
    oh, ow = loop.dims[2:]
    checks = []
    for o, i, kd, s_, p, d in ((oh, h, kh, conv.stride[0], conv.padding[0], conv.dilation[0]),
                               (ow, wd, kw, conv.stride[1], conv.padding[1], conv.dilation[1])):
        checks.append(LaunchCheck(f"{i} + {2 * p} >= {d} * ({kd} - 1) + 1 && {o} == ({i} + {2 * p} - {d} * ({kd} - 1) - 1) "
                                  f"/ {s_} + 1",
                                  f"error[BINDING]: {loop.out} at {loc(ctx, loop.span)}: its size {o} must be "
                                  f"({i} + 2 * padding - dilation * ({kd} - 1) - 1) // stride + 1 (PyTorch's rule)"))
    return ConvView(
        **kernel_fields(kernel, ctx), buffers=(), launch_checks=tuple(checks),
        tiling_error="the host tiling found no convolution tile that fits L0A/L0B/L0C/L1 (kernel window too large, "
                     "or an output row longer than 4080 pixels)",
        split_loc=loc(ctx, loop.span), conv_loc=loc(ctx, conv.span), store_loc=loc(ctx, loop.span),
        in_ctype=x.dtype.ctype, out_ctype=loop.out_dtype.ctype, x=conv.x, w=conv.w, out=loop.out,
        n=n, c=c, h=h, w_dim=wd, k=k, kh=kh, kw=kw, oh=oh, ow=ow, dil_h=conv.dilation[0], dil_w=conv.dilation[1],
        stride_h=conv.stride[0], stride_w=conv.stride[1], pad_h=conv.padding[0], pad_w=conv.padding[1],
        sparse=conv.stride[1] != 1 or conv.padding[1] != 0, zero_fill=any(conv.padding),
        quant=_QUANT[loop.out_dtype], relu=loop.relu, max_m=plan.max_m, max_n=plan.max_n, max_k=plan.max_k,
        esize=x.dtype.size, aic=t.aic, l0a=t.l0a_bytes, l0b=t.l0b_bytes, l0c=t.l0c_bytes, l1=t.l1_bytes)


def project_manifest(kernel: ir.Kernel, ctx: PassContext, view: ConvView) -> dict:
    return manifest(kernel, ctx, view, "AIC_ONLY", None, "output channels x output rows",
                    (), conv_tile=[view.max_m, view.max_n, view.max_k],
                    data_movement="GM -> L1 image-to-column gather (DataCopy Nd2NzParams), LoadData 2-D, Mmad, "
                                  "Fixpipe NZ -> ND")
