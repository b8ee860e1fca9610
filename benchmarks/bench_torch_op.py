"""Latency of a torch-callable kernel on CPU tensors (the emulator path of npu_harness/torch_op.py).

    python benchmarks/bench_torch_op.py [--kernel activation/leaky_relu.adsl] [--numel 1000000] [--calls 20]
    python benchmarks/bench_torch_op.py --launches [--m 64 --k 128 --n 4096] [--calls 20]

Prints, each in a fresh Python process:
  1. cold: empty compile cache ($ASCEND_DSL_CACHE in a temporary directory): the first call lowers the
     kernel, compiles the emulator kernel library (g++) and runs it; then the median of --calls calls;
  2. warm: the same cache, a new process: the first call finds the library on disk (lower + cache lookup
     + dlopen + run); then the median of --calls calls;
  and, for scale, the same tensor through eager PyTorch (the task's operation is not known here, so a
  torch.nn.functional.leaky_relu for the default kernel). Wall times; the machine load is printed.

`--launches`: a kernel of two launches instead (examples/fuse/gemm_softmax_long.adsl: a MIX GEMM into a
workspace, then the vector row softmax; npu_harness/device/launches.py) on x [M, K] f16, w [N, K] f16, b [N]
f32, against eager softmax(linear(x, w, b)) in f32.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, statistics, sys, time
from pathlib import Path
import torch
from ascend_dsl import load_file
from ascend_dsl.api import KernelFunction
t0 = time.perf_counter()
import npu_harness.torch_op  # noqa: F401  (the runner; imported at the first call otherwise)
imports = time.perf_counter() - t0
k = KernelFunction(load_file(Path(sys.argv[1]))[0])
shape = json.loads(sys.argv[2])
if isinstance(shape, int):
    args = (torch.randn(shape),)
    ref = lambda: torch.nn.functional.leaky_relu(args[0], 0.01)
else:  # [M, K, N]: gemm_softmax_long
    m, kk, n = shape
    args = (torch.randn(m, kk).half(), torch.randn(n, kk).half(), torch.randn(n))
    ref = lambda: torch.softmax(torch.nn.functional.linear(args[0].float(), args[1].float(), args[2]), dim=1)
t0 = time.perf_counter(); y = k(*args); first = time.perf_counter() - t0
assert torch.allclose(y, ref(), rtol=1e-3, atol=1e-5), "the kernel's result differs from eager PyTorch"
times = []
for _ in range(int(sys.argv[3])):
    t0 = time.perf_counter(); k(*args); times.append(time.perf_counter() - t0)
eager = []
for _ in range(int(sys.argv[3])):
    t0 = time.perf_counter(); ref(); eager.append(time.perf_counter() - t0)
print(json.dumps({"imports": imports, "first": first, "median": statistics.median(times),
                  "eager": statistics.median(eager)}))
"""


def _child(kernel: Path, shape, calls: int, cache: str) -> dict:
    env = {**os.environ, "ASCEND_DSL_CACHE": cache}
    out = subprocess.run([sys.executable, "-c", CHILD, str(kernel), json.dumps(shape), str(calls)], capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=900, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", default="activation/leaky_relu.adsl")
    ap.add_argument("--numel", type=int, default=1_000_000)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--launches", action="store_true", help="gemm_softmax_long (two launches) at --m, --k, --n")
    ap.add_argument("--m", type=int, default=64)
    ap.add_argument("--k", type=int, default=128)
    ap.add_argument("--n", type=int, default=4096)
    args = ap.parse_args()
    if args.launches:
        args.kernel = "fuse/gemm_softmax_long.adsl"
    kernel = ROOT / "examples" / args.kernel
    shape = [args.m, args.k, args.n] if args.launches else args.numel
    with tempfile.TemporaryDirectory(prefix="bench-torch-op-") as cache:
        cold = _child(kernel, shape, args.calls, cache)
        warm = _child(kernel, shape, args.calls, cache)
    what = f"M={args.m}, K={args.k}, N={args.n} (two launches)" if args.launches else f"a CPU tensor of {args.numel} float32"
    print(f"{args.kernel} on {what} (load average {os.getloadavg()[0]:.1f})")
    print(f"  import npu_harness.torch_op (torch, lowering):  {cold['imports']:.2f} s")
    print(f"  cold first call (lower + g++ + run):            {cold['first']:.2f} s")
    print(f"  warm-disk first call (new process, no compile): {warm['first'] * 1000:.0f} ms")
    print(f"  cached call, median of {args.calls}:                {cold['median'] * 1000:.1f} ms "
          f"(new process: {warm['median'] * 1000:.1f} ms)")
    eager = "softmax(linear(x, w, b))" if args.launches else "torch.nn.functional.leaky_relu"
    print(f"  eager {eager}, median: {cold['eager'] * 1000:.2f} ms (for scale)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
