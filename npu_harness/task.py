"""Run a KernelBench / NPUKernelBench task file in a subprocess (timeout + memory limit).

Only the worker subprocess (npu_harness.task_worker) imports torch; the parent gets every case's inputs,
parameters and reference outputs as numpy (`npu_harness.arrays.HostArray`), so `ascend-lower --validate
sim` never pays the torch import.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ascend_dsl.diagnostics import DslError

from .disk_cache import cache_base, note_write, touch
from .subprocess_limits import describe_exit, describe_limit, memory_limit
from .task_result import load_cases
from .task_server import WORKER_SOURCES, run_worker

TASK_TIMEOUT_S = 120.0
#: results larger than this are not kept in the on-disk task cache
TASK_CACHE_MAX_BYTES = 256 << 20


def _task_cache_file(path: Path, request: dict) -> Path | None:
    """On-disk cache of task runs (inputs + reference outputs), keyed by the task file's content (and its JSON
    sidecars), the request (seed, overrides, cap, kernel dtypes), the worker's and the result format's source
    and the torch version (torch/version.py, found without importing torch). Disabled with
    ASCEND_DSL_TASK_CACHE=0; lives in $ASCEND_DSL_CACHE/tasks (default ~/.cache/ascend-dsl/tasks)."""
    if os.environ.get("ASCEND_DSL_TASK_CACHE", "1") == "0":
        return None
    h = hashlib.sha256()
    h.update(path.read_bytes())
    for side in (path.with_suffix(".json"), path.with_suffix(".jsonl")):
        if side.is_file():
            h.update(side.read_bytes())
    h.update(json.dumps(request, sort_keys=True).encode())
    here = Path(__file__).resolve().parent
    for name in WORKER_SOURCES:
        h.update((here / name).read_bytes())
    h.update(_torch_version().encode())
    return cache_base() / "tasks" / f"{h.hexdigest()}.npz"


@functools.lru_cache(maxsize=1)
def _torch_version() -> str:
    """The installed torch's build, without importing torch (the worker runs our interpreter): the
    content of torch/version.py (`__version__`, `git_version`, ...), found with importlib.util.find_spec,
    which imports nothing. (importlib.metadata would cost ~0.3 s of imports per CLI run.)"""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        spec = None
    if spec is None or spec.origin is None:
        return "none"
    try:
        return (Path(spec.origin).parent / "version.py").read_text()
    except OSError:
        return "unknown"


@dataclass
class TaskRun:
    """One case of a task: forward()'s arguments (tensors already rounded to the kernel's input dtypes) and
    results, the Model's parameters and buffers (kernel-style names: '.' -> '_'), and what scalars bind to.
    From run_task, tensors are HostArray (numpy) or, from a meta-device run, TensorShape; other producers
    (tests) may pass torch tensors."""

    inputs: list
    outputs: list
    attrs: dict = field(default_factory=dict)  # the Model's own number attributes
    constants: dict = field(default_factory=dict)  # the task's module-level integer constants (after --set/--cap)
    params: dict = field(default_factory=dict)  # parameter/buffer name -> tensor
    arg_names: list = field(default_factory=list)  # forward()'s parameter names
    sub_attrs: dict = field(default_factory=dict)  # submodule attributes by dotted name
    case_attrs: dict = field(default_factory=dict)  # the case's JSON attributes (get_input_groups)
    variant: int | None = None  # the kernel dtype variant picked for this case's data
    conversions: list = field(default_factory=list)  # "x float32 -> float16": tensors converted for the kernel
    label: str = "task"  # "task", or "case K" of a get_input_groups() task
    error: dict | None = None  # {"code", "message"}: this case cannot run on the kernel (e.g. a dtype)
    args: dict = field(default_factory=dict)  # forward()'s number arguments by name
    source: TaskSource | None = None  # how run_task_cases made it: lets wide_reference run it again in float64


@dataclass(frozen=True)
class TaskSource:
    """The run_task_cases call that made a case, and its position: enough to run the same case again."""

    path: Path
    seed: int
    overrides: tuple  # (name, value) pairs
    cap: int | None
    kernel: str | None  # the kernel spec as JSON
    index: int
    timeout: float


@dataclass
class TaskCases:
    """Every case of a task run: one for get_inputs() tasks, one per group for get_input_groups() tasks."""

    format: str  # "standard" | "groups"
    cases: list[TaskRun]
    constants: dict = field(default_factory=dict)
    scaling: dict | None = None  # --cap: {"sizes": {old: new}, "method", "notes"}


def cases_from(data: dict) -> TaskCases:
    """TaskCases from the worker's result dict (npu_harness.task_result.load_cases or task_worker.run_request)."""
    runs = [TaskRun(c["inputs"], c["outputs"], c["attrs"], data["constants"], params=c["params"],
                    arg_names=c["arg_names"], sub_attrs=c["sub_attrs"], case_attrs=c["case_attrs"], variant=c["variant"],
                    conversions=c["conversions"], label=c["label"], error=c["error"], args=c["args"])
            for c in data["cases"]]
    return TaskCases(data["format"], runs, data["constants"], data.get("scaling"))


def _missing(path: Path) -> DslError:
    return DslError.at("TASK-ERROR", f"task file {path} does not exist", None,
                       "pass --task TASK.py (default: the .py next to the .adsl file)")


