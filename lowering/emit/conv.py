"""Kind CONV: an implicit-GEMM convolution on the cube unit (AIC only; conv_*.jinja).

Per output plane (image n, output depth od) the convolution is Y[K, OH*OW] = W[K, C*KD*KH*KW] x
Xcol[C*KD*KH*KW, OH*OW]: conv3d accumulates the KD input planes of each output plane into the same L0C (a
depth tap is one more factor of the reduction), conv2d is the case KD = OD = 1 and conv1d the 2-D case with
one row (H = KH = OH = 1). A tile is `tileM` output channels x `tileRows` output rows x `tileW` output columns
of one plane; its reduction runs in steps of `tileC` input channels. Per step: the weight tile goes GM (ND) ->
L1 (NZ) with one `DataCopy(Nd2NzParams)`; the image-to-column tile is gathered into L1 by the same DMA, one
call per (channel, kd, kh, kw) tap (no im2col tensor in GM). Two layouts of the gathered tile, chosen
statically:
- dense (row stride 1, no padding along W): each output row fills `woPad` = OW rounded up to 16 columns
  with contiguous input pixels; row stride and top/bottom padding only change which input rows a tap
  copies;
- sparse (stride > 1 or padding along W): each output pixel owns one fractal column (its value in
  column 0), because a DMA cannot place a pixel at a sub-32-byte offset nor skip input pixels; it costs
  16x the cube work of the dense layout (Load3Dv2 from an NC1HWC0 feature map is the fast path, not
  lowered yet).
- flat (a pointwise kernel: 1 x 1 (x 1) taps, known at launch, with stride 1 and no padding): the GEMM is
  Y[K, OH*OW] = W[K, C] x X[C, OH*OW] with no image-to-column step, so a tile is `tileW` consecutive pixels of
  the flattened plane (rows need no padding to 16) and its input is gathered with one copy per 16 input
  channels (`ndNum` channel blocks in one call when the strides fit 16 bits) instead of one per channel
  and row; the store is one Fixpipe per tile.
- NC1HWC0 (`route5hd`: passes/route_conv5hd.py put a conversion launch before this one): x and w are read as
  x5hd [N][C1][H][W][16] / w5hd [K][C1][KH][KW][16]; each step copies the tile's input window (halo rows, zero
  border) and the weights into L1, and each tap's 16 pixels of an output row are one Zn fractal loaded into L0B
  without a gather (conv5hd_tile.cpp.jinja).
Taps outside the input (padding) are not copied: `InitConstValue` zero-fills the L1 tile first.
Groups: a tile's channels lie in one group g (tileM <= K / groups); its reduction runs over the group's
C / groups input channels, starting at channel g * C / groups of x. Depthwise (groups = C = K) is one output
channel per tile, 1/16 of the cube's rows (the vector unit may suit it better; not done).
A bias is added exactly in f32 before any ReLU or cast: L0C starts from a float Mmad (A2 multiplies
float x float -> float, ascendc_next.md §7) of the bias column [m x 1] (zero-padded to a 16 x 8 fractal
column by the copy) by a tile of ones, so every column holds bias[channel] (b x 1 + 0 is exact); the main
steps then accumulate onto it. Mmad's own bias (the BiasTable, `cmatrixSource`) is a [1, N] row added to
every row of C (Mmad.md; Matmul guide atlasascendc_api_07_0528: "Bias [1, N], added to each row"), i.e. one
value per output pixel here, since the weight is the left operand (channels on M): it does not fit.
`LoadData` (2-D) moves both tiles to L0A (Zz) and L0B (Zn, each fractal transposed); `Mmad` accumulates
into L0C; after the last step `Fixpipe` writes each output row (dense) or pixel (sparse) to GM in NCHW
(NZ -> ND), with ReLU and the f16/bf16 conversion on the way out when the kernel asks.
Transposed (conv_transposeNd, w [C, K / groups, *kernel]): out[o] += w[k] x[i] with o = i * stride - padding +
k * dilation, so the gather copies each tap's consecutive inputs into every stride-th pixel column and row of the
tile (`Scatter` in the template; the rest keeps the zero fill: no zero-inserted input anywhere) and the store
is the forward one. Its weight rows are not contiguous over (channel, tap), so each input channel's taps start a
fractal column of the weight tile (padded to 16 GEMM rows). docs/design.md "Transposed convolution" has the
cost and the rejected per-phase form.
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


#: The spatial axes of the emitted loops (depth, rows, columns); a convNd with N < 3 fills the missing leading
#: axes with size 1 (conv1d is the 2-D path with one row, conv2d the 3-D path with one plane).
_AXES = ("d", "h", "w")


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
    bias: str | None  # an f32 [K] tensor: L0C starts from it (see the kernel template)
    rank: int
    host: dict[str, str]  # sizes as the host tiling reads them: a shape symbol's name, or a literal ("1")
    e: dict[str, str]     # the same sizes in the kernel: the symbol's member (`H_`) or the literal
    stride: dict[str, int]
    pad: dict[str, int]
    dil: dict[str, int]
    sparse: bool
    flat_ok: bool  # stride 1, no padding, forward: a 1x1(x1) kernel (known at launch) tiles each plane as one row
    zero_fill: bool
    transposed: bool  # conv_transposeNd: the gather scatters each tap's inputs to every stride-th output
    out_pad: dict[str, int]
    route5hd: bool  # the NC1HWC0 route (passes/route_conv5hd.py): x / w read as x5hd / w5hd (conv5hd_tile.cpp.jinja)
    x5hd: str
    w5hd: str
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


def _sizes(kernel: ir.Kernel, loop: ir.ConvLoop) -> dict[str, str | int]:
    """Every size the loops use, keyed n, c, k (output channels), cg (input channels per group: the forward
    weight's dim 1, C / groups for a transposed one), kg (output channels per group, the transposed weight's
    dim 1), groups, d/h/w (input), kd/kh/kw (kernel), od/oh/ow (output); axes a convNd lacks are 1. A size is
    an int, a shape symbol, or (cg of a grouped transposed convolution) a quotient `(C / G)`."""
    conv = loop.conv
    x, w = kernel.param(conv.x), kernel.param(conv.w)
    pad = (1,) * (3 - conv.rank)
    sizes = {"n": x.shape[0], "c": x.shape[1], "k": loop.dims[1], "groups": conv.groups}
    if conv.transposed:
        sizes["kg"] = w.shape[1]
        sizes["cg"] = x.shape[1] if conv.groups == 1 else f"({x.shape[1]} / {conv.groups})"
    else:
        sizes["cg"] = w.shape[1]
    for prefix, dims in (("", x.shape[2:]), ("k", w.shape[2:]), ("o", loop.dims[2:])):
        sizes.update({prefix + a: d for a, d in zip(_AXES, pad + tuple(dims), strict=True)})
    return sizes


def _kernel_expr(d: str | int) -> str:
    """A size as the kernel reads it: a symbol's member (`H_`), a literal, or a quotient of them."""
    if isinstance(d, int):
        return str(d)
    if d.startswith("("):
        a, g = d[1:-1].split(" / ")
        return f"({_kernel_expr(_as_size(a))} / {_kernel_expr(_as_size(g))})"
    return f"{d}_"


