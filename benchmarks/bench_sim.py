"""Speed of the emulator tool chain.

    python benchmarks/bench_sim.py [--reps 5] [--kernels relu,gelu,...] [--throughput-kernels all|relu,gelu]
                                   [--matmul 1024,2048,4096] [--skip SECTION,...]

Prints
  1. validation time per gallery kernel with warm caches (task cache + compiled-binary cache), median
     of --reps runs: in-process `gallery.validate` (lower + task + compile + run + compare) and the
     CLI end to end, `python -m npu_harness.cli FILE.adsl --validate sim` as a subprocess (Python
     start-up included; wall time and the CPU time of the process tree);
  2. cold validation: the same in-process validation with an empty binary cache (the kernel is
     compiled; the emulator runtime, built once per flag set, is prebuilt first and its build time is
     printed separately; the task cache stays warm, it is not the emulator's);
  3. emulator throughput (elements/s) of the element-wise gallery kernels at 64 x 65536 on the 910B1
     target (48 blocks): the emulator binary alone (process start to exit, run repeatedly on one I/O
     directory) by wall time and by CPU time (user + sys), the same by wall and CPU time with output files
     that do not exist yet (as in a validation; the I/O directory is where a validation puts it, sim/iodir.py), the launch alone (the `launch_us` of the counters line: blocks
     only, no process start-up or output set-up; the inputs are mapped lazily, so their page faults fall
     in it), and end to end through validate_sim (write inputs, run, read + compare) by wall and CPU time;
  4. the cube: matmul_square (f16) validated at n x n x n, the launch's GFLOP/s (2 n^3 / launch wall
     time) and the whole validation's wall time.

On a shared machine wall times include waiting for a CPU; the CPU-time figures do not (the load
average is printed with the results).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_KERNELS = "relu,gelu,sigmoid,softplus,tanh,layer_norm,softmax,sum_dim"
COLD_KERNELS = "relu,gelu,add_row"
THROUGHPUT_SHAPE = (64, 65536)


def _timed(cmd: list[str], **kw) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall s, CPU s of the process tree, result)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(cmd, check=False, **kw)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime), res


def _cpu() -> float:
    """CPU seconds of this process and its finished children."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))


def _example(name: str):
    from npu_harness import gallery

    return next(e for e in gallery.discover() if e.name == name)


def validation_times(names: list[str], reps: int) -> list[tuple[str, float, float, float]]:
    from npu_harness import gallery

    rows = []
    for name in names:
        ex = _example(name)
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


def cold_validation(names: list[str]) -> tuple[float, list[tuple[str, float, float]]]:
    """(runtime build s, [(kernel, wall s, CPU s)]) with an empty binary cache and a warm task cache."""
    from lowering.targets import get_target
    from npu_harness import gallery
    from npu_harness.sim import compiler
    from npu_harness.sim.driver import target_defines

    real = compiler.cache_root().parent
    for name in names:  # warm the task cache
        ex = _example(name)
        gallery.validate(ex, ex.dtypes[0], {})
    with tempfile.TemporaryDirectory(prefix="bench-sim-cache-") as tmp:
        os.symlink(real / "tasks", Path(tmp) / "tasks")
        old = os.environ.get("ASCEND_DSL_CACHE")
        os.environ["ASCEND_DSL_CACHE"] = tmp
        try:
            flags = [*compiler.BASE_FLAGS, *compiler._define_flags(target_defines(get_target("ascend910b1")))]
            t0 = time.perf_counter()
            compiler.prebuilt_runtime(flags)
            rt = time.perf_counter() - t0
            rows = []
            for name in names:
                ex = _example(name)
                t0, c0 = time.perf_counter(), _cpu()
                r = gallery.validate(ex, ex.dtypes[0], {})
                rows.append((f"{ex.category}/{name}", time.perf_counter() - t0, _cpu() - c0))
                assert r.ok, r.detail
        finally:
            if old is None:
                os.environ.pop("ASCEND_DSL_CACHE", None)
            else:
                os.environ["ASCEND_DSL_CACHE"] = old
            shutil.rmtree(Path(tmp) / "sim", ignore_errors=True)
    return rt, rows


