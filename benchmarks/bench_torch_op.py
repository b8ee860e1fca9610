"""Latency of a torch-callable kernel on CPU tensors (the emulator path of npu_harness/torch_op.py).

    python benchmarks/bench_torch_op.py [--kernel activation/leaky_relu.adsl] [--numel 1000000] [--calls 20]

Prints, each in a fresh Python process:
  1. cold: empty compile cache ($ASCEND_DSL_CACHE in a temporary directory): the first call lowers the
     kernel, compiles the emulator kernel library (g++) and runs it; then the median of --calls calls;
  2. warm: the same cache, a new process: the first call finds the library on disk (lower + cache lookup
     + dlopen + run); then the median of --calls calls;
  and, for scale, the same tensor through eager PyTorch (the task's operation is not known here, so a
  torch.nn.functional.leaky_relu for the default kernel). Wall times; the machine load is printed.
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
x = torch.randn(int(sys.argv[2]))
t0 = time.perf_counter(); k(x); first = time.perf_counter() - t0
times = []
for _ in range(int(sys.argv[3])):
    t0 = time.perf_counter(); k(x); times.append(time.perf_counter() - t0)
eager = []
for _ in range(int(sys.argv[3])):
    t0 = time.perf_counter(); torch.nn.functional.leaky_relu(x, 0.01); eager.append(time.perf_counter() - t0)
print(json.dumps({"imports": imports, "first": first, "median": statistics.median(times),
                  "eager": statistics.median(eager)}))
"""


def _child(kernel: Path, numel: int, calls: int, cache: str) -> dict:
    env = {**os.environ, "ASCEND_DSL_CACHE": cache}
    out = subprocess.run([sys.executable, "-c", CHILD, str(kernel), str(numel), str(calls)], capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=900, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", default="activation/leaky_relu.adsl")
    ap.add_argument("--numel", type=int, default=1_000_000)
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args()
    kernel = ROOT / "examples" / args.kernel
    with tempfile.TemporaryDirectory(prefix="bench-torch-op-") as cache:
        cold = _child(kernel, args.numel, args.calls, cache)
        warm = _child(kernel, args.numel, args.calls, cache)
    print(f"{args.kernel} on a CPU tensor of {args.numel} float32 (load average {os.getloadavg()[0]:.1f})")
    print(f"  import npu_harness.torch_op (torch, lowering):  {cold['imports']:.2f} s")
    print(f"  cold first call (lower + g++ + run):            {cold['first']:.2f} s")
    print(f"  warm-disk first call (new process, no compile): {warm['first'] * 1000:.0f} ms")
    print(f"  cached call, median of {args.calls}:                {cold['median'] * 1000:.1f} ms "
          f"(new process: {warm['median'] * 1000:.1f} ms)")
    print(f"  eager torch.nn.functional.leaky_relu, median:   {cold['eager'] * 1000:.2f} ms (for scale)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
