"""How far a running sum (`cumsum`) or product (`cumprod`) may be from its exact value in any blocked or tree order
of its adds (multiplies): the fuzz oracle's slack for scans (the interpreter's sum_nudge runs move each prefix by
this bound, up or down).

The bound. A prefix s_k = x_1 + ... + x_k computed by any binary tree of f32 adds (every add rounds once:
fl(a + b) = (a + b)(1 + d), |d| <= u = 2^-24) is s^_k = sum_i x_i prod_{adds on i's path to the root} (1 + d), so

    |s^_k - s_k| <= sum_i gamma(d_i) |x_i| <= gamma(c) * sum_{i <= k} |x_i|,   gamma(c) = c u / (1 - c u) ~ c u,

with d_i the number of adds on leaf i's path (its depth) and c the tree's depth: the error is at most c units of
u times the prefix's sum of |x| (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., 4.2). An add
of a structural identity (padding) is exact and does not count. The interpreter's scan-order run (an f32 loop,
ops.scan_in_order) is one tree of depth k - 1 whose realised error is a random walk (under 1 unit on seed 3560's
case); a device's tree is another, and the oracle's slack (twice the runs' spread) must cover every tree of the
device's depth, not twice one realisation.

The device's tree (lowering/vector_scan.py, codegen_templates/snippets/scan.cpp.jinja, as emitted; counted by
simulating its steps, inexact adds only): whole rows are segments of L = 64 scanned by Brent-Kung (depth <= 10,
2 log2 L - 2), segment totals (the up-sweep's last row: depth log2 L = 6) scanned exclusively by log-steps
(depth ceil(log2 P), P = ceil(n / 8L) * 8 segments) or, at P = 64, two-level (an 8 x 8 Brent-Kung, depth 3, a
tree of 8 column totals, 3, one add), then one add of the segment's offset: depth max(10 + 1, 6 + ceil(log2 P)
+ 1) -- 10 for n <= 64, 11 up to 1,024, 12 up to 2,048, 13 at n = 2,238 (P = 40), 14 at P = 64 (n 3,585-4,096). Chunks of rows
longer than UB: segments of 128 (Brent-Kung depth 12), the segment totals through a Kahan-compensated walk
from the carry (an error of 2u of its sum of |x|, plus, for f16 rows, the totals' up-sweep depth 7: 10 with the
offset's add). Inputs in f16/bf16 are cast to f32 first and every add is in f32 (the interpreter's scans too:
ops._scan, `a.float()`; torch's CPU cumsum of f32 accumulates in double), so u is f32's 2^-24 whatever the
dtype; the result's one rounding to f16/bf16 is the output's own (the dtype's tolerance).

The oracle takes c = depth(n) = 2 ceil(log2 n), the depth of a Brent-Kung scan over the whole row (2 ceil(log2 n) -
1 steps) and one offset add: every blocked scan made of Brent-Kung segments of L and a log-step or tree scan of
their n / L totals is no deeper (segment leaves 2 log2 L - 1 + 1, earlier leaves log2 L + ceil(log2(n / L)) + 1,
both <= 2 ceil(log2 n)), so the bound follows the row length as the device's depth does, with no lowering
constant in it (24 at n = 2,238, where the emitted scan's depth is 13 and its realised error 3.0 units).

Products (`cumprod`): p^ = p prod_{every multiply of the tree} (1 + d), and any tree over a k-prefix has k - 1
multiplies (those by the identity padding are exact), so every order -- the loop's included -- has the same
bound, (k - 1) u |p| to first order, whatever its depth; the realised errors are not small beside it (rows of
4,096 factors in 1 +- 1e-3: the blocked order 118 units of u |p|, the loop 78, more than depth(n) = 24), and the
perturbed-input runs alone (each input moved by up to 8 u) left an element of the blocked order at 1.75 times
its slack (n = 512; the f32 tolerance, 1e-4 (1 + |p|), covered it there, but not after a cancellation). The
products are moved by (k - 1) u |p| (k: the factors in the prefix, k - 1 for an exclusive scan).
"""

from __future__ import annotations

import math

import torch

from .ops import OPS, scan_op

#: f32's unit roundoff: every scan adds in f32 (16-bit rows are cast first, on the device and in ops._scan).
UNIT = 2.0 ** -24


def depth(n: int) -> int:
    """The depth c the oracle allows a scan of n elements: 2 ceil(log2 n) (a whole-row Brent-Kung and one add)."""
    return 2 * math.ceil(math.log2(n)) if n > 1 else 0


def moved(info, scan: torch.Tensor, x: torch.Tensor, sign: int) -> torch.Tensor:
    """The f32 scan `scan` of rows `x` (the op `info`: ops.OpInfo, along the last axis, n elements a row) moved up
    (`sign` > 0) or down by the bound of any order: a running sum by depth(n) units of UNIT times each prefix's sum
    of |x| (the same scan over |x|), a running product by k - 1 units of UNIT times its |value| (k factors in the
    prefix). Where the step is not finite (an infinity in the prefix) the scan is left as it is."""
    if info.call == "cumsum":
        n = scan.shape[-1] if scan.dim() else 1
        step = depth(n) * UNIT * info.ref(x.abs()).to(torch.float64)
    else:
        factors = OPS[scan_op("cumsum", info.reverse, info.exclusive)].ref(torch.ones_like(x, dtype=torch.float32)).to(torch.float64)
        step = (factors - 1).clamp(min=0) * UNIT * scan.to(torch.float64).abs()
    out = scan.to(torch.float64) + (1.0 if sign > 0 else -1.0) * step
    return torch.where(torch.isfinite(step), out, scan.to(torch.float64)).to(torch.float32)
