"""How often the differential fuzzer's programs exercise each lowering form (npu_harness/fuzz/coverage.py).

    python benchmarks/fuzz_coverage.py --programs 2000 --seeds 1,2,3

Generates the programs a campaign of each seed would run (the main stream, the multi-stage and the focused ones,
in the campaign's proportions; nothing is lowered or run) and prints, per form, the programs that draw it.
"""

import argparse
import random
from collections import Counter

from npu_harness.fuzz.campaign import RECENT_EVERY, RECENT_SEED_OFFSET, STAGE_EVERY, STAGE_SEED_OFFSET
from npu_harness.fuzz.coverage import forms
from npu_harness.fuzz.gen import generate, generate_recent, generate_stages


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=2000, help="main-stream programs per seed")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--no-recent", action="store_true", help="leave out the focused stream (the coverage before it)")
    args = ap.parse_args()
    counts: Counter = Counter()
    total = 0
    for seed in (int(s) for s in args.seeds.split(",")):
        rng, stage_rng, recent_rng = random.Random(seed), random.Random(f"stages-{seed}"), random.Random(f"recent-{seed}")
        for i in range(args.programs):
            progs = [generate(rng, i, seed * 1_000_003 + i)]
            if i % STAGE_EVERY == 0:
                j = i // STAGE_EVERY
                progs.append(generate_stages(stage_rng, j, seed * 1_000_003 + STAGE_SEED_OFFSET + j))
            if i % RECENT_EVERY == 0 and not args.no_recent:
                j = i // RECENT_EVERY
                progs.append(generate_recent(recent_rng, j, seed * 1_000_003 + RECENT_SEED_OFFSET + j))
            for p in progs:
                total += 1
                counts.update(forms(p))
    print(f"{total} programs, seeds {args.seeds}")
    for form, n in sorted(counts.items()):
        print(f"  {form:32s} {n:6d}  {100 * n / total:6.2f} %")


if __name__ == "__main__":
    main()
