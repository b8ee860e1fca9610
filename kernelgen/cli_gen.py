"""`ascend-gen`: an LLM writes an ascend-dsl kernel for a PyTorch task file, checked and repaired
until it passes (or the budget runs out).

Exit codes: 0 a kernel passed (written to -o DIR), 1 no sample passed, 2 bad input (missing or
malformed task file, unusable provider settings).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ascend_dsl.diagnostics import DslError
from npu_harness.project_io import write_project

from . import prompt
from .cli_common import (
    EXIT_FAIL,
    EXIT_OK,
    EXIT_USAGE,
    add_loop_args,
    add_provider_args,
    check_level,
    loop_config,
    provider_config,
    quiet_libraries,
)
from .gen_grammar import GrammarSpec
from .loop import run_sample
from .providers import ProviderError, make_provider
from .tasks import load_task


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ascend-gen", description="Generate an ascend-dsl kernel for a PyTorch task.")
    p.add_argument("task", type=Path, help="KernelBench/MultiKernelBench task file (Model, get_inputs, ...)")
    p.add_argument("--samples", type=int, default=1, help="independent samples; stops at the first that passes")
    p.add_argument("-o", "--out", type=Path, help="output directory (default: build/kernelgen/<task>)")
    p.add_argument("--show-prompt", action="store_true", help="print the prompt and exit")
    p.add_argument("--show-grammar", action="store_true", help="print the generation grammar and exit")
    add_provider_args(p)
    add_loop_args(p, repair_default=2)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    quiet_libraries()
    try:
        return _run(args)
    except (DslError, ProviderError) as e:
        print(e.render(), file=sys.stderr)
        return EXIT_USAGE
    except ValueError as e:
        print(f"error[ARGS]: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


def _run(args) -> int:
    if args.show_grammar:
        print(GrammarSpec().text(), end="")
        return EXIT_OK
    task = load_task(args.task)
    if args.show_prompt:
        print(prompt.render(prompt.initial_messages(task)), end="")
        return EXIT_OK
    missing = check_level(args.level)
    if missing:
        print(missing, file=sys.stderr)
        return EXIT_USAGE
    cfg = loop_config(args)
    if args.samples < 1:
        raise ValueError("--samples must be >= 1")
    provider = make_provider(provider_config(args))
    out = args.out or Path("build/kernelgen") / task.name
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / "attempts.jsonl"
    with log_path.open("w") as log:
        def record(entry: dict) -> None:
            log.write(json.dumps(entry) + "\n")
            log.flush()
            o = entry.get("outcome") or {}
            status = ("PASS" if o.get("passed") else f"{o.get('failed_stage')} FAIL ({', '.join(o.get('codes', []))})"
                      ) if o else entry.get("error", "")
            print(f"sample {entry['sample']} round {entry['round']}: {status}", file=sys.stderr)

        for s in range(args.samples):
            res = run_sample(provider, task, cfg, s, record)
            if res.passed and res.final is not None:
                final = res.final
                (out / f"{task.name}.adsl").write_text(final.code or "")
                if final.files:
                    write_project(out / "ascendc", final.files)
                print(f"PASS ({cfg.level}): {task.id} on sample {s}, round {len(res.attempts) - 1}; wrote "
                      f"{out / (task.name + '.adsl')}, {out / 'ascendc'}/ and {log_path}")
                return EXIT_OK
            if res.error and "TASK" in res.error:
                print(res.error, file=sys.stderr)
                return EXIT_USAGE
    print(f"FAIL: no kernel for {task.id} passed {cfg.level} in {args.samples} sample(s) x "
          f"{cfg.repair_rounds + 1} round(s); attempts in {log_path}")
    return EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
