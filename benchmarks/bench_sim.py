"""Speed of the emulator tool chain.

    python benchmarks/bench_sim.py [--reps 5] [--kernels relu,gelu,...] [--throughput-kernels all|relu,gelu]

Prints
  1. validation time per gallery kernel with warm caches (task cache + compiled-binary cache), median
     of --reps runs: in-process `gallery.validate` (lower + task + compile + run + compare) and the
     CLI end to end, `python -m npu_harness.cli FILE.adsl --validate sim` as a subprocess (Python
     start-up included; wall time and the CPU time of the process tree);
  2. emulator throughput (elements/s) of the element-wise gallery kernels at 64 x 65536 on the 910B1
     target (48 blocks): the emulator binary alone (process start to exit), by wall time and by CPU
     time (user + sys), and end to end through validate_sim (write inputs, run, read + compare).

On a shared machine wall times include waiting for a CPU; the CPU-time figures do not (the load
average is printed with the results).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_KERNELS = "relu,gelu,sigmoid,softplus,tanh,layer_norm,softmax,sum_dim"
THROUGHPUT_SHAPE = (64, 65536)


def _timed(cmd: list[str], **kw) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall s, CPU s of the process tree, result)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(cmd, check=False, **kw)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime), res


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))


def validation_times(names: list[str], reps: int) -> list[tuple[str, float, float, float]]:
    from npu_harness import gallery

    rows = []
    examples = {e.name: e for e in gallery.discover()}
    for name in names:
        ex = examples[name]
        dts = ex.dtypes[0]
        gallery.validate(ex, dts, {})  # warm: task cache, binary cache
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            r = gallery.validate(ex, dts, {})
            ts.append(time.perf_counter() - t0)
            assert r.ok, r.detail
        walls, cpus = [], []
        for _ in range(reps):
            with tempfile.TemporaryDirectory() as tmp:
                wall, cpu, res = _timed([sys.executable, "-m", "npu_harness.cli", str(ex.adsl), "-o", tmp,
                                         "--validate", "sim"], capture_output=True, text=True, cwd=ROOT, env=_env())
                assert res.returncode == 0 and "PASS" in res.stdout, res.stdout + res.stderr
                walls.append(wall)
                cpus.append(cpu)
        rows.append((f"{ex.category}/{name}", statistics.median(ts), statistics.median(walls), statistics.median(cpus)))
    return rows


def throughput(name: str, batch: int, dim: int, reps: int) -> tuple[float, float, float, int]:
    """(binary-only elements/s by wall time, by CPU time, end-to-end validate_sim elements/s, elements)."""
    from ascend_dsl import load_file
    from lowering.context import PassContext
    from lowering.emit import build_view, emit
    from lowering.pipeline import run_pipeline
    from lowering.targets import get_target
    from npu_harness import gallery
    from npu_harness.binding import bind
    from npu_harness.sim.compiler import compile_program
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
            (src / f).parent.mkdir(parents=True, exist_ok=True)
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
        walls, cpus = [], []
        for _ in range(reps):
            wall, cpu, res = _timed([str(binary), *args], capture_output=True)
            assert res.returncode == 0, res.stderr[-2000:]
            walls.append(wall)
            cpus.append(cpu)
    e2e = []
    for _ in range(reps):
        t0 = time.perf_counter()
        r = validate_sim(kernel, lowered, project, ctx, run)
        e2e.append(time.perf_counter() - t0)
        assert r.ok
    return n / statistics.median(walls), n / statistics.median(cpus), n / statistics.median(e2e), n


def elementwise_kernels() -> list[str]:
    from npu_harness import gallery

    return [e.name for e in gallery.discover() if e.category == "activation" and not e.is_rows]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--kernels", default=DEFAULT_KERNELS, help="validation-time kernels (comma-separated)")
    ap.add_argument("--throughput-kernels", default="all", help="'all' (every element-wise gallery kernel) or a list")
    args = ap.parse_args(argv)
    names = [k for k in args.kernels.split(",") if k]
    print(f"load average at start: {', '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    print(f"1. validation time, warm caches (median of {args.reps} runs; task default shapes)")
    print(f"   {'kernel':<30} {'in-process s':>13} {'CLI wall s':>11} {'CLI CPU s':>10}")
    rows = validation_times(names, args.reps)
    for name, t, wall, cpu in rows:
        print(f"   {name:<30} {t:13.3f} {wall:11.3f} {cpu:10.3f}")
    print(f"   median over kernels: in-process {statistics.median(r[1] for r in rows):.3f} s, "
          f"CLI wall {statistics.median(r[2] for r in rows):.3f} s, CLI CPU {statistics.median(r[3] for r in rows):.3f} s "
          "(target <= 2 s)")
    tk = elementwise_kernels() if args.throughput_kernels == "all" else [k for k in args.throughput_kernels.split(",") if k]
    batch, dim = THROUGHPUT_SHAPE
    print(f"2. emulator throughput, element-wise kernels at {batch} x {dim} (f32), 910B1 (48 blocks), median of "
          f"{max(3, args.reps)} runs")
    print(f"   {'kernel':<12} {'elements':>9} {'binary Melem/s (wall)':>22} {'(CPU)':>7} {'end-to-end Melem/s':>19}")
    cpu_rates = []
    for name in tk:
        wall_r, cpu_r, e2e_r, n = throughput(name, batch, dim, max(3, args.reps))
        cpu_rates.append(cpu_r)
        print(f"   {name:<12} {n:>9} {wall_r / 1e6:22.1f} {cpu_r / 1e6:7.1f} {e2e_r / 1e6:19.1f}")
    print(f"   slowest by CPU time: {min(cpu_rates) / 1e6:.1f} M elements/s (target >= 50 M elements/s)")
    print(f"load average at end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
