"""Run programs through both sides and classify what happens.

For each program: parse and type-check it (a DslError here means the generator wrote an invalid
program: `invalid`, not a compiler finding), build inputs and the reference with the interpreter,
lower it for its target (a located DslError is a legitimate rejection; INTERNAL, or any exception, a
finding), then compile every lowered program of a batch into one emulator binary (npu_harness.fuzz.batch)
and run each on its inputs. Findings:

- mismatch: an output differs from the reference beyond rounding (npu_harness.fuzz.oracle);
- check: the emulator reported an error (UB-UNINIT, GM-RACE, ...) on compiler output;
- internal: an INTERNAL error, or emitted C++ that does not compile;
- crash: a traceback in any stage (interpreter, lowering, emission), an emulator killed by a signal or
  hung.

A TILING report (the host tiling found no tile for these shapes) is a rejection, not a finding.
"""

from __future__ import annotations

import re
import signal
import tempfile
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from ascend_dsl import ir, parse_text, views
from ascend_dsl.diagnostics import DslError
from lowering import lower
from lowering.emit import KernelView

from ..arrays import TORCH_NAME, HostArray, from_torch
from ..row_fallback import pick
from ..sim.compiler import CompileError, run_program
from ..sim.runner import sim_defines
from ..subprocess_limits import describe_exit
from . import batch
from .inputs import make_inputs
from .oracle import judge, reference

CATEGORIES = ("mismatch", "check", "internal", "crash")
RUN_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Job:
    """A program to run: DSL text (its first kernel) and the setup (sizes, seed, target, cores)."""

    text: str
    sizes: dict
    seed: int = 0
    target: str = "ascend910b1"
    cores: int = 48
    label: str = ""


@dataclass
class Outcome:
    job: Job
    status: str  # "pass", "invalid", "rejected", or a finding category (CATEGORIES)
    detail: str = ""
    #: a short signature of a finding (category and code/exception), to tell findings apart while minimising
    signature: str = ""
    weak: list[str] = field(default_factory=list)

    @property
    def finding(self) -> bool:
        return self.status in CATEGORIES


@dataclass
class _Prepared:
    index: int
    kernel: ir.Kernel
    lowered: object
    project: object
    view: KernelView
    inputs: dict
    scalars: dict
    ref: object


def _first_line(e: DslError) -> str:
    return e.render().splitlines()[0] if e.diagnostics else str(e)


def _crash(job: Job, where: str, e: BaseException) -> Outcome:
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__)[-6:])
    return Outcome(job, "crash", f"{where}: {type(e).__name__}: {e}\n{tb}", f"crash:{where}:{type(e).__name__}")


def prepare(job: Job, index: int) -> _Prepared | Outcome:
    """Front end, inputs, reference and lowering of one job (no C++ yet)."""
    try:
        sources = parse_text(job.text, f"fz{index}.adsl")
        kernel = sources[0].instantiate()
    except DslError as e:
        return Outcome(job, "invalid", _first_line(e))
    except Exception as e:  # noqa: BLE001 - a traceback in the front end is a finding
        return _crash(job, "front end", e)
    fallback = replace(kernel.fallback, name=f"fz{index}") if kernel.fallback is not None else None
    kernel = replace(kernel, name=f"fz{index}", fallback=fallback)
    scalars = {p.name: p.default for p in kernel.scalars}
    try:
        inputs = make_inputs(kernel, job.sizes, job.seed)
        ref = reference(kernel, inputs, scalars, job.sizes, job.seed)
    except DslError as e:
        return Outcome(job, "rejected", "interpreter: " + _first_line(e))
    except Exception as e:  # noqa: BLE001
        return _crash(job, "interpreter", e)
    try:
        project, ctx = lower(kernel, job.target, f"fz{index}.adsl")
        view = project.view
    except DslError as e:
        if "INTERNAL" in e.codes:
            return Outcome(job, "internal", e.render(), internal_signature(_first_line(e)))
        return Outcome(job, "rejected", _first_line(e))
    except Exception as e:  # noqa: BLE001 - a crash outside the passes (the pass manager reports those)
        return _crash(job, "lowering", e)
    if project.fallback is not None:  # a row fallback: the form the host runs at these sizes (row_fallback.py)
        try:
            f = pick(kernel, ctx.lowered, project, ctx, {s: job.sizes[s] for s in kernel.symbols}, scalars)
        except Exception as e:  # noqa: BLE001 - a probe that fails is a finding
            return _crash(job, "row fallback", e)
        return _Prepared(index, f.kernel, f.lowered, f.project, f.project.view, inputs, scalars, ref)
    return _Prepared(index, kernel, ctx.lowered, project, view, inputs, scalars, ref)


