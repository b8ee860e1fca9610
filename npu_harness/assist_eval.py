"""The evaluator of assisted lowering decisions (lowering.assist.Evaluator): a candidate's emitted project
runs in the emulator, all checks on, on every case of the task against the PyTorch reference, and the cost
model estimates its time at the first case's shapes (an ESTIMATE).

The task runs once per kernel dtype variant (its cases are cached here and on disk by npu_harness.task);
every candidate is one emulator build (content-addressed: a candidate emitting the same files as an earlier
one, in this process or another, costs no compile)."""

from __future__ import annotations

import json
from pathlib import Path

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from lowering.assist import Evaluation

from .validate import kernel_spec, load_cases_for, validate_sim

#: How many mismatching outputs / emulator faults a rejection reason lists.
MAX_LISTED = 4


class SimEvaluator:
    def __init__(self, task: Path, *, seed: int = 0, overrides: dict | None = None, cap: int | None = None,
                 timeout: float = 120.0):
        self.task, self.seed, self.overrides, self.cap, self.timeout = task, seed, overrides or {}, cap, timeout
        self._cases: dict[str, list] = {}

    def _runs(self, kernel: ir.Kernel) -> list:
        key = json.dumps(kernel_spec([kernel]))
        if key not in self._cases:
            cases = load_cases_for([kernel], self.task, seed=self.seed, overrides=self.overrides, cap=self.cap,
                                   timeout=self.timeout)
            self._cases[key] = [run for run in cases.cases if not run.error]
        return self._cases[key]

    def shapes(self, kernel: ir.Kernel) -> dict[str, int]:
        from .binding import bind

        runs = self._runs(kernel)
        return dict(bind(kernel, runs[0]).symbols) if runs else {}

    def evaluate(self, kernel: ir.Kernel, lowered: ir.Kernel, project, ctx) -> Evaluation:
        runs = self._runs(kernel)
        if not runs:
            return Evaluation(False, "no case of the task runs this kernel variant")
        first = None
        problems: list[str] = []
        for run in runs:
            try:
                res = validate_sim(kernel, lowered, project, ctx, run)
            except DslError as e:
                return Evaluation(False, "; ".join(f"error[{d.code}]: {d.message[:400]}" for d in e.diagnostics))
            first = first or res
            if not res.ok:
                label = f"{run.label}: " if len(runs) > 1 else ""
                # the emulator's own errors first: they name the cause (out of bounds, a race) of the mismatches
                problems += [f"{label}error[{e.code}]: {e.message}" + (f" (line {e.line})" if e.line else "")
                             for e in res.sim_errors]
                problems += [f"{label}{c.describe()}" for c in res.comparisons if not c.ok]
                if res.detail and not res.sim_errors:
                    problems.append(f"{label}{res.detail.strip()[:300]}")
        if problems:
            more = f"; and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
            return Evaluation(False, "; ".join(problems[:MAX_LISTED]) + more)
        est = first.report
        if est is None:
            return Evaluation(False, "the emulator reported no counters, so the cost model has nothing to estimate")
        slow = max(est.cores, key=lambda c: c.time_us)
        return Evaluation(True, "", est.time_us, {
            "time_us": est.time_us, "kernel_us": est.kernel_us, "bottleneck": est.bottleneck,
            "hbm_bound": est.hbm_bound, "pipes_us": dict(slow.pipes_us), "iterations": slow.iterations,
            "overlapped": slow.overlapped, "blocks": est.blocks, "ideal_fraction": est.ideal_fraction,
            "summary": est.summary()})
