"""Front-end mutation fuzzing: mutated gallery kernels through parse, type check and lowering on every target.

Every mutant must end in success or in located DslErrors; an INTERNAL error or any other exception (a
traceback) is a finding. Mutations work on tokens and lines of the kernel text: drop, duplicate or swap
tokens; replace a name by another name of the text or a word of the language; replace a number or an
operator; indent or dedent a line; drop, duplicate or swap lines; splice in a line of another kernel.

    python benchmarks/fuzz_frontend.py --seconds 120 --seed 1

Last line: programs N, internal errors I, crashes X
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

from ascend_dsl import parse_text
from ascend_dsl.diagnostics import DslError
from lowering import all_targets, lower

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "fuzz_cases" / "frontend"
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+\.\d*(?:e-?\d+)?|\d+|\*\*|[<>=!]=|[-+*/%<>=(),:\[\]\"@]|\s+|.")
WORDS = ("load", "store", "split", "tile", "sum", "max", "min", "mean", "prod", "cast", "select", "exp", "log",
         "sqrt", "zeros", "matmul", "cumsum", "gather", "max_pool", "avg_pool", "axis", "cores", "AIV", "AIC", "auto",
         "size", "buffers", "f32", "f16", "bf16", "i32", "u8", "T", "N", "D", "B", "blk", "t", "r", "for", "in", "with",
         "cube", "vector", "kernel", "Tensor", "True", "False", "reverse", "exclusive", "bias", "transpose_a",
         "kernel_size", "stride", "padding", "dilation", "0", "0.0", "-1", "1", "2", "3", "1e9", "0.5", "65536")
OPERATORS = ("+", "-", "*", "/", "**", "<", ">", "==", "!=", "<=", ">=", "=", ",", ":", "(", ")", "[", "]")


def sources() -> list[str]:
    """The gallery's kernels and the test data's, as texts."""
    paths = sorted((ROOT / "examples").rglob("*.adsl")) + sorted((ROOT / "tests" / "data").glob("*.adsl"))
    return [p.read_text() for p in paths]


def mutate(text: str, rng: random.Random, donors: list[str]) -> str:
    for _ in range(rng.randint(1, 3)):
        text = _one(text, rng, donors)
    return text


def _one(text: str, rng: random.Random, donors: list[str]) -> str:
    k = rng.random()
    if k < 0.55:
        toks = _TOKEN.findall(text)
        real = [i for i, t in enumerate(toks) if not t.isspace()]
        if not real:
            return text
        i = rng.choice(real)
        t = toks[i]
        op = rng.random()
        if op < 0.2:
            toks[i] = ""
        elif op < 0.3:
            toks[i] = t + " " + t
        elif op < 0.4 and i + 2 < len(toks):
            toks[i], toks[i + 2] = toks[i + 2], toks[i]
        elif t[0].isalpha() or t[0] == "_":
            names = [x for x in toks if x[:1].isalpha()]
            toks[i] = rng.choice(names) if rng.random() < 0.5 else rng.choice(WORDS)
        elif t[0].isdigit():
            toks[i] = rng.choice(("0", "1", "-1", "7", "0.0", "1e30", "-1e-30", "255", "4096", "100000000", "2.5"))
        else:
            toks[i] = rng.choice(OPERATORS)
        return "".join(toks)
    lines = text.splitlines()
    if not lines:
        return text
    i = rng.randrange(len(lines))
    if k < 0.65:
        lines[i] = "    " + lines[i]
    elif k < 0.72:
        lines[i] = lines[i][4:] if lines[i].startswith("    ") else lines[i]
    elif k < 0.8:
        del lines[i]
    elif k < 0.86:
        lines.insert(i, lines[i])
    elif k < 0.92:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    else:
        donor = rng.choice(donors).splitlines() or [""]
        lines.insert(i, rng.choice(donor))
    return "\n".join(lines) + "\n"


def check(text: str) -> tuple[str, str]:
    """("ok" | "error" | "internal" | "crash", detail): parse, instantiate every dtype variant, lower on every
    target."""
    stage = "parse"
    try:
        errors = 0
        for src in parse_text(text, "mutant.adsl"):
            for dtypes in src.dtype_variants:
                stage = "type check"
                try:
                    kernel = src.instantiate(dtypes)
                except DslError as e:
                    if "INTERNAL" in e.codes:
                        return "internal", e.render()
                    errors += 1
                    continue
                for target in sorted(all_targets()):
                    stage = f"lower ({target})"
                    try:
                        lower(kernel, target, "mutant.adsl")
                    except DslError as e:
                        if "INTERNAL" in e.codes:
                            return "internal", e.render()
                        e.render()  # rendering a diagnostic must not fail either
                        errors += 1
        return ("error" if errors else "ok"), ""
    except DslError as e:
        if "INTERNAL" in e.codes:
            return "internal", e.render()
        e.render()
        return "error", ""
    except RecursionError:
        return "crash", f"{stage}: RecursionError"
    except Exception as e:  # noqa: BLE001 - a traceback on user input is what we look for
        return "crash", f"{stage}: {type(e).__name__}: {e}\n" + "".join(traceback.format_exc()[-3000:])


def run(seconds: float, seed: int, programs: int | None = None, save_dir: Path | None = CASES,
        out=sys.stdout) -> Counter:
    rng = random.Random(seed)
    texts = sources()
    counts: Counter = Counter()
    seen: set[str] = set()
    start = time.monotonic()
    while time.monotonic() - start < seconds and (programs is None or counts["programs"] < programs):
        mutant = mutate(rng.choice(texts), rng, texts)
        status, detail = check(mutant)
        counts["programs"] += 1
        counts[status] += 1
        if status in ("internal", "crash"):
            key = detail.splitlines()[0][:120] if detail else status
            print(f"FINDING {status}: {detail[:2000]}\n--- mutant:\n{mutant}", file=out)
            if save_dir is not None and key not in seen:
                seen.add(key)
                save_dir.mkdir(parents=True, exist_ok=True)
                path = save_dir / f"{status}-{hashlib.sha256(key.encode()).hexdigest()[:8]}.adsl"
                path.write_text(f"# front-end fuzz finding: {key}\n" + mutant)
                print(f"saved {path}", file=out)
    counts["seconds"] = int(time.monotonic() - start)
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Front-end mutation fuzzing: mutated gallery kernels through parse, "
                                 "check and lowering on every target.")
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--programs", type=int)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args(argv)
    counts = run(args.seconds, args.seed, args.programs, None if args.no_save else CASES)
    print(f"accepted {counts['ok']}, rejected with located errors {counts['error']}; {counts['seconds']} s, "
          f"seed {args.seed}")
    print(f"programs {counts['programs']}, internal errors {counts['internal']}, crashes {counts['crash']}")
    return 1 if counts["internal"] or counts["crash"] else 0
