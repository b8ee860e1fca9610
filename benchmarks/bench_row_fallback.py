"""A GEMM whose epilogue reduces whole rows (softmax over N), as the cost model sees it (ESTIMATES, not
measurements): examples/fuse/matmul_softmax.adsl (one split, `exp(acc - max(acc, axis=1))...`) in the form the
host picks at the shapes (ascend_dsl/row_fallback.py: the fused MIX kernel while a row of N fits its base block,
its two launches otherwise), beside the same ops as separate kernels (matmul; row softmax), as PyTorch runs them.

    python benchmarks/bench_row_fallback.py [--target ascend910b1] [--gemm M,K,N ...]

Every kernel is validated in the emulator against torch; ideal% = the ideal for the whole problem (max of the
least GM traffic, A and B in f16 and C in f32, and the useful cube MACs at the cube's peak) / the estimate.
Defaults: one shape whose rows fit (fused) and one whose rows do not (launches), scaled to what the emulator steps
in minutes on one core; `--gemm 4096,4096,4096` is the issue's size (the emulator then runs for hours: per core
a larger problem repeats the same tiles).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_launches import row, validate  # noqa: E402

MATMUL = '''@kernel(T=[f16])
def mm(a: Tensor[T, "M, K"], b: Tensor[T, "K, N"], c: Tensor[f32, "M, N"]):
    for blk in split(M, N, cores=AIC):
        with cube:
            acc = matmul(a[blk], b[blk])
        with vector:
            store(c[blk], acc)
'''
SOFTMAX = '''@kernel
def sm(h: Tensor[f32, "M, N"], y: Tensor[f32, "M, N"]):
    for blk in split(M, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            v = load(h[r, :])
            e = exp(v - max(v, axis=1))
            store(y[r, :], e / sum(e, axis=1))
'''


def form_at(m: int, k: int, n: int, target: str) -> str:
    """The form the host runs at these shapes (fused or fallback)."""
    from ascend_dsl import load_file
    from lowering import lower
    from npu_harness.row_fallback import form_blocks

    kernel = load_file(ROOT / "examples/fuse/matmul_softmax.adsl")[0].instantiate()
    project, ctx = lower(kernel, target)
    return form_blocks(kernel, project, ctx, {"M": m, "K": k, "N": n}, {})[0]


def gemm_softmax(m: int, k: int, n: int, target: str) -> None:
    from npu_harness.cost import load_params, target_for

    g = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=g).half()
    b = (torch.randn(k, n, generator=g) * 0.05).half()
    h = a.float() @ b.float()
    ref = torch.softmax(h, dim=-1)
    p = load_params(target_for(target))
    least = a.numel() * 2 + b.numel() * 2 + ref.numel() * 4
    ideal = max(least / (p.hbm_gbps * 1e3), m * n * k / (p.cube_macs_per_cycle * p.clock_ghz * 1e3 * p.aic))
    form = form_at(m, k, n, target)
    print(f"matmul {m}x{k}x{n} (f16) + softmax over {n}, {target}: the host picks the {form} form "
          f"(ideal {ideal:.1f} us)")
    one = validate(ROOT / "examples/fuse/matmul_softmax.adsl", [], [], target, {"M": m, "K": k, "N": n})
    print(row(f"one .adsl ({form})", [one], ideal))
    sep = [validate(MATMUL, [a, b], [h], target), validate(SOFTMAX, [h], [ref], target)]
    print(row("separate kernels (matmul; softmax)", sep, ideal))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="ascend910b1")
    ap.add_argument("--gemm", nargs="+", default=["512,256,512", "512,256,2048"], help="M,K,N (several)")
    args = ap.parse_args(argv)
    print("ESTIMATES from the cost model (emulator counters), not measurements; every kernel validated in the emulator")
    for shape in args.gemm:
        gemm_softmax(*map(int, shape.split(",")), args.target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