def throughput(name: str, batch: int, dim: int, reps: int) -> tuple[float, float, float, float, float, float, float, int]:
    """(binary elements/s by wall time, by CPU time, launch-only elements/s, end-to-end validate_sim elements/s,
    binary elements/s by wall time and by CPU time when its output files do not exist yet, end-to-end elements/s by CPU
    time (this process and its children), elements). The binary runs
    repeatedly on one I/O directory, so from the second run on its output files exist (as when `ascend-sim
    run` is repeated); a validation writes them new."""
    import json

    from ascend_dsl import load_file
    from lowering.context import PassContext
    from lowering.pipeline import run_pipeline
    from lowering.targets import get_target
    from npu_harness.binding import bind
    from npu_harness.sim.compiler import compile_program
    from npu_harness.sim.driver import target_defines
    from npu_harness.sim.iodir import scratch_dir, write_array
    from npu_harness.validate import combined_driver, load_task_for, validate_sim

    ex = _example(name)
    kernel = load_file(ex.adsl)[0].instantiate(ex.dtypes[0])
    run = load_task_for(kernel, ex.task, overrides={"batch_size": batch, "dim": dim})
    ctx = PassContext(get_target("ascend910b1"), ex.adsl.name)
    lowered = run_pipeline(kernel, ctx)
    project = ctx.project
    b = bind(kernel, run)
    n = batch * dim
    with tempfile.TemporaryDirectory() as tmp, scratch_dir(4 * n * 4) as io_dir:
        src = Path(tmp) / "src"
        src.mkdir()
        for f, text in project.files.items():
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            (src / f).write_text(text)
        drv = src / f"{project.name}_sim_driver.cpp"
        drv.write_text(combined_driver(project))
        binary = compile_program([drv], defines=target_defines(ctx.target), extra_include_dirs=[src])
        io = Path(io_dir)
        for p in kernel.inputs:
            write_array(io / f"{p.name}.bin", b.tensors[p.name].data)
        args = [str(io), str(ctx.target.aiv)] + [str(b.symbols[s]) for s in kernel.symbols]
        args += [repr(float(b.scalars[p.name])) for p in kernel.scalars]
        walls, cpus, launches, fresh, fresh_cpu = [], [], [], [], []
        for _ in range(reps):
            wall, cpu, res = _timed([str(binary), *args], capture_output=True, text=True)
            assert res.returncode == 0, res.stderr[-2000:]
            line = next(ln for ln in res.stderr.splitlines() if ln.startswith("sim-counters: "))
            launches.append(json.loads(line[len("sim-counters: "):])["launch_us"] / 1e6)
            walls.append(wall)
            cpus.append(cpu)
        for _ in range(reps):  # as in a validation: the output files do not exist yet
            for p in kernel.outputs:
                (io / f"{p.name}.bin").unlink(missing_ok=True)
            wall, cpu, res = _timed([str(binary), *args], capture_output=True, text=True)
            assert res.returncode == 0, res.stderr[-2000:]
            fresh.append(wall)
            fresh_cpu.append(cpu)
    e2e, e2e_cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), _cpu()
        r = validate_sim(kernel, lowered, project, ctx, run)
        e2e.append(time.perf_counter() - t0)
        e2e_cpu.append(_cpu() - c0)
        assert r.ok
    med = statistics.median
    return (n / med(walls), n / med(cpus), n / med(launches), n / med(e2e), n / med(fresh), n / med(fresh_cpu), n / med(e2e_cpu),
            n)


def matmul_speed(n: int) -> tuple[float, float, float, bool]:
    """matmul_square (first dtype) at n x n x n: (validation wall s, launch wall s, launch CPU s, ok)."""
    from npu_harness import gallery

    ex = _example("matmul_square")
    t0 = time.perf_counter()
    r = gallery.validate(ex, ex.dtypes[0], {"M": n, "N": n, "K": n})
    total = time.perf_counter() - t0
    c = r.counters or {}
    return total, c.get("launch_us", 0) / 1e6, c.get("launch_cpu_us", 0) / 1e6, r.ok


