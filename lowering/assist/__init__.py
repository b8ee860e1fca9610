"""LLM-assisted lowering decisions, every proposal checked (docs/design.md, "Assisted decisions").

`run(kernel, ctx)` applies the assisted decisions before the pipeline when `ctx.assistant` is set (the
schedule: lowering/assist/schedule.py); `with_provenance` writes their records into the manifest.
Without an assistant nothing here runs and the output is the rule-based one, byte for byte.
"""

from __future__ import annotations

import json
from dataclasses import replace

from ascend_dsl import ir

from ..context import PassContext
from . import schedule
from .api import AnswerKey, Assistant, AssistUnavailable, Evaluation, Evaluator, Model
from .cache import DecisionCache


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    return schedule.run(kernel, ctx)


def with_provenance(project, decisions: list[dict]):
    """The project with the assisted decisions' records in its manifest (`"assist": [...]`)."""
    if not decisions:
        return project
    manifest = {**project.manifest, "assist": decisions}
    files = {**project.files, "manifest.json": json.dumps(manifest, indent=2) + "\n"}
    return replace(project, manifest=manifest, files=files)


__all__ = ["AnswerKey", "Assistant", "AssistUnavailable", "DecisionCache", "Evaluation", "Evaluator", "Model", "run",
           "with_provenance"]
