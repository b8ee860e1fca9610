"""Run the loop over (task, sample) units: serially, on a local process pool, or on a Ray cluster.

Each finished unit is written to the result cache at once, so an interrupted run resumes. Workers
rebuild the provider from its picklable ProviderConfig (one per process).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .cache import ResultCache, unit_key
from .loop import LoopConfig, SampleResult, run_sample
from .providers import Provider, ProviderConfig, make_provider, model_id
from .tasks import Task, load_task

EXECUTORS = ("local", "ray")
_PKG_PARENT = str(Path(__file__).resolve().parent.parent)
_PROVIDER: tuple[ProviderConfig, Provider] | None = None


class ExecutorError(Exception):
    pass


@dataclass(frozen=True)
class Unit:
    task_path: str
    category: str
    task_name: str
    sample: int
    key: str


def units_for(tasks: list[Task], samples: int, pcfg: ProviderConfig, lcfg: LoopConfig) -> list[Unit]:
    settings = {"provider": pcfg.name, "model": model_id(pcfg), "grammar_mode": pcfg.grammar_mode, **lcfg.settings()}
    return [Unit(str(t.path), t.category, t.name, s, unit_key(t.hash, s, settings)) for t in tasks
            for s in range(samples)]


def record_of(res: SampleResult, unit: Unit, category: str) -> dict:
    final = res.final.summary() if res.final else None
    first = next((a.get("outcome") for a in res.attempts if a.get("outcome")), None)
    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    for a in res.attempts:
        for k in usage:
            usage[k] += (a.get("usage") or {}).get(k, 0)
    return {"task": res.task, "category": category, "sample": res.sample, "key": unit.key, "passed": res.passed,
            "error": res.error, "rounds": len(res.attempts), "final": final,
            "first_passed": bool(first and first.get("passed")), "usage": usage,
            "generation_seconds": sum(a.get("generation_seconds", 0.0) for a in res.attempts),
            "attempts": res.attempts}


def _provider(pcfg: ProviderConfig) -> Provider:
    global _PROVIDER
    if _PROVIDER is None or _PROVIDER[0] != pcfg:
        _PROVIDER = (pcfg, make_provider(pcfg))
    return _PROVIDER[1]


def run_unit(pcfg: ProviderConfig, lcfg: LoopConfig, unit: Unit) -> dict:
    """One (task, sample): never raises for a bad response; provider failures end up in 'error'."""
    task = load_task(unit.task_path, unit.category)
    res = run_sample(_provider(pcfg), task, lcfg, unit.sample)
    return record_of(res, unit, unit.category)


def run_all(units: list[Unit], pcfg: ProviderConfig, lcfg: LoopConfig, cache: ResultCache, *, workers: int = 1,
            executor: str = "local", on_done: Callable[[dict], None] | None = None,
            provider: Provider | None = None) -> list[dict]:
    """Records for every unit, in unit order; cached units are not rerun."""
    records: dict[int, dict] = {}
    todo: list[tuple[int, Unit]] = []
    for i, u in enumerate(units):
        hit = cache.get(u.task_name, u.key)
        if hit is not None:
            hit["cached"] = True
            records[i] = hit
            if on_done:
                on_done(hit)
        else:
            todo.append((i, u))

    def finish(i: int, rec: dict) -> None:
        if not (rec.get("error") or "").startswith("error[PROVIDER"):  # transient: retry on resume
            cache.put(units[i].task_name, units[i].key, rec)
        records[i] = rec
        if on_done:
            on_done(rec)

    if executor == "ray":
        _run_ray(todo, pcfg, lcfg, finish)
    elif workers > 1 and len(todo) > 1:
        _run_pool(todo, pcfg, lcfg, workers, finish)
    else:
        global _PROVIDER
        if provider is not None:
            _PROVIDER = (pcfg, provider)
        for i, u in todo:
            finish(i, run_unit(pcfg, lcfg, u))
    return [records[i] for i in range(len(units))]


def _run_pool(todo, pcfg, lcfg, workers, finish) -> None:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    ctx = mp.get_context("spawn")  # torch + fork do not mix
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futs = {pool.submit(run_unit, pcfg, lcfg, u): i for i, u in todo}
        for f in as_completed(futs):
            finish(futs[f], f.result())


def _run_ray(todo, pcfg, lcfg, finish) -> None:
    try:
        import ray
    except ImportError:
        raise ExecutorError("--executor ray needs Ray: pip install ray (or use --workers N for a local pool)") from None
    started = not ray.is_initialized()
    if started:
        address = os.environ.get("RAY_ADDRESS")
        env = {"env_vars": {"PYTHONPATH": os.pathsep.join(filter(None, [_PKG_PARENT, os.environ.get("PYTHONPATH")]))}}
        ray.init(address=address, runtime_env=env, include_dashboard=False, log_to_driver=False,
                 ignore_reinit_error=True, **({} if address else {"num_cpus": os.cpu_count() or 1}))
    try:
        remote = ray.remote(run_unit)
        pending = {remote.remote(pcfg, lcfg, u): i for i, u in todo}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                finish(pending.pop(ref), ray.get(ref))
    finally:
        if started:
            ray.shutdown()  # leave no local Ray processes behind
