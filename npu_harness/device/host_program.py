"""`--validate acl`: the emitted host program (`<k>_main.cpp`, unchanged) built against the emulator's
ACL runtime and run on the task's inputs, its outputs compared with the PyTorch reference. This is what
the project's CMake build runs on an NPU, with the emulator standing in for CANN."""

from __future__ import annotations

import time
from pathlib import Path

from ascend_dsl import ir
from lowering import EmittedProject, PassContext
from lowering.passes.check_windows import check_pool_binding

from ..arrays import TORCH_NAME, HostArray
from ..binding import bind
from ..compare import TOLERANCE, Comparison, compare, cube_tolerance
from ..sim.compiler import run_program
from ..sim.iodir import scratch_dir, write_array
from ..task import TaskRun
from ..validate import ValidationResult
from ..wide_reference import reconsider
from .emulator_build import build_host_program, build_library

HOST_RUN_TIMEOUT_S = 300.0


def validate_host(kernel: ir.Kernel, project: EmittedProject, ctx: PassContext, run: TaskRun) -> ValidationResult:
    from ..validate_launches import require_one_launch

    require_one_launch(project, ctx, "the host program")
    start = time.perf_counter()
    b = bind(kernel, run)
    check_pool_binding(kernel, b.scalars, b.symbols)
    library = build_library(project, ctx)
    program = build_host_program(project, ctx, library)
    nbytes = sum(b.tensors[p.name].data.nbytes for p in kernel.tensors)
    with scratch_dir(nbytes, prefix="ascend-host-") as tmp:
        io = Path(tmp)
        for p in kernel.inputs:
            write_array(io / f"{p.name}.bin", b.tensors[p.name].data)
        args = [str(b.symbols[s]) for s in kernel.symbols] + [repr(float(b.scalars[p.name])) for p in kernel.scalars]
        res = run_program(program, args, timeout=HOST_RUN_TIMEOUT_S, cwd=io)
        common = {"shapes": b.symbols, "scalars": b.scalar_line(), "defaults": b.defaults}
        if res.timed_out:
            return ValidationResult("acl", False, detail=f"error[TIME-LIMIT]: the host program exceeded its time "
                                    f"limit of {HOST_RUN_TIMEOUT_S:.0f} s and was killed (a slow or a hung kernel)",
                                    seconds=time.perf_counter() - start, **common)
        comps, outputs = [], {}
        for p in kernel.outputs if res.returncode == 0 else ():
            path, ref = io / f"{p.name}.bin", b.tensors[p.name]
            if not path.exists():
                comps.append(Comparison(p.name, False, float("inf"), ref.numel(), ref.numel(), TOLERANCE[p.dtype.value]))
                continue
            got = HostArray.from_bytes(path.read_bytes(), TORCH_NAME[p.dtype.value], ref.shape)
            comps.append(compare(p.name, got, ref, p.dtype.value, tol=cube_tolerance(kernel, p.dtype.value)))
            outputs[p.name] = got
        comps = reconsider(kernel, run, comps, outputs, b.tensors)
        ok = res.returncode == 0 and not res.errors and bool(comps) and all(c.ok for c in comps)
        detail = res.stderr.strip() if (res.errors or res.returncode != 0) else ""
        return ValidationResult("acl", ok, comps, res.errors, detail=detail, seconds=time.perf_counter() - start,
                                counters=res.counters, **common)
