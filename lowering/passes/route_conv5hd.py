"""The NC1HWC0 route of a forward convolution: a conversion launch on the vector cores, then the conv launch.

Goals: a kernel whose only split loop is a convolution of the form the route fits (forward conv2d, stride 1, f16/bf16
operands, groups 1, padded or a literal window over 1 x 1: `fits`) becomes a LAUNCHES kernel of two launches joined by two workspace tensors the
compiler declares: launch 0 (kind CONVERT5HD, lowering/emit/convert5hd.py) writes x as x5hd [N][C1][H][W][16]
and the weight as w5hd [K][C1][KH][KW][16] (C1 = ceil(C / 16), missing channels zero: TransDataTo5HD), launch 1 is
the conv loop reading them (`Conv.x5hd` / `Conv.w5hd`; conv_kernel.cpp.jinja's NC1HWC0 path: each tap's 16
consecutive pixels are one Zn fractal of the image-to-column operand, moved by LoadData 2-D without a gather).
The choice is static; every other form keeps the CONV kernel's own paths. A conv that is already one launch of a
kernel of several (a fused conv chain) is not routed (launches do not nest).
The workspace shapes are [N, C1, H, W, 16] and [K, C1, KH, KW, 16] exactly: C1 is a shape symbol the x workspace
defines as ceil(C / 16) (`TensorParam.dims`, a `DimDef` with `ceil`; bound by views.workspace_dims), a fresh name
(before session 31 the shapes used C, 16 C / (16 C1) times too large). docs/design.md "Convolution speed: the NC1HWC0
route".
"""

from __future__ import annotations

from dataclasses import replace

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from ..context import PassContext


def fits(kernel: ir.Kernel) -> bool:
    """Whether the kernel is a lone forward conv2d the route lowers: stride 1 (the DSL's stride is one value for
    every axis; a W stride breaks the run of 16 pixels), f16/bf16, groups 1, and either padding (the old paths'
    sparse layout, 16x the cube work) or a kernel window of literal sizes with more than one tap (a window of
    symbols may be 1 x 1 at launch, which the old flat path serves without a conversion launch)."""
    loop = ir.conv_loop(kernel)
    if loop is None or kernel.workspaces or any(isinstance(s, ir.SplitLoop | ir.CubeLoop) for s in kernel.body):
        return False
    conv = loop.conv
    if conv.transposed or conv.rank != 2:  # first: the window below has two dims only then
        return False
    x, w = kernel.param(conv.x), kernel.param(conv.w)
    window = w.shape[2:]
    taps = all(isinstance(d, int) for d in window) and window[0] * window[1] > 1
    return (conv.stride == (1, 1) and conv.groups == 1 and x.dtype in (DType.F16, DType.BF16) and w.dtype == x.dtype
            and conv.x5hd is None and (any(conv.padding) or taps))


def _fresh(kernel: ir.Kernel, stem: str) -> str:
    names = {p.name for p in kernel.params} | set(kernel.symbols)
    name, i = stem, 0
    while name in names:
        i += 1
        name = f"{stem}{i}"
    return name


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    """The two-launch kernel of a conv the route fits; any other kernel unchanged."""
    if ctx.in_launch or not ctx.allow_conv5hd or not fits(kernel):
        return kernel
    loop = ir.conv_loop(kernel)
    conv = loop.conv
    x, w = kernel.param(conv.x), kernel.param(conv.w)
    xn, wn = _fresh(kernel, f"{conv.x}_5hd"), _fresh(kernel, f"{conv.w}_5hd")
    c = x.shape[1]
    c1 = _fresh(kernel, "C1") if isinstance(c, str) else None
    blocks = c1 if c1 else -(-c // 16)  # C1 = ceil(C / 16): a symbol the x workspace defines, or a literal
    dims = (ir.DimDef(c1, (c,), (16,), conv.span, ceil=True),) if c1 else ()
    x5hd = ir.TensorParam(xn, x.dtype, (x.shape[0], blocks, *x.shape[2:], 16), workspace=True, span=conv.span, dims=dims)
    w5hd = ir.TensorParam(wn, w.dtype, (w.shape[0], blocks, *w.shape[2:], 16), workspace=True, span=conv.span)
    shared = (replace(x5hd, workspace=False), replace(w5hd, workspace=False))
    convert = ir.Kernel(f"{kernel.name}_l0", (x, w, *shared), (ir.Convert5hd(x.name, w.name, xn, wn, conv.span),),
                        kernel.type_args, kernel.type_options, ir.KernelKind.CONVERT5HD, kernel.span)
    routed = replace(loop, conv=replace(conv, x5hd=xn, w5hd=wn))
    body = tuple(routed if s is loop else s for s in kernel.body)
    conv_kernel = replace(kernel, name=f"{kernel.name}_l1", params=(*kernel.params, *shared), body=body, kind=None)
    launches = (ir.Launch(0, convert, (), (xn, wn), conv.span), ir.Launch(1, conv_kernel, (xn, wn), (), loop.span))
    return replace(kernel, params=(*kernel.params, x5hd, w5hd), body=launches, kind=ir.KernelKind.LAUNCHES)