def _as_size(v: str) -> str | int:
    return int(v) if v.isdigit() else v


def _dense(conv: ir.Conv, kernel_w: str | int, stride: dict, pad: dict, dil: dict) -> bool:
    """Whether every tap of an output row reads contiguous input pixels from the row's first column (the dense
    gather layout). Forward: W stride 1, no W padding. Transposed: W stride 1 and padding >= dilation x (KW - 1)
    for a literal KW (a tap's first valid output is column 0); otherwise a tap's first output lies mid-row."""
    if not conv.transposed:
        return stride["w"] == 1 and pad["w"] == 0
    return stride["w"] == 1 and isinstance(kernel_w, int) and pad["w"] >= dil["w"] * (kernel_w - 1)


def _size_checks(ctx, loop: ir.ConvLoop, sizes, stride, pad, dil, out_pad) -> list[LaunchCheck]:
    conv, lead = loop.conv, 3 - loop.conv.rank
    checks = []
    for a in _AXES[lead:]:
        o, i, kd, s_, p, d = sizes["o" + a], sizes[a], sizes["k" + a], stride[a], pad[a], dil[a]
        if conv.transposed:
            checks.append(LaunchCheck(f"{i} >= 1 && {kd} >= 1 && {o} + {2 * p} == ({i} - 1) * {s_} + {d} * ({kd} - 1) + "
                                      f"{out_pad[a]} + 1",
                                      f"error[BINDING]: {loop.out} at {loc(ctx, loop.span)}: its size {o} must be ({i} - 1) * "
                                      f"stride - 2 * padding + dilation * ({kd} - 1) + output_padding + 1 (PyTorch's rule)"))
        else:
            checks.append(LaunchCheck(f"{i} + {2 * p} >= {d} * ({kd} - 1) + 1 && {o} == ({i} + {2 * p} - {d} * ({kd} - 1) - 1) "
                                      f"/ {s_} + 1",
                                      f"error[BINDING]: {loop.out} at {loc(ctx, loop.span)}: its size {o} must be "
                                      f"({i} + 2 * padding - dilation * ({kd} - 1) - 1) // stride + 1 (PyTorch's rule)"))
    if conv.groups != 1 and conv.transposed:
        c, kg, k, g = (sizes[key] for key in ("c", "kg", "k", "groups"))
        checks.append(LaunchCheck(f"{g} >= 1 && {c} % {g} == 0 && {k} == {kg} * {g}",
                                  f"error[BINDING]: {conv.w} at {loc(ctx, conv.span)}: groups={g} needs {c} input channels "
                                  f"divisible by groups and {k} output channels = {kg} x groups"))
    elif conv.groups != 1:
        c, cg, k, g = (sizes[key] for key in ("c", "cg", "k", "groups"))
        checks.append(LaunchCheck(f"{g} >= 1 && {c} == {cg} * {g} && {k} % {g} == 0",
                                  f"error[BINDING]: {conv.w} at {loc(ctx, conv.span)}: groups={g} needs {c} input channels "
                                  f"= {cg} x groups and {k} output channels divisible by groups"))
    return checks


