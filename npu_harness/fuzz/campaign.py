"""A differential fuzzing campaign: generate, run in batches, minimise and save each new finding, count.

    python benchmarks/fuzz_differential.py --seconds 600 --seed 1

Programs come from npu_harness.fuzz.gen (seeded: the same seed gives the same programs; three streams: the main
one, multi-stage programs and the focused programs of npu_harness/fuzz/recent.py, `--focus` for these alone), run in batches
that share one emulator binary per (target, kernel type) (npu_harness.fuzz.runner). The first finding of
each signature is minimised (npu_harness.fuzz.minimize) and written as a regression case
(`tests/fuzz_cases/<signature>-<hash>.adsl`, replayed by tests/test_fuzz.py). The last line is

    programs N, mismatches M, emulator checks C, internal errors I, crashes X
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

from .gen import generate, generate_recent, generate_stages
from .minimize import job_of, minimize
from .program import Program, to_case
from .runner import CATEGORIES, Outcome, run_jobs

CASES = Path(__file__).resolve().parents[2] / "tests" / "fuzz_cases"


def summary(counts: Counter) -> str:
    return (f"programs {counts['programs']}, mismatches {counts['mismatch']}, emulator checks {counts['check']}, "
            f"internal errors {counts['internal']}, crashes {counts['crash']}")


def save_case(p: Program, o: Outcome, directory: Path) -> Path:
    slug = re.sub(r"[^a-z0-9]+", "-", o.signature.lower()).strip("-")[:40]
    digest = hashlib.sha256(p.text().encode()).hexdigest()[:8]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{slug}-{digest}.adsl"
    root = str(Path(__file__).resolve().parents[2]) + "/"
    note = " | ".join(line.replace(root, "") for line in o.detail.splitlines()[:3] if line.strip())[:300]
    path.write_text(to_case(p.with_name("case"), f"found: {o.signature}: {note}"))
    return path


#: Multi-stage programs (gen.generate_stages, from a stream of their own) added to each batch: one per this
#: many programs of the main stream, at least one.
STAGE_EVERY = 12
#: Offset of the multi-stage programs' own seeds (the main stream's are seed * 1_000_003 + index).
STAGE_SEED_OFFSET = 500_000_000


#: Focused programs of the recent forms (npu_harness/fuzz/recent.py, a stream of its own) added to each batch: one
#: per this many programs of the main stream.
RECENT_EVERY = 4
#: Offset of the focused programs' own seeds.
RECENT_SEED_OFFSET = 700_000_000


#: Findings of one signature that are minimised and saved (a signature such as "mismatch" covers many bugs).
MINIMIZE_PER_SIGNATURE = 4


def run_campaign(seconds: float, seed: int, *, programs: int | None = None, batch: int = 24,
                 minimize_seconds: float = 600, save_dir: Path | None = CASES, verbose: bool = False,
                 only: set[str] | None = None, out=sys.stdout, focus: bool = False) -> Counter:
    """`programs` counts the main stream's programs (each batch adds multi-stage ones, counted in
    "stage_programs" and in "programs"). `only`: regenerate the campaign's programs but run just these
    (indices of the main stream, `s<index>` of the multi-stage one, `r<index>` of the focused one) to reproduce a
    finding. `focus`: only the focused stream (its programs counted as the main stream's for `programs`)."""
    rng = random.Random(seed)
    stage_rng = random.Random(f"stages-{seed}")
    recent_rng = random.Random(f"recent-{seed}")
    counts: Counter = Counter()
    seen: Counter = Counter()
    start = time.monotonic()
    index = stage_index = recent_index = 0
    while time.monotonic() - start < seconds and (programs is None or index < programs):
        if only is not None and index > max((int(x) for x in only if x.isdigit()), default=-1) and \
                stage_index > max((int(x[1:]) for x in only if x.startswith("s")), default=-1) and \
                recent_index > max((int(x[1:]) for x in only if x.startswith("r")), default=-1):
            break
        size = batch if programs is None else min(batch, programs - index)
        n_stage = max(1, size // STAGE_EVERY)
        n_recent = size if focus else max(1, size // RECENT_EVERY)
        progs = [] if focus else [generate(rng, index + i, seed * 1_000_003 + index + i) for i in range(size)]
        progs += [] if focus else [generate_stages(stage_rng, stage_index + i, seed * 1_000_003 + STAGE_SEED_OFFSET
                                                   + stage_index + i) for i in range(n_stage)]
        progs += [generate_recent(recent_rng, recent_index + i, seed * 1_000_003 + RECENT_SEED_OFFSET + recent_index + i)
                  for i in range(n_recent)]
        if only is not None:
            progs = [p for p in progs if (p.name[1:] if p.name.startswith("k") else p.name) in only]
        index += size
        stage_index += 0 if focus else n_stage
        recent_index += n_recent
        outcomes = run_jobs([job_of(p) for p in progs])
        for p, o in zip(progs, outcomes, strict=True):
            counts["programs"] += 1
            counts["stage_programs"] += p.name.startswith("s")
            counts["recent_programs"] += p.name.startswith("r")
            counts[o.status] += 1
            counts[f"kind:{p.kind}:{o.status}"] += 1
            if verbose and o.status in ("invalid", "rejected"):
                print(f"{o.status} ({p.kind}): {o.detail.splitlines()[0] if o.detail else ''}", file=out)
            if not o.finding:
                continue
            print(f"FINDING {o.signature} ({p.kind}, {p.target}, sizes {p.sizes}):\n{o.detail[:1500]}\n{p.text()}",
                  file=out)
            if seen[o.signature] >= MINIMIZE_PER_SIGNATURE:
                continue
            seen[o.signature] += 1
            small = minimize(p, o.signature, seconds=minimize_seconds,
                             log=lambda m: print(m, file=out)) if minimize_seconds > 0 else p
            if save_dir is not None:
                path = save_case(small, o, save_dir)
                print(f"saved {path}:\n{small.text()}", file=out)
        elapsed = time.monotonic() - start
        print(f"[{elapsed:7.0f} s] {summary(counts)}; passed {counts['pass']}, rejected {counts['rejected']}, "
              f"invalid {counts['invalid']}", file=out, flush=True)
    counts["seconds"] = int(time.monotonic() - start)
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Differential fuzzing: random valid kernels, interpreter vs emulator.")
    ap.add_argument("--seconds", type=float, default=300, help="stop after this many seconds (default 300)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--programs", type=int, help="stop after this many programs of the main stream (each batch "
                    "adds multi-stage ones)")
    ap.add_argument("--batch", type=int, default=24, help="programs per emulator binary (default 24)")
    ap.add_argument("--minimize-seconds", type=float, default=600, help="per new finding; 0: do not minimise")
    ap.add_argument("--save-dir", type=Path, default=CASES, help="where minimised findings go (tests/fuzz_cases)")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true", help="also print rejected and invalid programs")
    ap.add_argument("--only", help="comma-separated program names of this seed to run, without the k (main "
                    "stream: 3) or with the s (multi-stage: s1) or r (focused: r1), to reproduce a finding")
    ap.add_argument("--focus", action="store_true", help="run only the focused programs of the recent lowering forms "
                    "(npu_harness/fuzz/recent.py)")
    args = ap.parse_args(argv)
    counts = run_campaign(args.seconds, args.seed, programs=args.programs, batch=args.batch,
                          minimize_seconds=args.minimize_seconds, save_dir=None if args.no_save else args.save_dir,
                          verbose=args.verbose, focus=args.focus,
                          only={x.strip() for x in args.only.split(",")} if args.only else None)
    kinds = sorted({k.split(":")[1] for k in counts if k.startswith("kind:")})
    for kind in kinds:
        parts = ", ".join(f"{s} {counts[f'kind:{kind}:{s}']}" for s in ("pass", "rejected", "invalid", *CATEGORIES)
                          if counts[f"kind:{kind}:{s}"])
        print(f"  {kind}: {parts}")
    print(f"passed {counts['pass']}, rejected by located errors {counts['rejected']}, invalid (generator) "
          f"{counts['invalid']}; {counts['seconds']} s, seed {args.seed}")
    print(summary(counts))
    return 1 if any(counts[c] for c in CATEGORIES) else 0
