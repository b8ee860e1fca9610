"""Validation levels: `interp` (the DSL interpreter) and `sim` (emitted AscendC in the emulator),
both against the PyTorch reference of a task file."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ascend_dsl import ir, views
from ascend_dsl.diagnostics import DslError
from lowering import EmittedProject, PassContext
from lowering.passes.check_windows import check_pool_binding

from .arrays import STORAGE, TORCH_NAME, HostArray
from .binding import Binding, bind
from .compare import TOLERANCE, Comparison, compare, cube_tolerance
from .problem_macs import problem_macs
from .problem_vector import problem_vector_cycles
from .sim.driver import driver_source, target_defines
from .sim.iodir import scratch_dir, write_array
from .sim.runner import sim_defines
from .subprocess_limits import describe_exit, describe_limit, is_out_of_memory, memory_limit
from .task import TASK_TIMEOUT_S, TaskCases, TaskRun, run_task_cases
from .wide_reference import reconsider

SIM_RUN_TIMEOUT_S = 300.0


@dataclass
class ValidationResult:
    level: str
    ok: bool
    comparisons: list[Comparison] = field(default_factory=list)
    sim_errors: list = field(default_factory=list)
    shapes: dict[str, int] = field(default_factory=dict)
    detail: str = ""
    seconds: float = 0.0
    #: sim only: per-block emulator counters (RunResult.counters), the cost-model estimate
    #: (npu_harness.cost.Estimate, an ESTIMATE) and its total time in microseconds
    counters: dict | None = None
    report: object | None = None
    estimate_us: float | None = None
    #: the scalars' values and where each came from ("kernel default" when the task bound nothing)
    scalars: str | None = None
    defaults: list = field(default_factory=list)
    #: why a PASS proves little: a degenerate reference output, a select whose inputs never take one side
    weak: list[str] = field(default_factory=list)

    @property
    def weaknesses(self) -> list[str]:
        return [f"{c.name}: {c.weak}" for c in self.comparisons if c.weak] + self.weak

    def summary(self) -> str:
        shapes = ", ".join(f"{k}={v}" for k, v in self.shapes.items())
        weak = f" (weak: {'; '.join(self.weaknesses)})" if self.ok and self.weaknesses else ""
        return f"{self.level}: {'PASS' if self.ok else 'FAIL'}{weak} ({shapes}; {self.seconds:.2f} s)"


def kernel_spec(variants: list[ir.Kernel]) -> dict:
    """What the task worker needs of a kernel: its input names and each dtype variant's input dtypes (torch
    names). The variants of one source share their input names."""
    return {"inputs": [p.name for p in variants[0].inputs],
            "variants": [[TORCH_NAME[p.dtype.value] for p in k.inputs] for k in variants]}


def load_cases_for(variants: list[ir.Kernel], task: Path, *, seed: int = 0, overrides=None, cap=None,
                   meta: bool = False, timeout: float = TASK_TIMEOUT_S) -> TaskCases:
    """Every case of the task, each with the variant matching its data picked and its tensors rounded to
    that variant's input dtypes."""
    return run_task_cases(task, seed=seed, overrides=overrides, cap=cap, kernel=kernel_spec(variants), meta=meta,
                          timeout=timeout)


def load_task_for(kernel: ir.Kernel, task: Path, *, seed: int = 0, overrides=None, cap=None,
                  timeout: float = TASK_TIMEOUT_S) -> TaskRun:
    """The task's (first) case with its tensors rounded to this kernel's input dtypes."""
    return load_cases_for([kernel], task, seed=seed, overrides=overrides, cap=cap, timeout=timeout).cases[0]