def run_task_cases(path: str | Path, *, seed: int = 0, overrides: dict | None = None, cap: int | None = None,
                   kernel: dict | None = None, meta: bool = False, timeout: float = TASK_TIMEOUT_S,
                   wide: bool = False) -> TaskCases:
    """Every case of the task, run in a worker subprocess (npu_harness.task_worker's REQUEST: seed, --set
    overrides, --cap, the kernel's inputs and dtype variants, meta = shapes only, wide = the references in
    float64: npu_harness/wide_reference.py)."""
    cases = _run_task_cases(Path(path), seed, overrides, cap, kernel, meta, timeout, wide)
    for i, c in enumerate(cases.cases):
        c.source = TaskSource(Path(path), seed, tuple(sorted((overrides or {}).items())), cap,
                              json.dumps(kernel) if kernel is not None else None, i, timeout)
    return cases


def _run_task_cases(path: Path, seed: int, overrides: dict | None, cap: int | None, kernel: dict | None, meta: bool,
                    timeout: float, wide: bool) -> TaskCases:
    if not path.is_file():
        raise _missing(path)
    request = {"seed": seed, "set": overrides or {}, "cap": cap, "kernel": kernel, "meta": meta}
    if wide:
        request["wide"] = True
    cached = _task_cache_file(path, request)
    if cached is not None and cached.is_file():
        try:
            cases = cases_from(load_cases(cached))
            touch(cached)
            return cases
        except Exception:  # noqa: BLE001 - a damaged cache entry is simply recomputed
            cached.unlink(missing_ok=True)
    limit = memory_limit()
    with tempfile.TemporaryDirectory(prefix="ascend-task-") as tmp:
        req = Path(tmp) / "request.json"
        req.write_text(json.dumps(request))
        out = Path(tmp) / "result.npz"
        res = run_worker([str(path), str(out), str(req)], timeout=timeout, memory_bytes=limit)
        _raise_for(path, res, out, timeout, limit, meta)
        if out.stat().st_size > limit // 2:
            raise DslError.at("MEMORY-LIMIT", f"the tensors of task file {path} take {out.stat().st_size / 2**30:.1f} GB; "
                              f"reading them would exceed the memory limit of {describe_limit(limit)}", None,
                              "validate at smaller sizes: --cap N or --set NAME=VALUE")
        try:
            data = load_cases(out)
        except (OSError, ValueError, KeyError) as e:
            raise DslError.at("TASK-ERROR", f"task file {path}: the worker's result is unreadable ({e})", None) from None
        if cached is not None and out.stat().st_size <= TASK_CACHE_MAX_BYTES:
            try:
                cached.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp_name = tempfile.mkstemp(prefix=".task-", suffix=".tmp", dir=cached.parent)
                os.close(fd)
                shutil.copyfile(out, tmp_name)
                os.replace(tmp_name, cached)
            except OSError:
                pass
            else:
                note_write()
    return cases_from(data)


def _raise_for(path: Path, res, out: Path, timeout: float, limit: int, meta: bool) -> None:
    """The worker's failure as a DslError (nothing when it succeeded)."""
    from .task_worker import EXIT_MEMORY, EXIT_REPORTED

    if res.timed_out:
        raise DslError.at("TASK-TIMEOUT", f"task file {path} did not finish within {timeout:.0f} s", None,
                          "does get_inputs() or forward() loop forever, or are the sizes too large? try --cap N")
    if res.returncode == 0:
        return
    report = Path(str(out) + ".error.json")
    if res.returncode in (EXIT_REPORTED, EXIT_MEMORY) and report.is_file():
        err = json.loads(report.read_text())
        if err["code"] == "MEMORY-LIMIT":
            raise DslError.at("MEMORY-LIMIT", f"task file {path}: {err['message']}: it exceeded the memory limit of "
                              f"{describe_limit(limit)}", None, "validate at smaller sizes: --cap N or --set NAME=VALUE")
        raise DslError.at(err["code"], f"task file {path}: {err['message']}", None, err.get("hint"))
    from .subprocess_limits import is_out_of_memory

    tail = "\n".join(res.stderr.strip().splitlines()[-6:])
    if is_out_of_memory(res.stderr):
        raise DslError.at("MEMORY-LIMIT", f"task file {path} exceeded the memory limit of {describe_limit(limit)}:\n"
                          f"{tail}", None, "validate at smaller sizes: --cap N or --set NAME=VALUE")
    where = " on the meta device" if meta else ""
    hint = ("shapes come from running the task on torch.device('meta'); an op without a meta kernel fails there"
            if meta else None)
    raise DslError.at("TASK-ERROR", f"task file {path} failed{where} ({describe_exit(res.returncode)})"
                      + (f":\n{tail}" if tail else ""), None, hint)


def run_task(path: str | Path, *, seed: int = 0, overrides: dict | None = None, cap: int | None = None,
             kernel: dict | None = None, timeout: float = TASK_TIMEOUT_S) -> TaskRun:
    """The task's single case (a get_inputs() task, or the first group of a get_input_groups() task)."""
    return run_task_cases(path, seed=seed, overrides=overrides, cap=cap, kernel=kernel, timeout=timeout).cases[0]


def run_task_shapes(path: str | Path, *, overrides: dict | None = None, kernel: dict | None = None,
                    timeout: float = TASK_TIMEOUT_S) -> TaskCases:
    """The task's cases on the meta device: shapes and dtypes (TensorShape), no data."""
    return run_task_cases(path, overrides=overrides, kernel=kernel, meta=True, timeout=timeout)