def build_view(kernel: ir.Kernel, ctx: PassContext) -> ConvView:
    loop = ir.conv_loop(kernel)
    conv, plan, t = loop.conv, loop.plan, ctx.target
    x = kernel.param(conv.x)
    sizes = _sizes(kernel, loop)
    lead = 3 - conv.rank
    stride = dict(zip(_AXES, (1,) * lead + conv.stride, strict=True))
    pad = dict(zip(_AXES, (0,) * lead + conv.padding, strict=True))
    dil = dict(zip(_AXES, (1,) * lead + conv.dilation, strict=True))
    out_pad = dict(zip(_AXES, (0,) * lead + (conv.output_padding or (0,) * conv.rank), strict=True))
    checks = _size_checks(ctx, loop, sizes, stride, pad, dil, out_pad)
    route = conv.x5hd is not None
    return ConvView(
        **kernel_fields(kernel, ctx), buffers=(), launch_checks=tuple(checks),
        tiling_error="the host tiling found no convolution tile that fits L0A/L0B/L0C/L1 (kernel window too large, "
                     "or too many input channels x taps for one weight row)",
        split_loc=loc(ctx, loop.span), conv_loc=loc(ctx, conv.span), store_loc=loc(ctx, loop.span),
        in_ctype=x.dtype.ctype, out_ctype=loop.out_dtype.ctype, x=conv.x, w=conv.w, out=loop.out, bias=conv.bias, rank=conv.rank,
        host={key: str(d) for key, d in sizes.items()},
        e={key: _kernel_expr(d) for key, d in sizes.items()},
        stride=stride, pad=pad, dil=dil, sparse=not route and not _dense(conv, sizes["kw"], stride, pad, dil),
        flat_ok=not route and not conv.transposed and all(v == 1 for v in stride.values()) and not any(pad.values()),
        route5hd=route, x5hd=conv.x5hd or "", w5hd=conv.w5hd or "",
        zero_fill=any(conv.padding) or conv.transposed, transposed=conv.transposed, out_pad=out_pad,
        quant=_QUANT[loop.out_dtype], relu=loop.relu, max_m=plan.max_m, max_n=plan.max_n, max_k=plan.max_k,
        esize=x.dtype.size, aic=t.aic, l0a=t.l0a_bytes, l0b=t.l0b_bytes, l0c=t.l0c_bytes, l1=t.l1_bytes)


def project_manifest(kernel: ir.Kernel, ctx: PassContext, view: ConvView) -> dict:
    moves = ("GM -> L1 NC1HWC0 feature map rows (DataCopy) and weights (Nd2NzParams), LoadData 2-D (each tap's 16 "
             "pixels one Zn fractal), Mmad, Fixpipe NZ -> ND") if view.route5hd else (
        "GM -> L1 image-to-column gather (DataCopy Nd2NzParams), LoadData 2-D, Mmad, Fixpipe NZ -> ND")
    return manifest(kernel, ctx, view, "AIC_ONLY", None, "output channels x output rows",
                    (), conv_tile=[view.max_m, view.max_n, view.max_k], data_movement=moves)
