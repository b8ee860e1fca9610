"""The assisted schedule decision: a model proposes knob settings (lowering/assist/knobs.py), each is
checked, and the rule-based schedule is replaced only by one the cost model estimates faster.

Runs on the checked kernel before the pipeline (`lowering.lower` calls it when an assistant is given),
because judging a proposal needs the whole pipeline: per round

    answer --json--> a JSON object --menu--> knob settings on the menu --constraints--> the kernel with
    them applied, lowered by the unchanged rule-based pipeline (every constraint check fires as on a
    user's kernel) --emulator--> run at the task's shapes against the PyTorch reference, all checks on
    --faster--> the cost model's estimate below the best so far

A failed check ends the round with its reason, which the next prompt shows the model. After the rounds
the best schedule wins (the rule-based one if nothing was faster); the decision and its provenance
(model, prompt hashes, proposals, checks passed, estimates) go into the manifest and, once the model
has answered every round or said it is done, into the decision cache, so a rebuild needs no model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from ascend_dsl import ir, printer
from ascend_dsl.diagnostics import DslError

from ..context import PassContext
from ..pipeline import run_pipeline
from . import knobs as K
from . import proposal as P
from .api import AnswerKey, Assistant, Evaluation, ask
from .prompt import Attempt, prompt_hash, render
from .slots import inject

DECISION = "schedule"
#: A proposal must beat the best estimate by this fraction (the cost model is deterministic; this keeps
#: tail-rounding differences from counting as wins).
MIN_GAIN = 1e-3
#: The checks a proposal passes in order ("change": it differs from the best settings so far).
CHECKS = ("json", "menu", "change", "constraints", "emulator", "faster")


@dataclass
class Candidate:
    settings: dict
    kernel: ir.Kernel
    lowered: ir.Kernel
    project: object
    ctx: PassContext
    evaluation: Evaluation | None = None


def lower_candidate(kernel: ir.Kernel, ctx: PassContext, settings: dict) -> Candidate:
    """Lower `kernel` by the rule-based pipeline; raises DslError when a constraint check fails."""
    c = PassContext(ctx.target, ctx.source_name)
    c.slots = dict(ctx.slots)  # the extern ops' compute stages (lowering/assist/construct.py)
    lowered = run_pipeline(kernel, c, frozenset({"schedule_stages"}))
    c.project = inject(c.project, list(c.slots.values()))
    return Candidate(settings, kernel, lowered, c.project, c)


def _files_key(project) -> tuple:
    return tuple(sorted(project.files.items()))


def run(kernel: ir.Kernel, ctx: PassContext) -> ir.Kernel:
    """The kernel with the schedule the assistant chose (or the cached one); `kernel` unchanged when none."""
    a: Assistant | None = ctx.assistant
    if a is None:
        return kernel
    target = ctx.target.name
    if a.cache is not None and not a.refresh:
        record = a.cache.get(kernel, target, DECISION)
        if record is not None:
            return _from_cache(kernel, ctx, record)
    if a.model is None:
        a.notes.append(f"{kernel.name}: no cached schedule decision for {target}; the rule-based schedule stays")
        return kernel
    return _decide(kernel, ctx, a)


def _from_cache(kernel: ir.Kernel, ctx: PassContext, record: dict) -> ir.Kernel:
    a: Assistant = ctx.assistant
    settings = record.get("knobs", {})
    try:
        base = lower_candidate(kernel, ctx, {})
        menu = _menu(kernel, base, ctx, a)
        checked = P.parse(json.dumps({"knobs": settings}), menu).settings
        chosen = K.apply(kernel, menu, checked)
    except (DslError, P.ProposalError, K.ApplyError) as e:
        a.notes.append(f"{kernel.name}: the cached schedule decision no longer applies ({e}); decide again with "
                       "--assist-refresh; the rule-based schedule stays")
        return kernel
    ctx.decisions.append(record)
    a.notes.append(f"{kernel.name}: schedule from the decision cache ({_describe(settings)}; estimated "
                   f"{record.get('estimate_before_us')} -> {record.get('estimate_after_us')} us); no model consulted")
    return chosen


def _menu(kernel: ir.Kernel, base: Candidate, ctx: PassContext, a: Assistant) -> tuple[K.Knob, ...]:
    return tuple(k for k in K.menu(kernel, base.lowered, ctx.target, ctx.source_name) if k.kind not in a.exclude)


def _describe(settings: dict) -> str:
    return ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in settings.items()) or "rule-based"


def _evaluate(a: Assistant, c: Candidate, seen: dict) -> Evaluation:
    files = _files_key(c.project)
    if files not in seen:
        try:
            seen[files] = a.evaluator.evaluate(c.kernel, c.lowered, c.project, c.ctx)
        except DslError as e:
            seen[files] = Evaluation(False, K.describe(e))
    return seen[files]


def _decide(kernel: ir.Kernel, ctx: PassContext, a: Assistant) -> ir.Kernel:
    try:
        base = lower_candidate(kernel, ctx, {})
    except DslError:
        return kernel  # the rule-based lowering fails: the pipeline reports it
    seen: dict = {}
    base.evaluation = _evaluate(a, base, seen)
    if not base.evaluation.ok or base.evaluation.time_us is None:
        a.notes.append(f"{kernel.name}: the rule-based lowering does not validate in the emulator "
                       f"({base.evaluation.reason[:300]}); no schedule is proposed")
        return kernel
    menu = _menu(kernel, base, ctx, a)
    schema, grammar = P.schema(menu), P.grammar(menu)
    shapes = a.evaluator.shapes(kernel)
    best = base
    attempts: list[Attempt] = []
    entries: list[dict] = []
    complete = True
    for rnd in range(a.rounds):
        text = render(printer.kernel(replace(best.kernel, kind=None)), best.ctx.dumps["schedule_stages"],
                      best.evaluation.estimate, shapes, ctx.target, schema, best.settings, attempts)
        key = AnswerKey(kernel.name, DECISION, rnd)
        answer = ask(a, key, text, grammar, kernel.name, f"{key.stem}.json")
        if answer is None:
            complete = False
            break
        entry, verdict, cand, stop = _judge(answer, kernel, ctx, a, menu, best, seen)
        entry = {"round": rnd, "prompt_sha256": prompt_hash(text), **entry}
        entries.append(entry)
        if stop:
            break
        attempts.append(Attempt(rnd, answer, verdict))
        if cand is not None:
            best = cand
    record = {
        "decision": DECISION, "model": a.model.name, "target": ctx.target.name, "shapes": shapes,
        "estimate_before_us": round(base.evaluation.time_us, 4), "estimate_after_us": round(best.evaluation.time_us, 4),
        "knobs": best.settings, "proposals": entries,
    }
    ctx.decisions.append(record)
    gain = base.evaluation.time_us / best.evaluation.time_us
    a.notes.append(f"{kernel.name}: schedule {_describe(best.settings)} after {len(entries)} proposal(s) from "
                   f"{a.model.name}; estimated {base.evaluation.time_us:.3f} -> {best.evaluation.time_us:.3f} us "
                   f"({gain:.3f}x)")
    if complete and a.cache is not None:
        a.cache.put(kernel, ctx.target.name, DECISION, record)
    return best.kernel


def _judge(answer: str, kernel: ir.Kernel, ctx: PassContext, a: Assistant, menu, best: Candidate,
           seen: dict) -> tuple[dict, str, Candidate | None, bool]:
    """(manifest entry, verdict for the next prompt, the accepted candidate or None, the model said stop)."""
    passed: list[str] = []

    def reject(check: str, reason: str, fields: dict | None = None):
        entry = {**(fields or {"proposal": answer.strip()[:500]}), "checks": list(passed), "verdict": "rejected",
                 "failed": check, "reason": reason}
        return entry, f"rejected ({check}): {reason}", None, False

    try:
        prop = P.parse(answer, menu)
    except P.ProposalError as e:
        if e.check == "menu":
            passed.append("json")
        return reject(e.check, e.reason)
    passed += ["json", "menu"]
    shown = {"proposal": {"knobs": prop.settings, "why": prop.why}}
    if not prop.settings:
        return {**shown, "checks": passed, "verdict": "stop"}, "stop", None, True
    by_key = {k.key: k for k in menu}
    merged = {k: v for k, v in {**best.settings, **prop.settings}.items() if v != by_key[k].current}
    if merged == best.settings:
        return reject("change", "it equals the current settings (answer {\"knobs\": {}} to stop)", shown)
    passed.append("change")
    try:
        cand = lower_candidate(K.apply(kernel, menu, merged), ctx, merged)
    except K.ApplyError as e:
        return reject("constraints", str(e), shown)
    except DslError as e:
        return reject("constraints", K.describe(e), shown)
    passed.append("constraints")
    cand.evaluation = ev = _evaluate(a, cand, seen)
    if not ev.ok or ev.time_us is None:
        return reject("emulator", ev.reason or "no estimate", shown)
    passed.append("emulator")
    extra = {**shown, "estimate_us": round(ev.time_us, 4)}
    before = best.evaluation.time_us
    if ev.time_us > before * (1 - MIN_GAIN):
        bottleneck = ev.estimate.get("bottleneck", "?")
        return reject("faster", f"estimated {ev.time_us:.3f} us, not faster than the best so far ({before:.3f} us); "
                      f"bottleneck {bottleneck}", extra)
    passed.append("faster")
    entry = {**extra, "checks": passed, "verdict": "accepted"}
    return entry, f"accepted: estimated {before:.3f} -> {ev.time_us:.3f} us", cand, False