def internal_signature(line: str) -> str:
    """`internal:<pass>:<exception>` of an INTERNAL error's first line (names of values left out, so a
    minimised program keeps its signature)."""
    m = re.search(r"in pass '(\w+)': (\w+)", line) or re.search(r"after pass '([\w ()]+)'", line)
    return "internal:" + ":".join(m.groups()) if m else "internal:" + line[:60]


def compile_signature(message: str) -> str:
    """`internal:SIM-COMPILE:<first compiler error, without places and numbers>`."""
    m = re.search(r"error: (.*)", message)
    text = re.sub(r"\d+", "N", m.group(1))[:70] if m else ""
    return "internal:SIM-COMPILE:" + re.sub(r"fz_?N", "fz", text)


_FILE_RE = re.compile(r"fz(\d+)_(?:kernel\.cpp|tiling\.h|sim_driver\.cpp):\d+")


def _compile(preps: list[_Prepared], defines: dict) -> tuple[Path | None, dict[int, str]]:
    """One binary for `preps`; kernels whose C++ does not compile are left out (index -> compiler error)."""
    bad: dict[int, str] = {}
    live = list(preps)
    while live:
        try:
            return batch.build([batch.Unit(p.project, p.view) for p in live], defines), bad
        except CompileError as e:
            named = {int(m.group(1)) for m in _FILE_RE.finditer(e.stderr) if "error" in e.stderr}
            culprits = [p for p in live if p.index in named] or live[:1]
            for p in culprits:
                bad[p.index] = e.message[-3000:]
            live = [p for p in live if p not in culprits]
    return None, bad


def _execute(binary: Path, slot: int, p: _Prepared, job: Job) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="ascend-fuzz-io-") as tmp:
        io = Path(tmp)
        for q in p.kernel.inputs:
            t = p.inputs[q.name]
            (io / f"{q.name}.bin").write_bytes(from_torch(t).tobytes())
        args = [str(slot), str(io), str(job.cores)]
        args += [str(job.sizes[s]) for s in p.kernel.symbols]
        args += [repr(float(p.scalars[q.name])) for q in p.kernel.scalars]
        res = run_program(binary, args, timeout=RUN_TIMEOUT_S)
        return _verdict(res, io, p, job)


def _execute_launches(p: _Prepared, job: Job) -> Outcome:
    """A kernel of several launches (LAUNCHES): each launch's program (compiled on its own) in order on one I/O
    directory, the workspace tensors between them files of 0xFF bytes (NaN) until a launch writes them."""
    from ..sim.compiler import compile_program
    from ..validate import write_sources
    from ..validate_launches import numel

    with tempfile.TemporaryDirectory(prefix="ascend-fuzz-io-") as tmp:
        io = Path(tmp)
        binaries = []
        for sub in p.project.launches:
            src = io / "src" / sub.name
            driver = write_sources(sub, src)
            try:
                binaries.append(compile_program([driver], defines=sim_defines(
                    job.target, "mix" if sub.view.mix else "vector"), extra_include_dirs=[src]))
            except CompileError as e:
                return Outcome(job, "internal", "the emitted C++ does not compile:\n" + e.message[-3000:],
                               compile_signature(e.message))
        for q in p.kernel.inputs:
            (io / f"{q.name}.bin").write_bytes(from_torch(p.inputs[q.name]).tobytes())
        sizes = {**job.sizes, **views.bind_symbols(p.kernel, job.sizes, p.scalars)}  # symbols views define
        sizes |= views.workspace_dims(p.lowered, sizes, p.scalars)  # and compiler-declared workspaces (C1 = ceil(C / 16))
        for w in p.lowered.workspaces:  # (workspace tensors may be shaped by them)
            (io / f"{w.name}.bin").write_bytes(b"\xff" * (numel(w.shape, sizes) * w.dtype.size))
        res = None
        for la, binary in zip(p.lowered.body, binaries, strict=True):
            sub = la.kernel
            args = [str(io), str(job.cores)] + [str(sizes[s]) for s in sub.symbols]
            args += [repr(float(p.scalars[q.name])) for q in sub.scalars]
            res = run_program(binary, args, timeout=RUN_TIMEOUT_S)
            if res.timed_out or res.returncode != 0 or res.errors:
                break
        return _verdict(res, io, p, job)


