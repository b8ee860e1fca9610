"""The generate-check-repair loop for one task and one sample.

Round 0 sends the prompt pack; each failed round appends the response and the located diagnostics
(parser/checker DslError text, interpreter or emulator mismatch summaries, emulator fault lines) and
asks again, up to `repair_rounds` times. Every attempt is logged. Reference inputs are fresh for
every trial of every attempt (distinct seeds).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from . import prompt
from .candidate import Outcome, evaluate
from .gen_grammar import GrammarSpec
from .providers import Provider, ProviderError, Request
from .tasks import Task


@dataclass(frozen=True)
class LoopConfig:
    repair_rounds: int = 2
    level: str = "sim"  # "interp" or "sim": the last check a kernel must pass
    trials: int = 2  # reference runs (fresh inputs) per attempt
    cap: int | None = None  # scale task sizes down to at most this many elements per input
    target: str = "ascend910b1"
    max_tokens: int = 1024
    temperature: float = 0.7
    top_p: float = 0.95
    seed: int = 0
    grammar: GrammarSpec | None = GrammarSpec()  # None: never send a grammar

    def settings(self) -> dict:
        """What changes results (the cache key)."""
        return {"repair_rounds": self.repair_rounds, "level": self.level, "trials": self.trials, "cap": self.cap,
                "target": self.target, "max_tokens": self.max_tokens, "temperature": self.temperature,
                "top_p": self.top_p, "seed": self.seed, "grammar": self.grammar is not None,
                "prompt": prompt.PROMPT_VERSION}


@dataclass
class SampleResult:
    task: str
    sample: int
    attempts: list[dict] = field(default_factory=list)
    final: Outcome | None = None
    error: str | None = None  # provider failure or broken task (not the model's fault)

    @property
    def passed(self) -> bool:
        return self.final is not None and self.final.passed


def trial_seeds(cfg: LoopConfig, rnd: int) -> list[int]:
    """Fresh inputs for every trial and every round. Samples of one task share them, so the reference
    runs (a subprocess each) are computed once per task and round."""
    base = cfg.seed + 1_009 * rnd
    return [base + i for i in range(cfg.trials)]


def run_sample(provider: Provider, task: Task, cfg: LoopConfig, sample: int,
               log: Callable[[dict], None] | None = None) -> SampleResult:
    result = SampleResult(task.id, sample)
    messages = prompt.initial_messages(task)
    grammar = cfg.grammar.text() if (cfg.grammar is not None and provider.supports_grammar) else None
    for rnd in range(cfg.repair_rounds + 1):
        req = Request(task.id, sample, rnd, grammar, seed=cfg.seed * 7919 + sample * 131 + rnd,
                      max_tokens=cfg.max_tokens, temperature=cfg.temperature, top_p=cfg.top_p)
        entry: dict = {"task": task.id, "sample": sample, "round": rnd, "prompt_version": prompt.PROMPT_VERSION,
                       "provider": provider.name, "model": provider.model, "time": time.time()}
        try:
            comp = provider.complete(messages, req)
        except ProviderError as e:
            entry.update(error=e.render())
            result.attempts.append(entry)
            result.error = e.render()
            if log:
                log(entry)
            break
        outcome = evaluate(comp.text, task, level=cfg.level, seeds=trial_seeds(cfg, rnd), cap=cfg.cap,
                           target=cfg.target)
        entry.update(response=comp.text, usage={"prompt_tokens": comp.prompt_tokens,
                                                "completion_tokens": comp.completion_tokens},
                     finish_reason=comp.finish_reason, constrained=comp.constrained,
                     generation_seconds=round(comp.seconds, 3), outcome=outcome.summary())
        result.attempts.append(entry)
        result.final = outcome
        if log:
            log(entry)
        if outcome.passed:
            break
        if outcome.failed_stage == "task":
            result.error = outcome.diagnostics
            break
        messages = messages + [{"role": "assistant", "content": comp.text},
                               {"role": "user", "content": prompt.repair_prompt(outcome.diagnostics)}]
    return result