def validate_interp(kernel: ir.Kernel, run: TaskRun) -> ValidationResult:
    """The DSL interpreter (torch, in this process) against the reference."""
    import torch

    from ascend_dsl import interpreter

    start = time.perf_counter()
    b = bind(kernel, run)
    check_pool_binding(kernel, b.scalars, b.symbols)
    tensors = {p.name: b.tensors[p.name].to_torch() for p in kernel.inputs}
    tensors.update({p.name: torch.full(b.tensors[p.name].shape, float("nan") if p.dtype.is_float
                                       else torch.iinfo(p.dtype.torch).min, dtype=p.dtype.torch)  # never-written marker
                    for p in kernel.outputs})
    coverage: dict = {}
    interpreter.run(kernel, tensors, b.scalars, coverage=coverage)
    comps = [compare(p.name, tensors[p.name], b.tensors[p.name], p.dtype.value, tol=cube_tolerance(kernel, p.dtype.value))
             for p in kernel.outputs]
    comps = reconsider(kernel, run, comps, tensors, b.tensors)
    return ValidationResult("interp", all(c.ok for c in comps), comps, shapes=b.symbols, scalars=b.scalar_line(),
                            defaults=b.defaults, seconds=time.perf_counter() - start, weak=_one_sided(coverage))


def _one_sided(coverage: dict) -> list[str]:
    """The selects whose mask was all true or all false on the task's inputs."""
    out = []
    for span, (took_a, took_b) in sorted(coverage.items(), key=lambda kv: (kv[0].line, kv[0].col)):
        if not (took_a and took_b):
            side = "second" if took_b else "first"
            out.append(f"the select at {span.file.rsplit('/', 1)[-1]}:{span.line} always takes its {side} operand")
    return out


#: select_coverage runs the interpreter over the task's tensors only up to this size (benchmark-scale tasks are
#: validated without torch in this process).
COVERAGE_MAX_BYTES = 256 << 20


def select_coverage(kernel: ir.Kernel, b: Binding) -> list[str]:
    """Weak checks of `validate_sim`: selects the task's inputs drive one way only (the interpreter's
    record; only kernels with a tile select and tensors up to COVERAGE_MAX_BYTES pay for the run)."""
    selects = [e for s in ir.walk(kernel.body) if isinstance(getattr(s, "value", None), (ir.Op, ir.Load))
               for e in ir.walk_expr(s.value) if isinstance(e, ir.Op) and e.op == "select"
               and e.type.kind is ir.Kind.TILE]
    nbytes = sum(b.tensors[p.name].data.nbytes for p in kernel.bound_tensors)
    if not selects or ir.cube_loop(kernel) is not None or nbytes > COVERAGE_MAX_BYTES:
        return []
    import torch  # only here: a sim validation without a select never imports torch

    from ascend_dsl import interpreter

    tensors = {p.name: b.tensors[p.name].to_torch() for p in kernel.inputs}
    tensors.update({p.name: torch.zeros(b.tensors[p.name].shape, dtype=p.dtype.torch) for p in kernel.outputs})
    coverage: dict = {}
    # One intra-op thread: the interpreter's ops run on tiles of a few thousand elements, where torch's pool
    # only spins (validate_sim of elu at 64 x 65536, 2 loaded CPUs: 1.7-4.3 s of CPU with 2 threads, 0.23-0.32 s with one).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        interpreter.run(kernel, tensors, b.scalars, coverage=coverage)
    except DslError:
        return []
    finally:
        torch.set_num_threads(threads)
    return _one_sided(coverage)


