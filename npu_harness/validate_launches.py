"""Emulator validation of a kernel of several launches (LAUNCHES kind, lowering/passes/partition_launches.py).

Each launch's project is compiled as a program of its own (shared through the content-addressed compile
cache like any kernel's) and the launches run in order on one I/O directory, the host's GM: inputs are written
once, a workspace tensor shared by two launches is a file created before the first launch and filled with 0xFF
bytes (NaN for floats: a launch reading what no earlier launch wrote shows in the result), written by the launch
that stores it (an output of its program) and mapped by the launches that read it (an input of theirs). The
outputs of the whole kernel are compared with the reference as for any kernel; a launch that fails stops the
sequence. The estimate is the launches' estimates added (npu_harness/cost/launches.py).
"""

from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from ascend_dsl.diagnostics import ErrorCode as E
from lowering import EmittedProject, PassContext

from .binding import Binding, bind
from .sim.compiler import RunResult
from .sim.iodir import scratch_dir, write_array
from .subprocess_limits import describe_limit, is_out_of_memory, memory_limit
from .task import TaskRun


def require_one_launch(project: EmittedProject, ctx: PassContext, what: str) -> None:
    """`what` (an export, a device build) takes a kernel of one launch: a located UNSUPPORTED for several."""
    if project.launches:
        la = ctx.lowered.body[1] if ctx.lowered is not None else None
        raise DslError.at(E.UNSUPPORTED, f"{what} of a kernel of several launches ({len(project.launches)}: "
                          + ", ".join(p.name for p in project.launches) + ") is not written yet", la.span if la else None,
                          "validate it in the emulator (--validate sim), or write each launch as a kernel of its own")


def numel(shape: tuple, symbols: dict[str, int]) -> int:
    return math.prod(symbols[d] if isinstance(d, str) else d for d in shape)


def validate_launches(kernel: ir.Kernel, lowered: ir.Kernel, project: EmittedProject, ctx: PassContext, run: TaskRun,
                      *, work_dir: Path | None = None, core_num: int | None = None, sandbox: bool = False,
                      order: list[int] | None = None):
    """Like validate.validate_sim, for a LAUNCHES kernel; `order`: the launches' positions to run (default: every
    launch in the lowered order; tests plant a wrong order to show the result catches it)."""
    from . import sandbox as sb
    from .sim.compiler import CompileError, compile_program, run_program
    from .sim.driver import target_defines
    from .sim.runner import sim_defines
    from .validate import SIM_RUN_TIMEOUT_S, _estimate, _sim_result, combined_driver

    sandbox = sandbox or any(sub.slots for sub in ctx.launches)
    if sandbox and (why := sb.unavailable()) is not None:
        raise DslError.at("SANDBOX", f"model-written code is only run sandboxed, and no sandbox can be made here: {why}",
                          None, "install util-linux and allow unprivileged user namespaces")
    start = time.perf_counter()
    b: Binding = bind(kernel, run)
    launches = [la for la in lowered.body if isinstance(la, ir.Launch)]
    order = list(range(len(launches))) if order is None else order
    with tempfile.TemporaryDirectory(prefix="ascend-sim-") as tmp:
        root = Path(work_dir or tmp)
        binaries = []
        for sub_project in project.launches:
            src_dir = root / "src" / sub_project.name
            for fname, text in sub_project.files.items():
                (src_dir / fname).parent.mkdir(parents=True, exist_ok=True)
                (src_dir / fname).write_text(text)
            driver = src_dir / f"{sub_project.name}_sim_driver.cpp"
            driver.write_text(combined_driver(sub_project))
            defines = sim_defines(ctx.target.name, "mix") if sub_project.view.mix else target_defines(ctx.target)
            try:
                binaries.append(compile_program([driver], defines=defines, extra_include_dirs=[src_dir]))
            except CompileError as e:
                raise DslError.at("SIM-COMPILE", f"the emitted C++ of launch {sub_project.name} does not compile "
                                  f"against the emulator:\n{e.stderr.strip()[-4000:]}", None) from None
        shared = [p for p in kernel.workspaces if any(p.name in (*la.reads, *la.writes) for la in launches)]
        ws_bytes = {p.name: numel(p.shape, b.symbols) * p.dtype.size for p in shared}
        nbytes = sum(b.tensors[p.name].data.nbytes for p in kernel.bound_tensors) + sum(ws_bytes.values())
        with scratch_dir(nbytes) as io_tmp:
            io = root / "io" if work_dir else Path(io_tmp)
            io.mkdir(exist_ok=True)
            for p in kernel.inputs:
                write_array(io / f"{p.name}.bin", b.tensors[p.name].data)
            for name, n in ws_bytes.items():  # the host's workspace buffers: unwritten bytes read as NaN
                with open(io / f"{name}.bin", "wb") as f:
                    f.write(b"\xff" * n)
            limit = memory_limit()
            results: list[tuple[int, RunResult]] = []
            for i in order:
                sub = launches[i].kernel
                args = [str(io), str(core_num or ctx.target.aiv)]
                args += [str(b.symbols[s]) for s in sub.symbols]
                args += [repr(float(b.scalars[p.name])) for p in sub.scalars]
                res = run_program(binaries[i], args, timeout=SIM_RUN_TIMEOUT_S, memory_limit_bytes=limit,
                                  sandbox=io if sandbox else None)
                results.append((i, res))
                if any(e.code == "MEMORY-LIMIT" for e in res.errors) or (
                        res.returncode not in (0, 1) and is_out_of_memory(res.stderr)):
                    raise DslError.at("MEMORY-LIMIT", f"the emulator exceeded the memory limit of {describe_limit(limit)}"
                                      f" in launch {sub.name}", None, "validate at smaller sizes: --cap N or --set NAME=VALUE")
                if res.timed_out or res.returncode != 0 or res.errors:
                    break
            combined = RunResult(
                returncode=next((r.returncode for _, r in results if r.returncode != 0), 0),
                stdout="".join(r.stdout for _, r in results),
                stderr="\n".join(f"launch {launches[i].kernel.name}:\n{r.stderr.strip()}" for i, r in results
                                 if r.stderr.strip()),
                errors=[e for _, r in results for e in r.errors], timed_out=any(r.timed_out for _, r in results))
            result = _sim_result(kernel, lowered, ctx, b, combined, io, start)
    parts = []
    for i, r in results:
        sub = launches[i].kernel
        least = sum(numel(p.shape, b.symbols) * p.dtype.size for p in sub.tensors)
        parts.append(_estimate(r.counters, ctx.target.name, least))
    if parts and all(e is not None for e in parts) and len(results) == len(launches):
        from .cost.launches import combine

        least = sum(b.tensors[p.name].numel() * p.dtype.size for p in kernel.bound_tensors)
        result.report = combine(parts, ctx.target.name, least)
        result.estimate_us = result.report.time_us
    return result