def _verdict(res, io: Path, p: _Prepared, job: Job) -> Outcome:
    """The outcome of a finished run: its errors, or the outputs in `io` judged against the reference."""
    if res.timed_out:
        return Outcome(job, "crash", f"the emulator ran over {RUN_TIMEOUT_S:.0f} s (hang?)", "crash:timeout")
    if res.returncode < 0:
        return Outcome(job, "crash", f"the emulator was {describe_exit(res.returncode)}\n{res.stderr[-2000:]}",
                       f"crash:{signal.Signals(-res.returncode).name}")
    codes = [e.code for e in res.errors]
    if "TILING" in codes:
        return Outcome(job, "rejected", "TILING: " + res.errors[0].message)
    if codes:
        first = res.errors[0]
        return Outcome(job, "check", res.stderr[-3000:], f"check:{first.code}")
    if res.returncode != 0:
        return Outcome(job, "crash", f"the emulator exited {res.returncode}\n{res.stderr[-2000:]}",
                       f"crash:exit{res.returncode}")
    verdicts = []
    for q in p.kernel.outputs:
        path = io / f"{q.name}.bin"
        ref = p.ref.outputs[q.name]
        raw = path.read_bytes() if path.exists() else b""
        got = HostArray.from_bytes(raw, TORCH_NAME[q.dtype.value], tuple(ref.shape)).to_torch() \
            if len(raw) == ref.numel() * q.dtype.size else torch.full_like(ref, float("nan"), dtype=torch.float64)
        verdicts.append(judge(q.name, got, p.ref, q.dtype.value))
    bad = [v for v in verdicts if not v.ok]
    if bad:
        return Outcome(job, "mismatch", "\n".join(v.describe() for v in verdicts), "mismatch")
    return Outcome(job, "pass")


def run_jobs(jobs: list[Job]) -> list[Outcome]:
    """Run every job; the lowered ones share one emulator binary per (target, kernel type)."""
    outcomes: dict[int, Outcome] = {}
    groups: dict[tuple[str, str], list[_Prepared]] = {}
    for i, job in enumerate(jobs):
        p = prepare(job, i)
        if isinstance(p, Outcome):
            outcomes[i] = p
            continue
        if p.project.launches:  # several launches: each its own program, run in order
            try:
                outcomes[i] = _execute_launches(p, job)
            except Exception as e:  # noqa: BLE001 - a harness bug must not stop the run
                outcomes[i] = _crash(job, "harness", e)
            continue
        kind = "mix" if p.view.mix else "vector"
        groups.setdefault((job.target, kind), []).append(p)
    for (target, kind), preps in groups.items():
        binary, bad = _compile(preps, sim_defines(target, kind))
        slots = {p.index: k for k, p in enumerate(p for p in preps if p.index not in bad)}
        for p in preps:
            job = jobs[p.index]
            if p.index in bad:
                outcomes[p.index] = Outcome(job, "internal", "the emitted C++ does not compile:\n" + bad[p.index],
                                            compile_signature(bad[p.index]))
                continue
            try:
                outcomes[p.index] = _execute(binary, slots[p.index], p, job)
            except Exception as e:  # noqa: BLE001 - a harness bug must not stop the run
                outcomes[p.index] = _crash(job, "harness", e)
    return [outcomes[i] for i in range(len(jobs))]


__all__ = ["CATEGORIES", "Job", "Outcome", "prepare", "run_jobs"]