def combined_driver(project: EmittedProject) -> str:
    """One translation unit: the driver with the kernel source inlined under #line directives, so
    emulator reports name the kernel file and line."""
    name = project.name
    kernel_file = f"{name}_kernel.cpp"
    lines = driver_source(project.view).splitlines()
    out = []
    for i, line in enumerate(lines, start=1):
        if line.strip() == f'#include "{kernel_file}"':
            out += [f'#line 1 "{kernel_file}"', project.files[kernel_file].rstrip("\n"),
                    f'#line {i + 1} "{name}_sim_driver.cpp"']
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def validate_sim(kernel: ir.Kernel, lowered: ir.Kernel, project: EmittedProject, ctx: PassContext, run: TaskRun,
                 *, work_dir: Path | None = None, core_num: int | None = None, sandbox: bool = False,
                 launch_order: list[int] | None = None, form: str | None = None) -> ValidationResult:
    """`sandbox` (implied when the project holds model-written compute stages, `ctx.slots`): the program runs
    in npu_harness.sandbox, the run's I/O directory its only writable path; an error when no sandbox can be
    made here. `launch_order`: a kernel of several launches runs these (positions in its launch order; tests plant
    a wrong order). A kernel with a row fallback runs the form its host would pick at the case's shapes
    (npu_harness/row_fallback.py), or `form` ("fused", "fallback")."""
    if project.fallback is not None or form is not None:
        from .row_fallback import pick

        b = bind(kernel, run)
        f = pick(kernel, lowered, project, ctx, b.symbols, b.scalars, form)
        if f.project is not project:
            return validate_sim(f.kernel, f.lowered, f.project, f.ctx, run, work_dir=work_dir, core_num=core_num,
                                sandbox=sandbox, launch_order=launch_order)

    if lowered.kind is ir.KernelKind.LAUNCHES:  # several launches in order on one set of GM buffers
        return _validate_launches(kernel, lowered, project, ctx, run, work_dir=work_dir, core_num=core_num,
                                  sandbox=sandbox, order=launch_order)
    sandbox = sandbox or bool(ctx.slots)  # the kernel holds model-written compute stages (lowering/assist)
    _require_sandbox(sandbox)
    start = time.perf_counter()
    b: Binding = bind(kernel, run)
    check_pool_binding(kernel, b.scalars, b.symbols)
    with tempfile.TemporaryDirectory(prefix="ascend-sim-") as tmp:
        tmpdir = Path(work_dir or tmp)
        binary = _compile_project(project, tmpdir / "src", ctx, "the emitted C++")
        with scratch_dir(_io_bytes(kernel, b)) as io_tmp:
            io = Path(work_dir) / "io" if work_dir else Path(io_tmp)
            io.mkdir(exist_ok=True)
            for p in kernel.inputs:
                write_array(io / f"{p.name}.bin", b.tensors[p.name].data)
            res = _run_checked(binary, _program_args(io, kernel, b, ctx, core_num), io, sandbox, "")
            return _sim_result(kernel, lowered, ctx, b, res, io, start, run)


def _require_sandbox(sandbox: bool) -> None:
    """A SANDBOX error when the run must be sandboxed (model-written code) and no sandbox can be made here."""
    from . import sandbox as sb

    if sandbox and (why := sb.unavailable()) is not None:
        raise DslError.at("SANDBOX", f"model-written code is only run sandboxed, and no sandbox can be made here: {why}",
                          None, "install util-linux and allow unprivileged user namespaces")


def _compile_project(project: EmittedProject, src_dir: Path, ctx: PassContext, what: str) -> Path:
    """Write `project`'s files and its emulator driver into `src_dir` and compile them (content-addressed cache);
    SIM-COMPILE naming `what` when the C++ does not compile."""
    from .sim.compiler import CompileError, compile_program

    driver = write_sources(project, src_dir)
    try:
        defines = sim_defines(ctx.target.name, "mix") if project.view.mix else target_defines(ctx.target)
        return compile_program([driver], defines=defines, extra_include_dirs=[src_dir])
    except CompileError as e:
        raise DslError.at("SIM-COMPILE", f"{what} does not compile against the emulator:\n"
                          f"{e.stderr.strip()[-4000:]}", None) from None


def write_sources(project: EmittedProject, src_dir: Path) -> Path:
    """`project`'s files in `src_dir` and its emulator driver beside them; the driver's path (what to compile)."""
    src_dir.mkdir(parents=True, exist_ok=True)
    for fname, text in project.files.items():
        (src_dir / fname).parent.mkdir(parents=True, exist_ok=True)  # emulator/ holds the ACL launch stub
        (src_dir / fname).write_text(text)
    driver = src_dir / f"{project.name}_sim_driver.cpp"
    driver.write_text(combined_driver(project))
    return driver


def _program_args(io: Path, kernel: ir.Kernel, b: Binding, ctx: PassContext, core_num: int | None) -> list[str]:
    """An emulator program's command line: its I/O directory, the core count, `kernel`'s shape symbols and scalars."""
    args = [str(io), str(core_num or ctx.target.aiv)]
    args += [str(b.symbols[s]) for s in kernel.symbols]
    return args + [repr(float(b.scalars[p.name])) for p in kernel.scalars]


