"""The prompt pack: the language reference (a shipped copy of docs/language.md, the page users read;
tests assert the copy is identical), the gallery examples most relevant to the task (operations and kernel
kind in common, from any category: kernelgen.prompt.relevance), the task, and what a kernel binds to in it
(forward()'s tensors, the Model's parameters and buffers with their shapes, the scalars by name), found by
running the task on PyTorch's meta device.

PROMPT_VERSION names the pack; it is recorded with every attempt and is part of the result cache key,
so changing the prompt text means bumping it.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..tasks import Task

PROMPT_VERSION = "kernelgen-prompt-2"
MAX_EXAMPLES = 3

SYSTEM_INTRO = """You write kernels for Huawei Ascend NPUs in ascend-dsl, a small Python-shaped language.
The compiler lowers your kernel to AscendC and checks it against a PyTorch reference. Your text is
parsed, never executed: it cannot import or call PyTorch, NumPy or the reference model; write the
computation with the DSL's own operations only. The whole language reference follows."""

INSTRUCTION = """Write one ascend-dsl kernel that computes the same result as `Model.forward` above.
- Inputs are the tensors `forward()` takes, in order, then every parameter and buffer of the Model listed
  above, named as listed; outputs are what it returns, in order.
- A number argument of forward() or an attribute of the Model or a submodule (e.g. `self.alpha`,
  `self.pool.stride`) becomes a scalar parameter with the name listed above.
- Layout: `from ascend_dsl import kernel, Tensor, f32, f16`, then `@kernel`, the `def` at column 0,
  `for ... in split(...)` indented 4 spaces, `for ... in tile(...)` 8, statements 12.
Answer with a single ```python code block and nothing else."""


def language_reference() -> str:
    return resources.files("kernelgen.prompt").joinpath("language.md").read_text()


@dataclass(frozen=True)
class Example:
    category: str
    name: str
    dsl: str
    task: str


def gallery_examples(category: str, *, exclude: Path | None = None, limit: int = MAX_EXAMPLES,
                     task_source: str | None = None) -> list[Example]:
    """Up to `limit` gallery kernels: the most relevant to `task_source` from any category (relevance.rank), or
    without it those of `category` (else of the first gallery category). Never the example whose task file is
    `exclude` or has its name (no leaking the answer when evaluating on the gallery's own tasks)."""
    from npu_harness.gallery import ROOT, discover

    from .relevance import rank

    if not ROOT.is_dir():
        return []
    examples = discover(ROOT)
    excluded = {exclude.resolve(), } if exclude else set()
    names = {exclude.stem} if exclude else set()

    def usable(ex) -> bool:
        return ex.task.is_file() and ex.task.resolve() not in excluded and ex.name not in names

    pool = [Example(ex.category, ex.name, ex.adsl.read_text(), ex.task.read_text()) for ex in examples if usable(ex)]
    if task_source is not None:
        return rank(task_source, pool, category=category, limit=limit)
    chosen = [ex for ex in pool if ex.category == category]
    if not chosen and pool:
        chosen = [ex for ex in pool if ex.category == pool[0].category]
    return chosen[:limit]


def system_prompt(task: Task, examples: list[Example] | None = None) -> str:
    exs = gallery_examples(task.category, exclude=task.path, task_source=task.source) if examples is None else examples
    parts = [SYSTEM_INTRO, "", language_reference().strip(), ""]
    if exs:
        parts.append("# Examples (the gallery kernels closest to the task)")
        for ex in exs:
            parts += ["", f"## {ex.category}/{ex.name}: PyTorch task", "```python", ex.task.strip(), "```",
                      f"## {ex.category}/{ex.name}: ascend-dsl kernel", "```python", ex.dsl.strip(), "```"]
    return "\n".join(parts) + "\n"


def user_prompt(task: Task, bindings: str | None = None) -> str:
    facts = ["", bindings.strip()] if bindings else []
    return "\n".join([f"# Task {task.id}", "```python", task.source.strip(), "```", *facts, "", INSTRUCTION])


def repair_prompt(diagnostics: str) -> str:
    return ("Your kernel was rejected:\n\n" + diagnostics.strip() + "\n\nFix every error and answer again with the "
            "complete corrected kernel in a single ```python code block and nothing else.")


def initial_messages(task: Task) -> list[dict[str, str]]:
    from .bindings import task_bindings

    return [{"role": "system", "content": system_prompt(task)},
            {"role": "user", "content": user_prompt(task, task_bindings(task))}]


def render(messages: list[dict[str, str]]) -> str:
    """Human-readable form of a conversation (`ascend-gen --show-prompt`)."""
    out = [f"# prompt {PROMPT_VERSION}"]
    for m in messages:
        out += ["", f"===== {m['role']} =====", m["content"].rstrip()]
    return "\n".join(out) + "\n"
