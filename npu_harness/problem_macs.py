"""The multiply-adds a problem needs, where the kernel's Mmad counters cannot tell them: the cube term of the
cost model's headline (npu_harness/cost/model.py `problem_macs`).

A forward convolution needs, per output element, one MAC per weight element of its group: out.numel() x
(C / groups) x taps (the taps over the zero padding included, as MAC counts of convolutions usually are). The
emulator's unpadded Mmad count (m x n x k of each call) is not that: a conv lowering may compute columns no output
needs (the sparse gather layout of emit/conv.py gives each pixel a 16-column fractal, 15 of them dead; dense rows
are padded to 16 pixels), and the bias enters as a float Mmad. Transposed convolutions keep the counters (which
of their taps reach an output after cropping is not a product of sizes).
"""

from __future__ import annotations

import math

from ascend_dsl import ir
from ascend_dsl.dtypes import DType

from .binding import Binding


def _size(shape: tuple, symbols: dict[str, int]) -> int:
    return math.prod(symbols[d] if isinstance(d, str) else d for d in shape)


def problem_macs(kernel: ir.Kernel, b: Binding) -> tuple[int, bool] | None:
    """(MACs, fp32 operands) of a forward convolution kernel (or launch) at the binding's shapes; None for any
    other kernel. The output may be a workspace tensor of a kernel of several launches: sizes come from the
    declared shapes and the bound symbols, not from the bound arrays."""
    loop = ir.conv_loop(kernel)
    if loop is None or loop.conv.transposed:
        return None
    out, w = kernel.param(loop.out), kernel.param(loop.conv.w)
    return _size(out.shape, b.symbols) * _size(w.shape[1:], b.symbols), kernel.param(loop.conv.x).dtype == DType.F32