def _run_checked(binary: Path, args: list[str], io: Path, sandbox: bool, where: str):
    """Run an emulator program under the memory limit; MEMORY-LIMIT (`where` appended) when it exceeded it."""
    from .sim.compiler import run_program

    limit = memory_limit()
    res = run_program(binary, args, timeout=SIM_RUN_TIMEOUT_S, memory_limit_bytes=limit, sandbox=io if sandbox else None)
    if any(e.code == "MEMORY-LIMIT" for e in res.errors) or (
            res.returncode not in (0, 1) and is_out_of_memory(res.stderr)):
        raise DslError.at("MEMORY-LIMIT", f"the emulator exceeded the memory limit of {describe_limit(limit)}{where}",
                          None, "validate at smaller sizes: --cap N or --set NAME=VALUE")
    return res


def _io_bytes(kernel: ir.Kernel, b: Binding) -> int:
    """The bytes of the kernel's bound tensors as the harness holds them (the I/O directory's size)."""
    return sum(b.tensors[p.name].data.nbytes for p in kernel.bound_tensors)


def least_traffic(kernel: ir.Kernel, b: Binding) -> int:
    """The least GM traffic of a run: every bound tensor once at the kernel's dtype (a reference output may be
    held wider)."""
    return sum(b.tensors[p.name].numel() * p.dtype.size for p in kernel.bound_tensors)


def _validate_launches(kernel: ir.Kernel, lowered: ir.Kernel, project: EmittedProject, ctx: PassContext, run: TaskRun,
                      *, work_dir: Path | None = None, core_num: int | None = None, sandbox: bool = False,
                      order: list[int] | None = None):
    """validate_sim of a LAUNCHES kernel (npu_harness/validate_launches.py says how); `order`: the launches' positions to run (default: every
    launch in the lowered order; tests plant a wrong order to show the result catches it)."""
    from .cost.launches import combine
    from .sim.compiler import RunResult
    from .validate_launches import numel

    sandbox = sandbox or any(sub.slots for sub in ctx.launches)
    _require_sandbox(sandbox)
    start = time.perf_counter()
    b: Binding = bind(kernel, run)
    b.symbols.update(views.workspace_dims(lowered, b.symbols, b.scalars))  # C1 = ceil(C / 16) of the route's workspaces
    launches = [la for la in lowered.body if isinstance(la, ir.Launch)]
    order = list(range(len(launches))) if order is None else order
    with tempfile.TemporaryDirectory(prefix="ascend-sim-") as tmp:
        root = Path(work_dir or tmp)
        binaries = [_compile_project(sub_project, root / "src" / sub_project.name, ctx,
                                     f"the emitted C++ of launch {sub_project.name}") for sub_project in project.launches]
        shared = [p for p in lowered.workspaces if any(p.name in (*la.reads, *la.writes) for la in launches)]
        ws_bytes = {p.name: numel(p.shape, b.symbols) * p.dtype.size for p in shared}
        with scratch_dir(_io_bytes(kernel, b) + sum(ws_bytes.values())) as io_tmp:
            io = root / "io" if work_dir else Path(io_tmp)
            io.mkdir(exist_ok=True)
            for p in kernel.inputs:
                write_array(io / f"{p.name}.bin", b.tensors[p.name].data)
            for name, n in ws_bytes.items():  # the host's workspace buffers: unwritten bytes read as NaN
                with open(io / f"{name}.bin", "wb") as f:
                    f.write(b"\xff" * n)
            results: list[tuple[int, RunResult]] = []
            for i in order:
                sub = launches[i].kernel
                res = _run_checked(binaries[i], _program_args(io, sub, b, ctx, core_num), io, sandbox,
                                   f" in launch {sub.name}")
                results.append((i, res))
                if res.timed_out or res.returncode != 0 or res.errors:
                    break
            combined = RunResult(
                returncode=next((r.returncode for _, r in results if r.returncode != 0), 0),
                stdout="".join(r.stdout for _, r in results),
                stderr="\n".join(f"launch {launches[i].kernel.name}:\n{r.stderr.strip()}" for i, r in results
                                 if r.stderr.strip()),
                errors=[e for _, r in results for e in r.errors], timed_out=any(r.timed_out for _, r in results))
            result = _sim_result(kernel, lowered, ctx, b, combined, io, start, run)
    parts = []
    for i, r in results:
        sub = launches[i].kernel
        least = sum(numel(p.shape, b.symbols) * p.dtype.size for p in sub.tensors)
        # each launch's vector term left out (0): the whole program's, from the source kernel, is added by combine
        parts.append(_estimate(r.counters, ctx.target.name, least, problem_macs(sub, b), 0.0))
    if parts and all(e is not None for e in parts) and len(results) == len(launches):
        result.report = combine(parts, ctx.target.name, least_traffic(kernel, b),
                                problem_vector_cycles(kernel, b, ctx.target.name, lowered))
        result.estimate_us = result.report.time_us
    return result


