"""Training data from the gallery, without a model: every gallery kernel as a correct answer, and plausible
wrong versions of it (kernelgen.mutants) repaired by the loop into error-derived pairs.

    python -m kernelgen.gallery_data [examples] -o build/kernelgen-data [--mutants 5] [--category C ...]
        [--eval-fraction 0.2 | --eval-tasks relu,softmax] [--workers N] [--level sim] [--trials 1] [--cap N]

It runs the ordinary loop (kernelgen.loop through kernelgen.evaluate: the same checks, emulator runs, result
cache and worker pool as ascend-eval) with recorded answers and no repair rounds: for each task with a
gallery kernel, sample 0 answers the kernel and sample i >= 1 answers mutant i. The records go to
kernelgen.dataset.export, the same export as `ascend-eval --export-dataset`, which pairs every failing
mutant, with the tool's diagnostic, with the kernel that passed in sample 0 (repair rows of origin
"other-sample"); each kernel is judged once. Task sizes are scaled to at most --cap elements per input
(default 262144) so the emulator runs stay short.

Exit codes: 0 the dataset was written, 2 bad input (no gallery tasks, bad arguments).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ascend_dsl.diagnostics import DslError

from .cache import ResultCache, unit_key
from .dataset import add_split_args, describe, export, split_rule
from .evaluate import EXECUTORS, ExecutorError, Unit, run_all
from .loop import LoopConfig
from .mutants import OPERATORS, mutants
from .providers import ProviderConfig, model_id
from .tasks import Task, discover

DEFAULT_CAP = 262144


def fenced(code: str) -> str:
    return f"```python\n{code.strip()}\n```\n"


def replay_records(tasks: list[Task], n_mutants: int) -> tuple[list[dict], dict, dict[str, int]]:
    """Replay records (kernelgen.providers.replay), the origin of every (task, sample, round), and the number
    of samples per task."""
    records, origins, samples = [], {}, {}
    for t in tasks:
        kernel = t.path.with_suffix(".adsl").read_text()
        records.append({"task": t.id, "sample": 0, "text": fenced(kernel)})
        origins[(t.id, 0, 0)] = "gallery"
        muts = mutants(kernel, n_mutants)
        for i, (op, text) in enumerate(muts, start=1):
            records.append({"task": t.id, "sample": i, "text": fenced(text)})
            origins[(t.id, i, 0)] = f"gallery-mutant:{op}"
        samples[t.id] = 1 + len(muts)
    return records, origins, samples


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m kernelgen.gallery_data", description=__doc__.splitlines()[0])
    p.add_argument("root", type=Path, nargs="?", default=Path("examples"), help="gallery folder (default examples)")
    p.add_argument("-o", "--out", type=Path, default=Path("build/kernelgen-data"), help="dataset folder")
    p.add_argument("--category", action="append", default=[], help="only these categories (repeatable)")
    p.add_argument("--task", action="append", default=[], help="only these task names (repeatable)")
    p.add_argument("--mutants", type=int, default=len(OPERATORS),
                   help=f"wrong versions per kernel, at most {len(OPERATORS)} (default all)")
    p.add_argument("--level", choices=("interp", "sim"), default="sim")
    p.add_argument("--trials", type=int, default=1, help="reference runs with fresh inputs per attempt (default 1)")
    p.add_argument("--cap", type=int, default=DEFAULT_CAP, help=f"elements per input at most (default {DEFAULT_CAP})")
    p.add_argument("--target", default="ascend910b1")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--executor", choices=EXECUTORS, default="local")
    p.add_argument("--cache", type=Path, help="result cache (default OUT/cache)")
    p.add_argument("--no-progress", action="store_true")
    add_split_args(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except DslError as e:
        print(e.render(), file=sys.stderr)
        return 2
    except (ValueError, ExecutorError) as e:
        print(f"error[ARGS]: {e}", file=sys.stderr)
        return 2


def _run(args) -> int:
    split = split_rule(args)
    if not 0 <= args.mutants <= len(OPERATORS) or args.trials < 1 or args.workers < 1:
        raise ValueError(f"--mutants must be in 0..{len(OPERATORS)}, --trials and --workers >= 1")
    tasks = [t for t in discover(args.root, set(args.category) or None)
             if t.path.with_suffix(".adsl").is_file() and (not args.task or t.name in args.task)]
    if not tasks:
        raise DslError.at("TASK-ERROR", f"no gallery task (a task file with a sibling .adsl kernel) under {args.root}",
                          None)
    args.out.mkdir(parents=True, exist_ok=True)
    records, origins, samples = replay_records(tasks, args.mutants)
    replay = args.out / "gallery-replay.jsonl"
    replay.write_text("".join(json.dumps(r) + "\n" for r in records))
    pcfg = ProviderConfig("replay", replay=str(replay), grammar=False)
    lcfg = LoopConfig(repair_rounds=0, level=args.level, trials=args.trials, cap=args.cap, target=args.target,
                      grammar=None)
    settings = {"provider": pcfg.name, "model": model_id(pcfg), "grammar_mode": pcfg.grammar_mode, **lcfg.settings(),
                "replay": _digest(replay)}
    units = [Unit(str(t.path), t.category, t.name, s, unit_key(t.hash, s, settings))
             for t in tasks for s in range(samples[t.id])]
    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        bar = tqdm(total=len(units), desc="gallery-data", unit="sample", file=sys.stderr)
    results = run_all(units, pcfg, lcfg, ResultCache(args.cache or args.out / "cache"), workers=args.workers,
                      executor=args.executor, on_done=(lambda _r: bar.update(1)) if bar else None)
    if bar is not None:
        bar.close()
    info = export(results, tasks, args.out, split=split, target=args.target, origins=origins,
                  meta={"source": "gallery", "mutants": args.mutants, **lcfg.settings()})
    print(f"wrote dataset {args.out}: {describe(info)}")
    return 0


def _digest(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


if __name__ == "__main__":
    sys.exit(main())
