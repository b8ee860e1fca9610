"""A reward for reinforcement learning from execution feedback: a `reward_funcs` entry of TRL's GRPOTrainer.

    from kernelgen.reward import KernelReward
    GRPOTrainer(model, reward_funcs=[KernelReward(workers=8)], train_dataset=load_dataset(DIR, "prompts")["train"])

TRL calls it as `reward(prompts=..., completions=..., completion_ids=..., **columns, trainer_state=...,
log_metric=..., log_extra=...)` with one entry per completion; it uses the `task_files` column (the task
file and its sidecars, as the dataset export writes it; kernelgen.dataset) and returns one float per
completion, or None where the task itself is broken (its reference fails: not the model's fault; TRL leaves
such a completion out).

The scale (exact; STAGE_REWARD, SPEED_WEIGHT) follows the stage chain parse < check < lower < interp < sim
(kernelgen.stages): the reward of the highest stage passed without a failure below it,

    0.0  no code in the response, it does not parse, or it ran past the sandbox's time limit
    0.1  parses; the checker rejects it (types, hardware constraints)
    0.2  checks; lowering to AscendC fails
    0.3  lowers; the DSL interpreter's result differs from the PyTorch reference
    0.6  the interpreter matches; the emitted AscendC fails in the emulator (fault or mismatch)
    1.0 + 0.5 * f   passes in the emulator; f = the cost model's ideal_fraction (ideal time for the problem /
                    estimated kernel time, in [0, 1], mean over the trials), so a correct kernel earns 1.0 to 1.5
    None  no reward applies (TRL leaves the completion out): the task's own reference fails, the sandbox hit
          its memory limit or died, or one of our tools crashed on the kernel (INTERNAL)

Every kernel is judged in its own process (kernelgen.reward_worker) under a wall-clock timeout and an
address-space limit (npu_harness.subprocess_limits.run_limited), several at a time (a pool of `workers`
sandboxed processes, or Ray tasks with executor="ray"). Results are cached by kernel hash: the extracted
DSL text, the task's content and the settings; in memory, and on disk under `cache_dir` (keyed also by the
source of the compiler and the emulator, so an upgrade never serves stale rewards). A completion with no
code at all scores 0.0 without starting a process.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

from ascend_dsl.diagnostics import DslError

from .extract import extract_code
from .stages import STAGES, highest_stage

REWARD_VERSION = "kernel-reward-1"
STAGE_REWARD = {None: 0.0, "parse": 0.1, "check": 0.2, "lower": 0.3, "interp": 0.6, "sim": 1.0}
SPEED_WEIGHT = 0.5
DEFAULT_TIMEOUT_S = 300.0
MEMORY_CACHE_MAX = 50_000  # results kept in memory (oldest dropped first); the disk cache has no bound
_PKG_PARENT = Path(__file__).resolve().parent.parent
_SOURCE_DIRS = ("ascend_dsl", "lowering", "npu_harness", "kernelgen", "codegen_templates")
_SOURCE_SUFFIXES = {".py", ".lark", ".jinja", ".h", ".cpp", ".toml", ".md"}


def reward_value(stages: dict[str, bool | None], ideal_fraction: float | None) -> float:
    """The scale above for one judged kernel (stage_results of kernelgen.stages)."""
    top = highest_stage(stages)
    value = STAGE_REWARD[top]
    if top == "sim":
        value += SPEED_WEIGHT * min(1.0, max(0.0, ideal_fraction or 0.0))
    return value


def outcome_reward(outcome: dict, stages: dict[str, bool | None]) -> float | None:
    """reward_value, or None where no reward applies: the task's own reference failed (stage "task", e.g. its
    memory limit) or one of our tools crashed on the kernel (INTERNAL: a bug to fix, not a verdict)."""
    if outcome.get("failed_stage") == "task" or "INTERNAL" in (outcome.get("codes") or []):
        return None
    return reward_value(stages, outcome.get("ideal_fraction"))


def completion_text(completion) -> str:
    """A TRL completion: plain text, or a list of chat messages (the assistant's contents, joined)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return str(completion.get("content", ""))
    return "".join(str(m.get("content", "")) for m in completion if m.get("role", "assistant") == "assistant")


def task_hash(task_files: Sequence[dict]) -> str:
    h = hashlib.sha256()
    for f in sorted(task_files, key=lambda f: f["name"]):
        h.update(f["name"].encode() + b"\0" + f["content"].encode() + b"\0")
    return h.hexdigest()[:16]


@cache
def source_fingerprint() -> str:
    """Hash of the package sources that decide a verdict (parser, passes, templates, emulator, harness)."""
    h = hashlib.sha256()
    for d in _SOURCE_DIRS:
        for p in sorted((_PKG_PARENT / d).rglob("*")):
            if p.suffix in _SOURCE_SUFFIXES and p.is_file() and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(_PKG_PARENT)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def sandbox_judge(job: dict, timeout: float, memory_bytes: int | None = None) -> dict:
    """Run kernelgen.reward_worker on `job` in a limited child process: {"outcome", "stages"} or
    {"sandbox": "TIMEOUT" | "MEMORY-LIMIT" | "CRASH", "detail"}. Runs on Ray workers too (self-contained job)."""
    from npu_harness.subprocess_limits import ENV, is_out_of_memory, memory_limit, run_limited

    from .reward_worker import RESULT_PREFIX

    limit = memory_limit() if memory_bytes is None else memory_bytes
    with tempfile.TemporaryDirectory(prefix="ascend-reward-") as tmp:
        job_path = Path(tmp) / "job.json"
        job_path.write_text(json.dumps(job))
        # the worker's own children (reference runs, emulator) take the same limit, never a larger one
        env = {**os.environ, ENV: str(limit),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(_PKG_PARENT), os.environ.get("PYTHONPATH")]))}
        res = run_limited([sys.executable, "-m", "kernelgen.reward_worker", str(job_path)], timeout=timeout,
                          memory_bytes=limit, cwd=tmp, env=env)
    if res.timed_out:
        return {"sandbox": "TIMEOUT", "detail": f"killed after {timeout:g} s"}
    for line in reversed(res.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            result = json.loads(line[len(RESULT_PREFIX):])
            diag = result["outcome"].get("diagnostics") or ""
            if "INTERNAL" in (result["outcome"].get("codes") or []) and is_out_of_memory(diag):
                return {"sandbox": "MEMORY-LIMIT", "detail": diag}  # e.g. torch could not be mapped in
            return result
    kind = "MEMORY-LIMIT" if is_out_of_memory(res.stderr) else "CRASH"
    return {"sandbox": kind, "detail": "\n".join(res.stderr.strip().splitlines()[-5:])}


class KernelReward:
    """The reward function (see the module docstring for the scale). Picklable; holds no live pool.

    workers: kernels judged at once (each in its own sandboxed process); executor: "local" or "ray"
    (RAY_ADDRESS picks a cluster, else a local instance started once and stopped by close());
    level: "sim" (default) or "interp" (then the top reward is 0.6); trials: reference runs with fresh
    inputs per kernel; cap: scale task sizes down to at most this many elements per input; timeout and
    memory_bytes: the sandbox's limits per kernel (default 300 s, ASCEND_DSL_MEMORY_LIMIT);
    cache_dir: on-disk result cache (None: in memory only)."""

    def __init__(self, *, workers: int = 2, executor: str = "local", level: str = "sim", trials: int = 1,
                 seed: int = 0, cap: int | None = None, target: str = "ascend910b1",
                 timeout: float = DEFAULT_TIMEOUT_S, memory_bytes: int | None = None,
                 cache_dir: str | Path | None = None):
        if executor not in ("local", "ray"):
            raise ValueError(f"executor must be 'local' or 'ray', not {executor!r}")
        if level not in ("interp", "sim"):
            raise ValueError(f"level must be 'interp' or 'sim', not {level!r}")
        if workers < 1 or trials < 1:
            raise ValueError("workers and trials must be >= 1")
        self.__name__ = "ascend_kernel_reward"  # TRL names the logged reward after it
        self.workers, self.executor, self.level, self.trials = workers, executor, level, trials
        self.seed, self.cap, self.target, self.timeout = seed, cap, target, timeout
        self.memory_bytes = memory_bytes
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self._memory: dict[str, dict] = {}
        self._ray_started = False
        self.stats = {"judged": 0, "cached": 0, "no_code": 0}

    # -- the TRL entry point ------------------------------------------------------------------------------
    def __call__(self, completions: list, task_files: list | None = None, log_metric=None, log_extra=None,
                 **kwargs) -> list[float | None]:
        if task_files is None:
            raise ValueError("KernelReward needs the dataset column 'task_files' (kernelgen.dataset writes it)")
        if len(task_files) != len(completions):
            raise ValueError(f"{len(completions)} completions but {len(task_files)} task_files entries")
        categories = kwargs.get("category") or [None] * len(completions)
        results = self.judge([completion_text(c) for c in completions], list(task_files), list(categories))
        rewards = [self.reward_of(r) for r in results]
        if log_metric is not None:
            n = len(results)
            for stage in STAGES:
                log_metric(f"kernel/{stage}_rate", sum(bool((r.get("stages") or {}).get(stage)) for r in results) / n)
            log_metric("kernel/sandbox_failures", sum("sandbox" in r for r in results))
        if log_extra is not None:
            log_extra("kernel_stage", [highest_stage(r["stages"]) if "stages" in r else r.get("sandbox", "none")
                                       for r in results])
        return rewards

    @staticmethod
    def reward_of(result: dict) -> float | None:
        if "sandbox" in result:  # too slow is the kernel's failure; a memory limit or a crash is the machine's
            return STAGE_REWARD[None] if result["sandbox"] == "TIMEOUT" else None
        return outcome_reward(result["outcome"], result["stages"])

    # -- judging ------------------------------------------------------------------------------------------
    def settings(self) -> dict:
        return {"version": REWARD_VERSION, "level": self.level, "seeds": self.seeds(), "cap": self.cap,
                "target": self.target}

    def seeds(self) -> list[int]:
        return [self.seed + i for i in range(self.trials)]

    def key(self, code: str, files: Sequence[dict]) -> str:
        blob = json.dumps({"code": code, "task": task_hash(files), **self.settings()}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:24]

    def judge(self, texts: list[str], task_files: list, categories: list | None = None) -> list[dict]:
        """One result per text: {"outcome", "stages"}, {"sandbox", "detail"} or the no-code result."""
        categories = categories or [None] * len(texts)
        results: list[dict | None] = [None] * len(texts)
        todo: dict[str, tuple[dict, list[int]]] = {}
        for i, (text, files, cat) in enumerate(zip(texts, task_files, categories, strict=True)):
            try:
                code = extract_code(text)
            except DslError as e:
                self.stats["no_code"] += 1
                results[i] = _no_code(e.render())
                continue
            k = self.key(code, files)
            hit = self._memory.get(k) or self._disk_get(k)
            if hit is not None:
                self.stats["cached"] += 1
                self._remember(k, hit)
                results[i] = hit
            elif k in todo:
                todo[k][1].append(i)
            else:
                py = next((f["name"] for f in files if f["name"].endswith(".py")), "task.py")
                job = {"response": text, "task_files": list(files), "category": cat or "tasks",
                       "task_name": Path(py).stem, **self.settings()}
                todo[k] = (job, [i])
        for k, result in zip(todo, self._run([job for job, _ in todo.values()]), strict=True):
            self.stats["judged"] += 1
            self._remember(k, result)
            if "sandbox" not in result:  # a killed or crashed run may be the machine's fault: not kept on disk
                self._disk_put(k, result)
            for i in todo[k][1]:
                results[i] = result
        return results  # type: ignore[return-value]

    def _remember(self, k: str, result: dict) -> None:
        self._memory.pop(k, None)
        self._memory[k] = result
        while len(self._memory) > MEMORY_CACHE_MAX:
            self._memory.pop(next(iter(self._memory)))

    def _run(self, jobs: list[dict]) -> list[dict]:
        if not jobs:
            return []
        if self.executor == "ray":
            return self._run_ray(jobs)
        with ThreadPoolExecutor(max_workers=min(self.workers, len(jobs))) as pool:  # each waits on a process
            return list(pool.map(lambda job: sandbox_judge(job, self.timeout, self.memory_bytes), jobs))

    def _run_ray(self, jobs: list[dict]) -> list[dict]:
        try:
            import ray
        except ImportError:
            raise RuntimeError("executor='ray' needs Ray: pip install 'ascend-dsl[ray]'") from None
        if not ray.is_initialized():
            address = os.environ.get("RAY_ADDRESS")
            env = {"env_vars": {"PYTHONPATH": os.pathsep.join(filter(None, [str(_PKG_PARENT),
                                                                            os.environ.get("PYTHONPATH")]))}}
            ray.init(address=address, runtime_env=env, include_dashboard=False, log_to_driver=False,
                     ignore_reinit_error=True, **({} if address else {"num_cpus": self.workers}))
            self._ray_started = True
        remote = ray.remote(num_cpus=1)(sandbox_judge)
        return ray.get([remote.remote(job, self.timeout, self.memory_bytes) for job in jobs])

    def close(self) -> None:
        """Stop the local Ray instance this reward started (if any)."""
        if self._ray_started:
            import ray

            ray.shutdown()
            self._ray_started = False

    # -- the on-disk cache --------------------------------------------------------------------------------
    def _disk_path(self, k: str) -> Path | None:
        return self.cache_dir / source_fingerprint() / f"{k}.json" if self.cache_dir else None

    def _disk_get(self, k: str) -> dict | None:
        p = self._disk_path(k)
        if p is None or not p.is_file():
            return None
        try:
            return json.loads(p.read_text())
        except (OSError, json.JSONDecodeError):
            return None

    def _disk_put(self, k: str, result: dict) -> None:
        p = self._disk_path(k)
        if p is None:
            return
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(result))
        tmp.replace(p)


def _no_code(diagnostic: str) -> dict:
    stages = {s: None for s in STAGES} | {"parse": False}
    return {"outcome": {"parsed": False, "failed_stage": "parse", "diagnostics": diagnostic, "codes": ["GEN-NO-CODE"]},
            "stages": stages}