def elementwise_kernels() -> list[str]:
    from npu_harness import gallery

    def sized(task) -> bool:  # the task's shape is the module constants batch_size and dim (overridden here)
        text = task.read_text()
        return all(re.search(rf"^{c}\s*=", text, re.M) for c in ("batch_size", "dim"))

    return [e.name for e in gallery.discover() if e.category == "activation" and not e.is_rows and sized(e.task)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--kernels", default=DEFAULT_KERNELS, help="validation-time kernels (comma-separated)")
    ap.add_argument("--cold-kernels", default=COLD_KERNELS, help="cold-validation kernels (comma-separated)")
    ap.add_argument("--throughput-kernels", default="all", help="'all' (every element-wise gallery kernel) or a list")
    ap.add_argument("--matmul", default="1024,2048,4096", help="matmul sizes n (n x n x n)")
    ap.add_argument("--skip", default="", help="sections to skip: warm,cold,throughput,matmul")
    args = ap.parse_args(argv)
    skip = set(args.skip.split(","))
    print(f"load average at start: {', '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    if "warm" not in skip:
        names = [k for k in args.kernels.split(",") if k]
        print(f"1. validation time, warm caches (median of {args.reps} runs; task default shapes)")
        print(f"   {'kernel':<30} {'in-process s':>13} {'CLI wall s':>11} {'CLI CPU s':>10}")
        rows = validation_times(names, args.reps)
        for name, t, wall, cpu in rows:
            print(f"   {name:<30} {t:13.3f} {wall:11.3f} {cpu:10.3f}")
        print(f"   median over kernels: in-process {statistics.median(r[1] for r in rows):.3f} s, "
              f"CLI wall {statistics.median(r[2] for r in rows):.3f} s, CLI CPU {statistics.median(r[3] for r in rows):.3f} s "
              "(target <= 2 s)")
    if "cold" not in skip:
        rt, rows = cold_validation([k for k in args.cold_kernels.split(",") if k])
        print(f"2. cold validation (empty binary cache; lower + compile + run + compare; task cache warm); the emulator "
              f"runtime for this flag set was prebuilt first in {rt:.1f} s (once per flag set and header version)")
        print(f"   {'kernel':<30} {'wall s':>8} {'CPU s':>7}")
        for name, wall, cpu in rows:
            print(f"   {name:<30} {wall:8.2f} {cpu:7.2f}")
        print(f"   median: {statistics.median(r[1] for r in rows):.2f} s wall, {statistics.median(r[2] for r in rows):.2f} s "
              "CPU (target <= 1.5 s)")
    if "throughput" not in skip:
        tk = elementwise_kernels() if args.throughput_kernels == "all" else [k for k in args.throughput_kernels.split(",") if k]
        batch, dim = THROUGHPUT_SHAPE
        print(f"3. emulator throughput, element-wise kernels at {batch} x {dim} (f32), 910B1 (48 blocks), median of "
              f"{max(3, args.reps)} runs")
        print(f"   {'kernel':<12} {'elements':>9} {'binary Melem/s (wall)':>22} {'(CPU)':>7} {'(new outputs)':>14} "
              f"{'(new, CPU)':>11} {'launch Melem/s':>15} {'end-to-end Melem/s':>19} {'(CPU)':>7}")
        rates = {}
        for name in tk:
            wall_r, cpu_r, launch_r, e2e_r, fresh_r, fresh_cpu_r, e2e_cpu_r, n = throughput(name, batch, dim, max(3, args.reps))
            rates[name] = (wall_r, cpu_r, launch_r, fresh_r, fresh_cpu_r)
            print(f"   {name:<12} {n:>9} {wall_r / 1e6:22.1f} {cpu_r / 1e6:7.1f} {fresh_r / 1e6:14.1f} {fresh_cpu_r / 1e6:11.1f} "
                  f"{launch_r / 1e6:15.1f} {e2e_r / 1e6:19.1f} {e2e_cpu_r / 1e6:7.1f}")
        if "relu" in rates:
            w, c, lch, fr, fc = rates["relu"]
            print(f"   relu: {w / 1e6:.0f} M elements/s (binary, wall), {c / 1e6:.0f} (binary, CPU), {fr / 1e6:.0f} (binary, wall, "
                  f"new output files), {fc / 1e6:.0f} (binary, CPU, new output files: a validation's case), {lch / 1e6:.0f} "
                  "(launch, wall) (target >= 300 M elements/s)")
    if "matmul" not in skip:
        print("4. cube: matmul_square (f16 inputs, f32 out) validated at n x n x n (uncapped)")
        print(f"   {'n':>6} {'validation s':>13} {'launch s':>9} {'launch CPU s':>13} {'GFLOP/s (launch wall)':>22} "
              f"{'GFLOP/s per CPU s':>18}")
        for n in (int(x) for x in args.matmul.split(",") if x):
            total, lw, lc, ok = matmul_speed(n)
            flops = 2.0 * n ** 3
            print(f"   {n:>6} {total:13.1f} {lw:9.2f} {lc:13.2f} {flops / max(lw, 1e-9) / 1e9:22.1f} "
                  f"{flops / max(lc, 1e-9) / 1e9:18.1f}{'' if ok else '  FAILED'}")
        print("   (target: >= 20 GFLOP/s; 4096^3 validates well under a minute)")
    print(f"load average at end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
