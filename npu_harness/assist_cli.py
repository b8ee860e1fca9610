"""`ascend-lower --assist ...`: the options of assisted lowering and the assistant they describe.

`--assist off` (the default) is the rule-based lowering, byte for byte. `cache` applies cached decisions
only (never a model). `files` is the file mode (`--assist-prompt DIR` writes each prompt, `--assist-answers
DIR` reads the answers). `openai`, `transformers` and `replay` are the providers of `ascend-gen`; their
models come from the `ascend-lower` command (kernelgen/cli_lower.py), which passes `models` here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from ascend_dsl.diagnostics import DslError
from lowering.assist import Assistant, DecisionCache, SlotLibrary

MODES = ("off", "cache", "files", "openai", "transformers", "replay")
PROVIDERS = ("openai", "transformers", "replay")


def add_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("assisted lowering (docs/design.md, \"Assisted decisions\")")
    g.add_argument("--assist", choices=MODES, default=None,
                   help="consult a model on the schedule; every proposal is checked (constraints, emulator against "
                   "the task's reference, cost model) and kept only if faster. off (default): rule-based; cache: "
                   "cached decisions only; files: --assist-prompt/--assist-answers; openai|transformers|replay: "
                   "the providers of ascend-gen")
    g.add_argument("--assist-prompt", type=Path, metavar="DIR", help="write each prompt to DIR (file mode)")
    g.add_argument("--assist-answers", type=Path, metavar="DIR",
                   help="read each answer from DIR/<kernel>.<decision>.r<round>.json (file mode)")
    g.add_argument("--assist-rounds", type=int, default=3, metavar="N", help="proposals per decision (default 3)")
    g.add_argument("--assist-cache", type=Path, metavar="DIR",
                   help="decision cache (default $ASCEND_DSL_CACHE/assist or ~/.cache/ascend-dsl/assist)")
    g.add_argument("--assist-refresh", action="store_true", help="decide again, ignoring (then replacing) the cache")


def mode(args) -> str:
    if args.assist is not None:
        return args.assist
    return "files" if (args.assist_prompt or args.assist_answers) else "off"


def make_assistant(args, task: Path, overrides: dict, models: Callable | None) -> Assistant | None:
    """The assistant the options describe (None: --assist off). `models(args)` builds a provider's model."""
    m = mode(args)
    if m == "off":
        return None
    if args.assist_rounds < 1:
        raise DslError.at("ARGS", "--assist-rounds must be at least 1", None)
    model = None
    if m == "files":
        from .assist_files import FileModel

        model = FileModel(args.assist_answers)
    elif m in PROVIDERS:
        if models is None:
            raise DslError.at("ARGS", f"--assist {m} needs the ascend-lower command (the providers live in kernelgen)",
                              None, "run `ascend-lower`, not `python -m npu_harness.cli`")
        model = models(args)
    evaluator = slot_checker = None
    if model is not None:
        from .assist_slots import SlotChecker

        slot_checker = SlotChecker(args.target, seed=args.seed, timeout=args.task_timeout)
        if not task.is_file():
            raise DslError.at("IO", f"--assist {m} needs the kernel's PyTorch reference to check proposals: no task "
                              f"file {task}", None, "pass --task TASK.py (or put X.py next to X.adsl)")
        from .assist_eval import SimEvaluator

        evaluator = SimEvaluator(task, seed=args.seed, overrides=overrides, cap=args.cap, timeout=args.task_timeout)
    library = SlotLibrary(args.assist_cache / "slots" if args.assist_cache else None)
    return Assistant(model, evaluator, rounds=args.assist_rounds, cache=DecisionCache(args.assist_cache),
                     library=library, slot_evaluator=slot_checker, prompt_dir=args.assist_prompt,
                     refresh=args.assist_refresh)


def print_notes(assistant: Assistant | None) -> None:
    if assistant is None:
        return
    for note in assistant.notes:
        print(f"assist: {note}")
    if assistant.prompt_dir is not None and assistant.notes:
        print(f"assist: prompts in {assistant.prompt_dir}/", file=sys.stdout)
    assistant.notes.clear()