def _sim_result(kernel: ir.Kernel, lowered: ir.Kernel, ctx: PassContext, b: Binding, res, io: Path,
                start: float, run: TaskRun) -> ValidationResult:
    """Compare the emulator's outputs (files in `io`) with the reference and collect the run's report."""
    if res.timed_out:
        return ValidationResult("sim", False, shapes=b.symbols, scalars=b.scalar_line(), defaults=b.defaults,
                                detail=f"error[TIME-LIMIT]: the emulator run exceeded "
                                f"its time limit of {SIM_RUN_TIMEOUT_S:.0f} s and was killed (a slow or a hung kernel)",
                                seconds=time.perf_counter() - start)
    comps, outputs = [], {}
    launched = not any(e.code == "TILING" for e in res.errors)  # no launch: nothing to compare
    for p in kernel.outputs if launched else ():
        path = io / f"{p.name}.bin"
        ref = b.tensors[p.name]
        if not path.exists():
            comps.append(Comparison(p.name, False, float("inf"), ref.numel(), ref.numel(), TOLERANCE[p.dtype.value]))
            continue
        got = HostArray(np.fromfile(path, dtype=STORAGE[TORCH_NAME[p.dtype.value]]).reshape(ref.shape),
                        TORCH_NAME[p.dtype.value])
        comps.append(compare(p.name, got, ref, p.dtype.value, tol=cube_tolerance(lowered, p.dtype.value)))
        outputs[p.name] = got
    comps = reconsider(kernel, run, comps, outputs, b.tensors)
    ok = res.returncode == 0 and not res.errors and all(c.ok for c in comps)
    detail = res.stderr.strip() if (res.errors or res.returncode not in (0, 1)) else ""
    if res.returncode < 0:  # killed by a signal: say which, and the likely cause
        detail = f"the emulator was {describe_exit(res.returncode)}" + (f"\n{detail}" if detail else "")
    est = _estimate(res.counters, ctx.target.name, least_traffic(kernel, b), problem_macs(kernel, b),
                    problem_vector_cycles(kernel, b, ctx.target.name, lowered))
    return ValidationResult("sim", ok, comps, res.errors, b.symbols, detail,
                            time.perf_counter() - start, counters=res.counters, report=est,
                            estimate_us=est.time_us if est is not None else None, scalars=b.scalar_line(),
                            defaults=b.defaults, weak=select_coverage(kernel, b) if ok else [])


def _estimate(counters: dict | None, target: str, min_gm_bytes: int | None = None, macs: tuple[int, bool] | None = None,
              vector_cycles: float | None = None):
    """Cost-model estimate for the emulator counters (None when unavailable); `min_gm_bytes`: the bytes of
    the kernel's tensors, the least GM traffic of the problem (the headline's memory term); `macs`: the problem's
    multiply-adds when known (npu_harness/problem_macs.py; the headline's cube term); `vector_cycles`: the problem's
    vector cycles (npu_harness/problem_vector.py; the headline's vector term)."""
    if not counters:
        return None
    from .cost import estimate

    try:
        return estimate(counters, target, min_gm_bytes, macs, vector_cycles)
    except KeyError:
        return None
