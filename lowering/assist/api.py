"""What an assisted lowering step is given (dependency injection: `lowering` never imports an LLM client
or the emulator): a model that answers prompts, an evaluator that validates a lowered candidate against
the reference and estimates its time, a decision cache and the number of rounds.

The implementations live above this layer: the model adapters in `kernelgen/assist_models.py` (the
providers of `ascend-gen`) and `npu_harness/assist_files.py` (the file mode), the evaluator in
`npu_harness/assist_eval.py` (emulator + cost model).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ascend_dsl import ir


@dataclass(frozen=True)
class AnswerKey:
    """Which question a prompt asks: replay records and answer files are looked up by it."""

    kernel: str
    decision: str
    round: int

    @property
    def stem(self) -> str:
        """File name stem of the prompt and answer files: `relu.schedule.r0`."""
        return f"{self.kernel}.{self.decision}.r{self.round}"


class Model(Protocol):
    #: the model's name as recorded in the manifest (provider:model)
    name: str

    def answer(self, prompt: str, key: AnswerKey, grammar: str | None) -> str | None:
        """The model's answer text, or None when none is available yet (file mode: no answer file).
        Raises AssistUnavailable when the model cannot be reached."""
        ...


class AssistUnavailable(Exception):
    """The model could not answer (provider error, missing replay record): the step keeps the rule-based
    decision and says why."""


@dataclass(frozen=True)
class Evaluation:
    """The emulator's verdict on one lowered candidate, and the cost model's estimate of it (an ESTIMATE).

    `reason` says why a candidate failed (mismatches, emulator faults); `estimate` is the cost model's
    breakdown as plain data (time_us, kernel_us, bottleneck, pipes_us of the slowest core, iterations,
    overlapped, blocks, ideal_fraction, summary)."""

    ok: bool
    reason: str = ""
    time_us: float | None = None
    estimate: dict = field(default_factory=dict)


class SlotEvaluator(Protocol):
    def evaluate(self, op: Any, dtype: Any, definition: str) -> Evaluation:
        """Compile the slot definition (C++) of extern op `op` into a check kernel and run it sandboxed in the
        emulator, every check on, against the op's PyTorch reference on random tiles and edge values."""
        ...

    def max_tile(self, op: Any, dtype: Any) -> int:
        """The longest tile the check kernel runs (the prompt states it)."""
        ...


class Evaluator(Protocol):
    def evaluate(self, kernel: ir.Kernel, lowered: ir.Kernel, project: Any, ctx: Any) -> Evaluation:
        """Validate `project` (lowered from `kernel`) in the emulator against the reference at the task's
        shapes and estimate its time."""
        ...

    def shapes(self, kernel: ir.Kernel) -> dict[str, int]:
        """The shapes the candidates of `kernel` run at (after the first evaluate)."""
        ...


@dataclass
class Assistant:
    """The services of the assisted steps, handed to `lowering.lower(..., assistant=...)`.

    `model` None: only cached decisions and the library are used (`--assist cache`). `cache` / `library`
    None: decisions / accepted code are not stored. `prompt_dir`: every prompt is also written there.
    `notes`: what the steps did, for the command line to print."""

    model: Model | None
    evaluator: Evaluator | None
    rounds: int = 3
    cache: Any = None  # lowering.assist.cache.DecisionCache
    library: Any = None  # lowering.assist.library.SlotLibrary
    slot_evaluator: SlotEvaluator | None = None
    prompt_dir: Path | None = None
    refresh: bool = False  # ignore cached decisions (decide again, then overwrite the cache)
    notes: list[str] = field(default_factory=list)
    #: knob kinds left off the menu (lowering/assist/knobs.py: "chunk", "cores", ...): an ablation, e.g. the
    #: comparison benchmark's menu before a knob existed; a proposal naming one is an unknown knob
    exclude: frozenset[str] = frozenset()


def ask(a: Assistant, key: AnswerKey, text: str, grammar: str | None, who: str, answer_file: str) -> str | None:
    """Round `key.round` of a decision: the prompt written to `a.prompt_dir` (file mode), then the model's
    answer. None when there is none (the model failed, or file mode has no `answer_file` yet); a note says
    which, and the caller keeps its best so far and caches nothing."""
    if a.prompt_dir is not None:
        a.prompt_dir.mkdir(parents=True, exist_ok=True)
        (a.prompt_dir / f"{key.stem}.prompt.md").write_text(text)
    try:
        answer = a.model.answer(text, key, grammar)
    except AssistUnavailable as e:
        a.notes.append(f"{who}: the model did not answer round {key.round} ({e}); keeping the best so far")
        return None
    if answer is None:
        a.notes.append(f"{who}: waiting for the answer to round {key.round} ({answer_file}); the best so far is "
                       "used and nothing is cached")
    return answer
