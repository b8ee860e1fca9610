"""The hand-written AIC-driven causal flash attention (tests/sim/kernels/flash_ring.cpp) as the cost model sees it
(ESTIMATES, not measurements), beside the lowered kernel (examples/attention/causal_sdpa, bench_attention.py's row).

    python benchmarks/bench_flash_ring.py [--shape B,H,S,D] [--cores N] [--target T] [--lowered] [--api] [--time-limit SEC]

Runs the kernel in the emulator on random f16 inputs (every check on), checks the first and the last head against
float64 attention, and prints the estimate, ideal% = the cube roofline of the useful (causal half) MACs / the kernel
estimate (bench_attention.py's ideal), and the busiest AIV's and AIC's pipes. The AIC and AIV run as blocks of their
own (cross-core flags): the model times each as its own chain and times the flags from the emulator's log (per-pipe
cursors: a wait holds up issue, a set follows the work of its pipe; docs/cost_model.md "AIC-driven MIX kernels").
`--lowered` adds the lowered fused kernel at the same shape (session 35: the same ring, emitted:
lowering/emit/flash_ring.py); `--api` adds the lowered kernel in its Matmul-API form (PassContext.allow_flash_ring off;
slow: its AIV drive the Matmul API). `--counters-out` keeps the emulator's counters, `--counters-in` estimates from
them again without a run (the 4x32 run takes minutes).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SRC = ROOT / "tests/sim/kernels/flash_ring.cpp"


def reference_head(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """softmax(q k^T / sqrt(D) + causal mask) v of one head, float64."""
    s_len, d = q.shape
    s = q.astype(np.float64) @ k.astype(np.float64).T / np.sqrt(d)
    s = np.where(np.tril(np.ones((s_len, s_len), bool)), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v.astype(np.float64)


def run_ring(shape: tuple[int, int, int, int], cores: int, target: str, time_limit: int, counters_out: str | None = None,
             counters_in: str | None = None):
    """(estimate, ok, busiest AIV, busiest AIC) of flash_ring.cpp at `shape` on `cores` AI Cores. `counters_out`: also
    write the emulator's counters there (JSON); `counters_in`: estimate from such a file instead of running (ok: None)."""
    import json

    if counters_in:
        counters = json.loads(Path(counters_in).read_text())
        return _estimated(counters, target, None)
    from npu_harness.sim.compiler import compile_program, run_program

    b, h, s, d = shape
    binary = compile_program([SRC], defines={})
    with tempfile.TemporaryDirectory(prefix="flash_ring_") as tmp:
        t = Path(tmp)
        rng = np.random.default_rng(0)
        q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))
        for name, a in zip("qkv", (q, k, v), strict=True):
            a.tofile(t / f"{name}.bin")
        res = run_program(binary, [tmp, str(b), str(h), str(s), str(d), str(cores)], timeout=time_limit,
                          memory_limit_bytes=16 << 30)
        if res.returncode != 0 or res.errors or res.counters is None:
            print(res.stderr[-2000:])
            return None, False, None, None
        o = np.fromfile(t / "o.bin", dtype=np.float32).reshape(shape)
        ok = all(np.allclose(o[bi, hi], reference_head(q[bi, hi], k[bi, hi], v[bi, hi]), rtol=1e-2, atol=3e-3)
                 for bi, hi in {(0, 0), (b - 1, h - 1)})
    if counters_out:
        Path(counters_out).write_text(json.dumps(res.counters))
    return _estimated(res.counters, target, ok)


def _estimated(counters: dict, target: str, ok: bool | None):
    from npu_harness.cost import estimate

    est = estimate(counters, target)
    blocks = counters["blocks"]
    aiv = max((c for c in est.cores if blocks[c.block].get("core") != "aic"), key=lambda c: c.time_us)
    aic = max((c for c in est.cores if blocks[c.block].get("core") == "aic"), key=lambda c: c.time_us)
    return est, ok, aiv, aic


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="ascend910b1")
    ap.add_argument("--shape", default="1,8,4096,128", help="B,H,S,D")
    ap.add_argument("--cores", type=int, default=24, help="AI Cores launched (910B1: 24)")
    ap.add_argument("--lowered", action="store_true", help="also the lowered fused kernel (the ring) at the same shape")
    ap.add_argument("--api", action="store_true", help="also the lowered kernel in its Matmul-API form")
    ap.add_argument("--time-limit", type=int, default=3600, help="seconds an emulator run may take")
    ap.add_argument("--counters-out", help="also write the emulator's counters to this JSON file")
    ap.add_argument("--counters-in", help="estimate from counters written by --counters-out (no emulator run, no check)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_attention import ideal_cube_us

    b, h, s, d = (int(x) for x in args.shape.split(","))
    dims = {"B": b, "H": h, "S": s, "D": d}
    ideal = ideal_cube_us(dims, args.target)
    print(f"causal flash attention, f16, {args.target}: cost-model ESTIMATES (the ring's: cross-core flags "
          "timed, per-pipe cursors, docs/cost_model.md); "
          "ideal% = cube roofline of the useful MACs / kernel estimate")
    print(f"{'form':<9} {'B,H,S,D':<14} {'ok':<4} {'est us':>9} {'ideal us':>9} {'ideal%':>7} {'bottleneck':<10}  busiest chains (us)")
    est, ok, aiv, aic = run_ring((b, h, s, d), args.cores, args.target, args.time_limit, args.counters_out, args.counters_in)
    label = f"{b},{h},{s},{d}"
    if est is None:
        print(f"{'ring':<9} {label:<14} NO   the emulator run failed")
        return 1

    def pipes(c) -> str:
        return " ".join(f"{k} {v:.1f}" for k, v in c.pipes_us.items() if v >= 0.05)

    print(f"{'ring':<9} {label:<14} {'-' if ok is None else 'yes' if ok else 'NO':<4} {est.kernel_us:9.1f} {ideal:9.1f} {100 * ideal / est.kernel_us:6.1f}% "
          f"{est.bottleneck:<10}  AIV {aiv.time_us:.1f} ({pipes(aiv)}); AIC {aic.time_us:.1f} ({pipes(aic)})", flush=True)
    for form, ring in (("lowered", True), ("api", False)):
        if not (args.lowered if ring else args.api):
            continue
        import os

        from bench_attention import run

        import npu_harness.validate as validate

        os.environ["ASCEND_SIM_TIME_LIMIT"] = str(args.time_limit)
        validate.SIM_RUN_TIMEOUT_S = float(args.time_limit + 60)
        kind, res = run(dims, True, args.target, ring=ring)
        low = res.report
        if low is None:
            print(f"{form:<9} {label:<14} no   cannot run")
        else:
            print(f"{form:<9} {label:<14} {'yes' if res.ok else 'NO':<4} {low.kernel_us:9.1f} {ideal:9.1f} "
                  f"{100 * ideal / low.kernel_us:6.1f}% {low.bottleneck:<10}  ({kind}{', ring' if ring else ', Matmul API'})",
                  flush=True)
    return 0 if ok is not False else 1


if __name__ == "__main__":
    raise SystemExit(main())
