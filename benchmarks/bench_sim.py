"""Speed of the emulator tool chain.

    .venv/bin/python benchmarks/bench_sim.py [--reps 5] [--kernels relu,gelu,sigmoid]

Prints
  1. validation time per gallery kernel with warm caches (task cache + compiled-binary cache):
     in-process `gallery.validate` (lower + task + compile + run + compare) and the CLI wall time of
     `ascend-lower --validate sim` (includes Python start-up and the torch import), medians;
  2. emulator throughput (elements/s) of element-wise kernels: the emulator binary alone
     (process start to exit) and end to end (validate_sim: write inputs, run, read + compare).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def validation_times(names: list[str], reps: int) -> list[tuple[str, float, float]]:
    from npu_harness import gallery

    rows = []
    for name in names:
        ex = next(e for e in gallery.discover() if e.name == name)
        dts = ex.dtypes[0]
        gallery.validate(ex, dts, {})  # warm: task cache, binary cache
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            r = gallery.validate(ex, dts, {})
            ts.append(time.perf_counter() - t0)
            assert r.ok, r.detail
        cli = []
        for _ in range(max(2, reps // 2)):
            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                subprocess.run([str(ROOT / ".venv" / "bin" / "ascend-lower"), str(ex.adsl), "-o", tmp, "--validate", "sim"],
                               check=True, capture_output=True, cwd=ROOT)
                cli.append(time.perf_counter() - t0)
        rows.append((f"{ex.category}/{name}", statistics.median(ts), statistics.median(cli)))
    return rows


def throughput(name: str, batch: int, dim: int, reps: int) -> tuple[float, float, int]:
    """(binary-only elements/s, end-to-end validate_sim elements/s, elements)."""
    from ascend_dsl import load_file
    from lowering.context import PassContext
    from lowering.emit import build_view, emit
    from lowering.pipeline import run_pipeline
    from lowering.targets import get_target
    from npu_harness import gallery
    from npu_harness.binding import bind
    from npu_harness.sim.compiler import compile_program, run_program
    from npu_harness.sim.driver import target_defines
    from npu_harness.validate import combined_driver, load_task_for, validate_sim

    ex = next(e for e in gallery.discover() if e.name == name)
    kernel = load_file(ex.adsl)[0].instantiate(ex.dtypes[0])
    run = load_task_for(kernel, ex.task, overrides={"batch_size": batch, "dim": dim})
    ctx = PassContext(get_target("ascend910b1"), ex.adsl.name)
    lowered = run_pipeline(kernel, ctx)
    project = emit(lowered, ctx)
    b = bind(kernel, run.inputs, run.outputs, run.attrs)
    n = batch * dim
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        for f, text in project.files.items():
            (src / f).write_text(text)
        drv = src / f"{project.name}_sim_driver.cpp"
        drv.write_text(combined_driver(project, build_view(lowered, ctx)))
        binary = compile_program([drv], defines=target_defines(ctx.target), extra_include_dirs=[src])
        io = Path(tmp) / "io"
        io.mkdir()
        for p in kernel.inputs:
            (io / f"{p.name}.bin").write_bytes(b.tensors[p.name].tobytes())
        args = [str(io), str(ctx.target.aiv)] + [str(b.symbols[s]) for s in kernel.symbols]
        args += [repr(float(b.scalars[p.name])) for p in kernel.scalars]
        bin_t = []
        for _ in range(reps):
            t0 = time.perf_counter()
            res = run_program(binary, args)
            bin_t.append(time.perf_counter() - t0)
            assert res.returncode == 0, res.stderr
    e2e = []
    for _ in range(reps):
        t0 = time.perf_counter()
        r = validate_sim(kernel, lowered, project, ctx, run)
        e2e.append(time.perf_counter() - t0)
        assert r.ok
    return n / statistics.median(bin_t), n / statistics.median(e2e), n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--kernels", default="relu,gelu,sigmoid,softplus")
    ap.add_argument("--throughput-kernels", default="relu,gelu")
    args = ap.parse_args(argv)
    names = [k for k in args.kernels.split(",") if k]
    print("1. validation time, warm caches (median of", args.reps, "runs)")
    print(f"   {'kernel':<24} {'in-process s':>13} {'CLI wall s':>11}")
    rows = validation_times(names, args.reps)
    for name, t, cli in rows:
        print(f"   {name:<24} {t:13.3f} {cli:11.3f}")
    print(f"   median over kernels: in-process {statistics.median(r[1] for r in rows):.3f} s, "
          f"CLI {statistics.median(r[2] for r in rows):.3f} s (target <= 2 s)")
    print("2. emulator throughput, element-wise kernels, 910B1 (48 blocks)")
    print(f"   {'kernel':<10} {'elements':>10} {'binary Melem/s':>15} {'end-to-end Melem/s':>19}")
    for name in [k for k in args.throughput_kernels.split(",") if k]:
        for batch, dim in ((64, 65536), (256, 65536)):
            binr, e2er, n = throughput(name, batch, dim, max(3, args.reps // 2))
            print(f"   {name:<10} {n:>10} {binr / 1e6:15.1f} {e2er / 1e6:19.1f}")
    print("   (target >= 50 M elements/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
