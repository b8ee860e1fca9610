"""Judge one LLM response against a task, cheapest check first:

    extract -> parse -> check (types + hardware constraints) -> interp (DSL interpreter vs the
    PyTorch reference) -> lower (pass pipeline + emission) -> sim (emitted AscendC in the emulator)

Every failure becomes located diagnostic text (DslError.render(), mismatch summaries, emulator
fault lines) that the repair loop feeds back. Nothing here raises for a bad response; a broken
task file (the reference itself fails) is reported as stage "task".
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from ascend_dsl import parse_text
from ascend_dsl.diagnostics import DslError
from lowering import PassContext, get_target, run_pipeline
from lowering.passes import check_constraints
from npu_harness.task import TaskRun
from npu_harness.validate import ValidationResult, validate_interp, validate_sim

from .extract import extract_dsl
from .reference import reference_runs
from .tasks import Task

LEVELS = ("interp", "sim", "npu")  # npu: sim, then built with CANN, run, compared and timed on the NPU
MAX_FEEDBACK_CHARS = 4000
_REF_CACHE: dict[tuple, list[tuple[str, TaskRun]]] = {}
_REF_CACHE_MAX = 16


@dataclass
class Outcome:
    code: str | None = None
    parsed: bool = False
    checked: bool = False
    interp_ok: bool = False
    lowered: bool = False
    sim_ok: bool = False
    level: str = "sim"
    failed_stage: str | None = None  # first failing stage; None when every requested stage passed
    diagnostics: str = ""
    codes: list[str] = field(default_factory=list)
    estimate_us: float | None = None
    ideal_fraction: float | None = None  # cost model: ideal time for the problem / estimated kernel time (<= 1)
    npu_ok: bool = False
    speedup: float | None = None  # --level npu: eager PyTorch time / kernel time, both measured on the NPU
    kernel_ms: float | None = None
    eager_ms: float | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict, repr=False)  # emitted AscendC project

    @property
    def passed(self) -> bool:
        ok = {"interp": self.interp_ok, "sim": self.sim_ok, "npu": self.npu_ok}[self.level]
        return self.failed_stage is None and ok

    def summary(self) -> dict:
        d = asdict(self)
        d.pop("files")
        d["passed"] = self.passed
        return d


def _fail(out: Outcome, stage: str, text: str, codes: list[str]) -> Outcome:
    out.failed_stage = stage
    out.diagnostics = text if len(text) <= MAX_FEEDBACK_CHARS else text[:MAX_FEEDBACK_CHARS] + "\n... (truncated)"
    out.codes = codes
    return out


def _internal(e: Exception, stage: str) -> tuple[str, list[str]]:
    return f"error[INTERNAL]: {stage} crashed: {type(e).__name__}: {e}", ["INTERNAL"]


def _runs(task: Task, variants: list, seeds: list[int], cap: int | None) -> list[tuple[str, TaskRun]]:
    dts = tuple(tuple(str(p.dtype) for p in k.inputs) for k in variants)
    key = (task.hash, tuple(seeds), cap, dts, tuple(p.name for p in variants[0].inputs))
    if key not in _REF_CACHE:
        if len(_REF_CACHE) >= _REF_CACHE_MAX:
            _REF_CACHE.pop(next(iter(_REF_CACHE)))
        _REF_CACHE[key] = reference_runs(task, variants, seeds, cap=cap)
    return _REF_CACHE[key]


def _mismatch(level: str, label: str, r: ValidationResult) -> str:
    shapes = ", ".join(f"{k}={v}" for k, v in r.shapes.items())
    lines = [f"error[MISMATCH]: {level} result differs from the PyTorch reference ({label}; {shapes})"]
    lines += [f"   = {c.describe()}" for c in r.comparisons if not c.ok]
    if r.defaults:
        lines.append(f"   = {r.scalars}")
    for e in r.sim_errors:
        lines.append(f"error[{e.code}]: {e.message}\n --> {e.file}:{e.line}" + (f" (block {e.block})"
                                                                               if e.block is not None else ""))
    if r.detail:
        lines.append("   = emulator: " + "\n     ".join(r.detail.strip().splitlines()[-12:]))
    return "\n".join(lines)


def evaluate(response: str, task: Task, *, level: str = "sim", seeds: list[int] | None = None,
             cap: int | None = None, target: str = "ascend910b1") -> Outcome:
    out = Outcome(level=level)
    seeds = seeds or [0]
    file = f"{task.name}.adsl"
    t0 = time.perf_counter()
    try:
        code = extract_dsl(response, file)
        out.code = code
        sources = parse_text(code, file)
        if not sources:
            raise DslError.at("NO-KERNEL", "the response defines no @kernel function", None,
                              "declare the kernel with @kernel above its def")
    except DslError as e:
        return _fail(out, "parse", e.render(), e.codes)
    except Exception as e:  # noqa: BLE001 - a response must never crash the run
        return _fail(out, "parse", *_internal(e, "parse"))
    out.parsed = True
    out.seconds["parse"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    try:  # every dtype variant: each case of the task runs on the one its data picks
        variants = [sources[0].instantiate(d) for d in sources[0].dtype_variants]
        ctx = PassContext(get_target(target), file)
        check_constraints.run(variants[0], ctx)
    except DslError as e:
        return _fail(out, "check", e.render(), e.codes)
    except Exception as e:  # noqa: BLE001
        return _fail(out, "check", *_internal(e, "check"))
    out.checked = True
    out.seconds["check"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    try:
        runs = _runs(task, variants, seeds, cap)
    except DslError as e:
        return _fail(out, "task", e.render(), e.codes)
    out.seconds["reference"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    for label, run in runs:
        try:
            if run.error:
                raise DslError.at(run.error["code"], f"{label}: {run.error['message']}", None)
            r = validate_interp(variants[run.variant or 0], run)
        except DslError as e:
            return _fail(out, "interp", e.render(), e.codes)
        except Exception as e:  # noqa: BLE001
            return _fail(out, "interp", *_internal(e, "interpreter"))
        if not r.ok:
            return _fail(out, "interp", _mismatch("interpreter", label, r), ["MISMATCH"])
    out.interp_ok = True
    out.seconds["interp"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    lowered: dict[int, tuple] = {}
    try:
        for v in sorted({run.variant or 0 for _, run in runs}):
            vctx = PassContext(get_target(target), file)
            lk = run_pipeline(variants[v], vctx)
            lowered[v] = (lk, vctx.project, vctx)
    except DslError as e:
        return _fail(out, "lower", e.render(), e.codes)
    except Exception as e:  # noqa: BLE001
        return _fail(out, "lower", *_internal(e, "lowering"))
    out.lowered = True
    out.files = dict(lowered[min(lowered)][1].files)
    out.seconds["lower"] = time.perf_counter() - t0
    if level not in ("sim", "npu"):
        return out

    t0 = time.perf_counter()
    estimates, fractions = [], []
    for label, run in runs:
        v = run.variant or 0
        try:
            r = validate_sim(variants[v], *lowered[v], run)
        except DslError as e:
            return _fail(out, "sim", e.render(), e.codes)
        except Exception as e:  # noqa: BLE001
            return _fail(out, "sim", *_internal(e, "emulator"))
        if not r.ok:
            return _fail(out, "sim", _mismatch("emulator", label, r), [e.code for e in r.sim_errors] or ["MISMATCH"])
        est = getattr(r, "estimate_us", None)  # the cost model (issue 5) adds it; never invented here
        if est is not None:
            estimates.append(float(est))
        if getattr(r, "report", None) is not None:
            fractions.append(float(r.report.ideal_fraction))
    out.sim_ok = True
    out.estimate_us = sum(estimates) / len(estimates) if estimates else None
    out.ideal_fraction = sum(fractions) / len(fractions) if fractions else None
    out.seconds["sim"] = time.perf_counter() - t0
    if level == "npu":
        return _npu_stage(out, code, file, task, sources[0].name, seeds[0], cap, target)
    return out


def _npu_stage(out: Outcome, code: str, file: str, task: Task, kernel: str, seed: int, cap: int | None,
               target: str) -> Outcome:
    """--level npu: the CANN build of the kernel against the task's reference on the NPU, timed both."""
    import tempfile
    from pathlib import Path

    from npu_harness.device.env import NpuUnavailable
    from npu_harness.device.npu_validate import validate_npu

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ascend-gen-npu-") as tmp:
        dsl = Path(tmp) / file
        dsl.write_text(code)
        try:
            r = validate_npu(dsl, kernel, {}, target, task.path, seed=seed, cap=cap)
        except (DslError, NpuUnavailable) as e:
            return _fail(out, "npu", e.render() if isinstance(e, DslError) else f"error[NPU-UNAVAILABLE]: {e}", ["NPU"])
    out.seconds["npu"] = time.perf_counter() - t0
    if not r.ok:
        lines = [f"error[MISMATCH]: the kernel differs from the PyTorch reference on the NPU ({r.device})"]
        lines += [f"   = {c.describe()}" for c in r.comparisons if not c.ok] + ([r.error] if r.error else [])
        return _fail(out, "npu", "\n".join(lines), ["MISMATCH"])
    out.npu_ok = True
    out.speedup = r.speedup
    out.kernel_ms, out.eager_ms = r.kernel_ms["mean_ms"], r.reference_ms["mean_ms"]
    return out
