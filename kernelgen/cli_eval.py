"""`ascend-eval`: generate and judge kernels for a folder of task files; per-category and overall
parse/check/lowering/correctness rates, unbiased pass@k and fast_p, as JSON, Markdown and a PNG chart.

Exit codes: 0 the evaluation ran and its report was written (failing kernels are results, not
errors), 2 bad input (no task files, bad arguments, provider unusable, Ray missing for --executor ray).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ascend_dsl.diagnostics import DslError

from . import prompt, report
from .cache import ResultCache
from .cli_common import (
    EXIT_OK,
    EXIT_USAGE,
    add_loop_args,
    add_provider_args,
    check_level,
    loop_config,
    provider_config,
    quiet_libraries,
)
from .dataset import add_split_args, describe, export, split_rule
from .evaluate import EXECUTORS, ExecutorError, run_all, units_for
from .providers import ProviderError, make_provider, model_id
from .tasks import discover


def _ints(text: str) -> list[int]:
    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got '{text}'") from None
    if not vals or min(vals) < 1:
        raise argparse.ArgumentTypeError("k values must be >= 1")
    return vals


def _floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got '{text}'") from None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ascend-eval", description="Evaluate LLM kernel generation on task files.")
    p.add_argument("tasks", type=Path, help="a task file, or a folder tree whose folder names are categories")
    p.add_argument("--category", action="append", default=[], help="only these categories (repeatable)")
    p.add_argument("--samples", "-n", type=int, default=1, help="samples per task (default 1)")
    p.add_argument("-k", type=_ints, default=[1], help="pass@k values, comma-separated (default 1)")
    p.add_argument("--fast-p", type=_floats, default=[1.0], help="fast_p thresholds (default 1.0)")
    p.add_argument("--baseline", type=Path, help="JSON {task id or name: baseline kernel time in us} for fast_p")
    p.add_argument("-o", "--out", type=Path, default=Path("build/kernelgen-eval"), help="report directory")
    p.add_argument("--cache", type=Path, help="result cache directory (default: OUT/cache)")
    p.add_argument("--no-cache", action="store_true", help="rerun every unit")
    p.add_argument("--workers", type=int, default=1, help="local worker processes (default 1)")
    p.add_argument("--executor", choices=EXECUTORS, default="local", help="local (default) or ray "
                   "(RAY_ADDRESS selects a cluster; default: a local Ray instance)")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--export-dataset", type=Path, metavar="DIR",
                   help="also write the attempts as training data (a Hugging Face datasets folder; docs/kernelgen.md)")
    add_split_args(p)
    add_provider_args(p)
    add_loop_args(p, repair_default=0)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    quiet_libraries()
    try:
        return _run(args)
    except (DslError, ProviderError) as e:
        print(e.render(), file=sys.stderr)
        return EXIT_USAGE
    except ExecutorError as e:
        print(f"error[EXECUTOR]: {e}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as e:
        print(f"error[ARGS]: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted; finished units are cached, rerun the same command to resume", file=sys.stderr)
        return 130


def _run(args) -> int:
    missing = check_level(args.level)
    if missing:
        print(missing, file=sys.stderr)
        return EXIT_USAGE
    split = split_rule(args)  # bad --eval-fraction: an error before any work
    tasks = discover(args.tasks, set(args.category) or None)
    if not tasks:
        raise DslError.at("TASK-ERROR", f"no task files under {args.tasks}"
                          + (f" in categories {', '.join(args.category)}" if args.category else ""), None)
    if args.samples < 1 or args.workers < 1:
        raise ValueError("--samples and --workers must be >= 1")
    if args.executor == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise ExecutorError("--executor ray needs Ray: pip install ray (or use --workers N)") from None
    baselines = None
    if args.baseline:
        try:
            baselines = {str(k): float(v) for k, v in json.loads(args.baseline.read_text()).items()}
        except (OSError, ValueError, AttributeError) as e:
            raise ValueError(f"--baseline {args.baseline}: {e}") from None
    pcfg = provider_config(args)
    lcfg = loop_config(args)
    provider = make_provider(pcfg) if (args.executor == "local" and args.workers == 1) else None
    cache = ResultCache(None if args.no_cache else (args.cache or args.out / "cache"))
    units = units_for(tasks, args.samples, pcfg, lcfg)
    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        bar = tqdm(total=len(units), desc="ascend-eval", unit="sample", file=sys.stderr)

    def done(rec: dict) -> None:
        if bar is not None:
            bar.update(1)
            bar.set_postfix_str(f"{rec['task']}#{rec['sample']} {'PASS' if rec['passed'] else 'fail'}")

    records = run_all(units, pcfg, lcfg, cache, workers=args.workers, executor=args.executor, on_done=done,
                      provider=provider)
    if bar is not None:
        bar.close()
    meta = {"provider": pcfg.name, "model": model_id(pcfg), "prompt_version": prompt.PROMPT_VERSION,
            "samples": args.samples, "k": args.k, "constrained": pcfg.grammar and (pcfg.name == "transformers"
                                                           or (pcfg.name == "openai" and pcfg.grammar_mode != "none")),
            "baseline": str(args.baseline) if args.baseline else None, "tasks_root": str(args.tasks),
            **lcfg.settings()}
    rep = report.build_report(records, args.k, args.fast_p, lcfg.level, meta, baselines)
    paths = report.write(rep, args.out)
    print(report.markdown(rep))
    print("wrote " + ", ".join(str(p) for p in paths))
    if args.export_dataset:
        info = export(records, tasks, args.export_dataset, split=split, target=lcfg.target,
                      meta={"source": "ascend-eval", **meta})
        print(f"wrote dataset {args.export_dataset}: {describe(info)}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
