"""LLM-assisted lowering decisions, every proposal checked (docs/design.md, "Assisted decisions").

`run(kernel, ctx)` takes the assisted decisions before the pipeline when `ctx.assistant` is set: the
compute stages of extern ops (lowering/assist/construct.py), then the schedule (lowering/assist/schedule.py).
`require` makes an extern op without checked code a located error; `finish` adds the compute stages to the
kernel file and the decisions' records to the manifest. Without an assistant and without extern ops
nothing here changes the output: it is the rule-based one, byte for byte.
"""

from __future__ import annotations

import json
from dataclasses import replace

from ascend_dsl import ir

from ..context import PassContext
from . import construct, schedule
from .api import AnswerKey, Assistant, AssistUnavailable, Evaluation, Evaluator, Model, SlotEvaluator
from .cache import DecisionCache
from .library import SlotLibrary
from .slots import inject


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    construct.run(kernel, ctx)
    return schedule.run(kernel, ctx)


def require(kernel: ir.Kernel, ctx: PassContext) -> None:
    construct.require(kernel, ctx)


def finish(project, ctx: PassContext):
    """The emitted project with the extern ops' compute stages and the decisions' provenance."""
    return with_provenance(inject(project, list(ctx.slots.values())), ctx.decisions)


def with_provenance(project, decisions: list[dict]):
    """The project with the assisted decisions' records in its manifest (`"assist": [...]`)."""
    if not decisions:
        return project
    manifest = {**project.manifest, "assist": decisions}
    files = {**project.files, "manifest.json": json.dumps(manifest, indent=2) + "\n"}
    return replace(project, manifest=manifest, files=files)


__all__ = ["AnswerKey", "Assistant", "AssistUnavailable", "DecisionCache", "Evaluation", "Evaluator", "Model",
           "SlotEvaluator", "SlotLibrary", "finish", "require", "run", "with_provenance"]
