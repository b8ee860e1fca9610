"""Validate a kernel against every case of a task, each case on the dtype variant its data picked.

A get_inputs() task has one case; a get_input_groups() task one per group. The task worker picks a variant
per case (npu_harness.task_binding.pick_variant); each variant used is lowered once. A task passes when every
case passes. In a groups task a case the kernel cannot take (a binding error, a dtype that cannot be
converted) fails that case with its error, named by the case; the other cases still run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from ascend_dsl.dtypes import BY_NAME

from .binding import for_case
from .task import TaskCases, TaskRun
from .validate import ValidationResult, validate_interp, validate_sim


class KernelVariants:
    """The dtype variants of a kernel source that may run (all declared ones, or those matching --dtype), each
    instantiated (type-checked) up front and lowered on first use."""

    def __init__(self, source, explicit: dict[str, str], target: str, file_name: str,
                 dump: frozenset[str] = frozenset(), assistant=None, one_launch: bool = False):
        self.source, self.target, self.file_name, self.dump = source, target, file_name, dump
        # one_launch: an export or a device build takes a kernel of one launch, so no NC1HWC0 conv route
        # (lowering/passes/route_conv5hd.py) there
        self.one_launch = one_launch
        self.assistant = assistant  # lowering.assist.Assistant: assisted decisions (None: rule-based)
        self.explicit = bool(explicit)
        wanted = {k: BY_NAME.get(v, v) for k, v in explicit.items()}
        self.dtypes = [d for d in source.dtype_variants if all(d.get(k) == v for k, v in wanted.items())]
        if not self.dtypes:
            source.instantiate(explicit)  # raises the UNKNOWN-DTYPE error naming what is allowed
            self.dtypes = [dict(wanted)]
        self.kernels: list[ir.Kernel] = [source.instantiate(d) for d in self.dtypes]
        self._lowered: dict[int, tuple] = {}

    def label(self, i: int) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.kernels[i].type_args) or "-"

    def lower(self, i: int):
        """(lowered kernel, project, pass context) of variant i, lowered once."""
        if i not in self._lowered:
            from lowering import lower

            project, ctx = lower(self.kernels[i], self.target, self.file_name, self.dump, self.assistant,
                                 allow_conv5hd=not self.one_launch)
            self._lowered[i] = (ctx.lowered, project, ctx)
        return self._lowered[i]

    def is_lowered(self, i: int) -> bool:
        return i in self._lowered


@dataclass
class CaseOutcome:
    run: TaskRun
    variant: int
    result: ValidationResult | None = None
    error: DslError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.result is not None and self.result.ok


@dataclass
class CasesReport:
    level: str
    format: str
    outcomes: list[CaseOutcome] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return bool(self.outcomes) and all(o.ok for o in self.outcomes)

    @property
    def weaknesses(self) -> list[str]:
        """Why a passing case proves little (ValidationResult.weaknesses), each named by its case."""
        return [f"{o.run.label}: {w}" for o in self.outcomes if o.result is not None for w in o.result.weaknesses]

    def summary(self) -> str:
        if self.format != "groups" and len(self.outcomes) == 1 and self.outcomes[0].result is not None:
            return self.outcomes[0].result.summary()
        passed = sum(o.ok for o in self.outcomes)
        failed = [o.run.label for o in self.outcomes if not o.ok]
        what = f"{passed}/{len(self.outcomes)} cases pass" + (f"; failed: {', '.join(failed)}" if failed else "")
        weak = f" (weak: {'; '.join(self.weaknesses)})" if self.ok and self.weaknesses else ""
        return f"{self.level}: {'PASS' if self.ok else 'FAIL'}{weak} ({what}; {self.seconds:.2f} s)"


def validate_cases(variants: KernelVariants, cases: TaskCases, level: str) -> CasesReport:
    """Every case at `level` ("interp", "sim" or "acl"). A standard task's DslError propagates (the user's mistake is the
    whole run's); a groups task's is that case's failure."""
    start = time.perf_counter()
    report = CasesReport(level, cases.format)
    for run in cases.cases:
        v = run.variant or 0
        outcome = CaseOutcome(run, v)
        report.outcomes.append(outcome)
        try:
            if run.error:
                raise DslError.at(run.error["code"], run.error["message"], variants.kernels[v].span)
            kernel = variants.kernels[v]
            if level == "interp":
                outcome.result = validate_interp(kernel, run)
            elif level == "acl":  # the emitted host program on the emulator's ACL runtime
                from .device.host_program import validate_host

                _, project, ctx = variants.lower(v)
                outcome.result = validate_host(kernel, project, ctx, run)
            else:
                lowered, project, ctx = variants.lower(v)
                outcome.result = validate_sim(kernel, lowered, project, ctx, run)
        except DslError as e:
            if cases.format != "groups":
                raise
            outcome.error = for_case(e, run.label)
    report.seconds = time.perf_counter() - start
    return report
