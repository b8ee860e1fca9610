"""An honest comparison of schedules (issue 17, item 5): per gallery kernel, the rule-based schedule, a plain
search over the same knobs with the same evaluation budget (no model), and the assisted schedule decision
with a model (replayed answers or a live provider).

    python benchmarks/assist_compare.py [--kernels relu,gelu,log_softmax:batch_size=48:dim=16384,...]
        [--budget 3] [--seed 0] [--target T] [--exclude chunk,...]
        [--assist replay --replay FILE.jsonl | --assist transformers [--model PATH] | --assist openai ...]
        [--record FILE.jsonl]

A kernel is a gallery name (or an .adsl path with its task file beside it), optionally with task sizes
(`name:var=value:...`, like `--set`): the long-row entries run rows longer than UB, where the chunk-length
knob matters. No gallery kernel has a legal fusion of split loops (each passes an accumulator, a slot or a
scalar to the next); `tests/assist/two_maps.adsl` has one.

Every candidate of every method is judged the same way: lowered by the rule-based pipeline (every
constraint check), validated in the emulator against the task's PyTorch reference, and timed by the cost
model (an ESTIMATE of the 910B-class hardware, not a measurement). The budget is the number of candidates
each method may evaluate beyond the rule-based one: the search draws `budget` distinct settings at random
(seeded) from the discrete values of the menu's tile-size, rows-per-tile, chunk-length, queue-depth,
core-split, loop-fusion and cube base-block knobs (it cannot write expression rewrites); the assisted decision gets `budget` rounds (an answer rejected before the
emulator costs a round but no evaluation). A method's time is its best valid candidate's, never worse than
the rule-based one (that is always a candidate).

`--exclude KIND,...` leaves knob kinds off the menu of
both methods (a proposal naming one is an unknown knob): `--exclude chunk` is the menu before chunk lengths.

Prints estimated time (us) per kernel and method, and the geomean speedup of each method over the
rule-based baseline. `--record` writes the model's answers as a replay file, so a live run can be replayed.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ascend_dsl import load_file  # noqa: E402
from ascend_dsl.diagnostics import DslError  # noqa: E402
from lowering import DEFAULT_TARGET, PassContext, get_target  # noqa: E402
from lowering.assist import Assistant, AssistUnavailable, schedule  # noqa: E402
from lowering.assist import knobs as K  # noqa: E402
from npu_harness.assist_eval import SimEvaluator  # noqa: E402

DEFAULT_KERNELS = ("relu,gelu,sigmoid,softmax,layer_norm,add_row,matmul_rect,"
                   "log_softmax:batch_size=48:dim=16384,rms_norm:batch_size=48:dim=32768,batch_norm_train,"
                   "tests/assist/two_maps.adsl")


def _find(name: str) -> Path:
    if name.endswith(".adsl"):  # a kernel outside the gallery (its task file beside it)
        path = (ROOT / name) if not Path(name).is_absolute() else Path(name)
        if not path.is_file():
            raise SystemExit(f"no kernel file {name}")
        return path
    hits = sorted(ROOT.glob(f"examples/**/{name}.adsl"))
    if not hits:
        raise SystemExit(f"no gallery kernel {name}")
    return hits[0]


def _entry(text: str) -> tuple[str, dict[str, int]]:
    """`name[:var=value...]` -> (gallery name, task size overrides)."""
    name, *sets = text.split(":")
    try:
        return name, {k.strip(): int(v) for k, v in (kv.split("=", 1) for kv in sets)}
    except ValueError:
        raise SystemExit(f"bad kernel entry {text!r}: expected name:var=INT:...") from None


def _values(k: K.Knob) -> list:
    """The discrete values a plain search draws from."""
    if k.kind == "size":
        sizes = [k.granule << i for i in range(20) if (k.granule << i) <= k.max_size]
        return ["auto", *sizes[-6:]]  # the larger tiles: small ones only add per-tile overhead
    if k.kind == "buffers":
        return [1, 2]
    if k.kind == "rows":
        return ["auto", 1, 4, 16, 64]
    if k.kind == "fuse":
        return [False, True]
    if k.kind == "chunk":
        return ["auto", *(c for c in (2048, 4096, 8192) if c <= k.max_size)]
    if k.kind == "cores":
        return ["all", *(n for n in (8, 16, 24, 32) if n < k.max_size)]
    if k.kind == "base":
        return ["auto", 32, 64, 128, 256]
    return [k.current]  # expressions: a search cannot write them


def _fusable(settings: dict) -> dict:
    """A drawn fusion of split loops J and J + 1 gives the second one (and its tile loop) the first one's
    settings (a fusion needs equal ones; the split loops a fusion is legal for hold one tile loop each)."""
    for key, value in list(settings.items()):
        if key.startswith("fuse.") and value:
            j = int(key.removeprefix("fuse."))
            pairs = [(f"loop{j}.{f}", f"loop{j + 1}.{f}") for f in ("size", "rows", "chunk", "buffers")]
            for first, second in [*pairs, (f"split{j}.cores", f"split{j + 1}.cores")]:
                if first in settings and second in settings:
                    settings[second] = settings[first]
    return settings


class Recorder:
    """A model wrapper that appends each answer to a replay file as it comes (a live run cut short keeps them)."""

    def __init__(self, model, path: Path):
        self.model, self.name, self.path, self.count = model, model.name, path, 0
        path.write_text("")

    def answer(self, prompt, key, grammar):
        text = self.model.answer(prompt, key, grammar)
        if text is not None:
            with self.path.open("a") as f:
                f.write(json.dumps({"task": f"{key.kernel}/{key.decision}", "round": key.round, "text": text}) + "\n")
            self.count += 1
        return text


def _estimate(evaluator, kernel, ctx, settings) -> float | None:
    try:
        c = schedule.lower_candidate(kernel, ctx, settings)
    except DslError:
        return None
    ev = evaluator.evaluate(c.kernel, c.lowered, c.project, c.ctx)
    return ev.time_us if ev.ok else None


def search(kernel, ctx, evaluator, base_us: float, budget: int, seed: int,
           exclude: frozenset = frozenset()) -> tuple[float, dict, int]:
    """(best estimate, its settings, candidates evaluated) of a seeded random search over the menu."""
    base = schedule.lower_candidate(kernel, ctx, {})
    menu = [k for k in K.menu(kernel, base.lowered, ctx.target, ctx.source_name) if k.kind not in exclude]
    space = [(k, _values(k)) for k in menu if len(_values(k)) > 1]
    rng = random.Random(seed)
    best, best_settings, tried, seen = base_us, {}, 0, {()}
    total = math.prod(len(v) for _, v in space) if space else 1
    while tried < budget and len(seen) < total:
        settings = _fusable({k.key: rng.choice(v) for k, v in space})
        settings = {key: v for key, v in settings.items() if v != next(k.current for k in menu if k.key == key)}
        frozen = tuple(sorted(settings.items()))
        if frozen in seen:
            continue
        seen.add(frozen)
        tried += 1
        try:
            cand = K.apply(kernel, menu, settings)
        except K.ApplyError:
            continue
        t = _estimate(evaluator, cand, ctx, settings)
        if t is not None and t < best:
            best, best_settings = t, settings
    return best, best_settings, tried


def assisted(kernel, ctx, evaluator, model, budget: int,
             exclude: frozenset = frozenset()) -> tuple[float | None, dict, list[str]]:
    a = Assistant(model, evaluator, rounds=budget, exclude=exclude)
    c = PassContext(ctx.target, ctx.source_name, a)
    try:
        schedule.run(kernel, c)
    except AssistUnavailable as e:
        return None, {}, [str(e)]
    record = next((d for d in c.decisions if d.get("decision") == schedule.DECISION), None)
    if record is None:
        return None, {}, a.notes
    return record["estimate_after_us"], record["knobs"], a.notes


def _model(args):
    if args.assist is None:
        return None
    from kernelgen.assist_models import ProviderModel
    from kernelgen.cli_common import quiet_libraries
    from kernelgen.providers import ProviderConfig

    quiet_libraries()
    return ProviderModel(ProviderConfig(args.assist, args.model, args.base_url, args.api_key, args.replay),
                         seed=args.seed)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernels", default=DEFAULT_KERNELS, help=f"gallery kernel names (default {DEFAULT_KERNELS})")
    p.add_argument("--budget", type=int, default=3, help="candidates per method beyond the rule-based one")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--target", default=DEFAULT_TARGET)
    p.add_argument("--assist", choices=("replay", "transformers", "openai"), help="the model (none: no assisted column)")
    p.add_argument("--replay", help="replay file (JSONL) for --assist replay")
    p.add_argument("--model", help="transformers: model directory or .gguf (default: the bundled SmolLM2-135M)")
    p.add_argument("--base-url")
    p.add_argument("--api-key")
    p.add_argument("--record", type=Path, help="write the model's answers here (a replay file)")
    p.add_argument("--exclude", default="", help="knob kinds left off the menu (e.g. chunk: the menu before it)")
    args = p.parse_args(argv)
    exclude = frozenset(x.strip() for x in args.exclude.split(",") if x.strip())
    target = get_target(args.target)
    model = _model(args)
    if model is not None and args.record:
        model = Recorder(model, args.record)
    rows = []
    print(f"target {target.name}; budget {args.budget} candidates per method; times are cost-model ESTIMATES (us)"
          + (f"; knobs left off the menu: {', '.join(sorted(exclude))}" if exclude else ""))
    print(f"{'kernel':<24} {'rule-based':>11} {'search':>11} {'assisted':>11}  search knobs | assisted knobs")
    for entry in [n.strip() for n in args.kernels.split(",") if n.strip()]:
        name, overrides = _entry(entry)
        path = _find(name)
        name = path.stem
        src = load_file(path)[0]
        variant = next((v for v in src.dtype_variants if all(d.value == "f32" for d in v.values())),
                       src.dtype_variants[0])
        kernel = src.instantiate(variant)
        ctx = PassContext(target, path.name)
        evaluator = SimEvaluator(path.with_suffix(".py"), seed=args.seed, overrides=overrides, cap=1 << 20)
        start = time.perf_counter()
        base_us = _estimate(evaluator, kernel, ctx, {})
        if base_us is None:
            print(f"{entry:<24} the rule-based lowering does not validate; skipped")
            continue
        s_us, s_knobs, _ = search(kernel, ctx, evaluator, base_us, args.budget, args.seed, exclude)
        a_us, a_knobs = None, {}
        if model is not None:
            a_us, a_knobs, notes = assisted(kernel, ctx, evaluator, model, args.budget, exclude)
            if a_us is None:
                print(f"  ({name}: assisted: {'; '.join(notes)[:200]})")
        label = name if not overrides else f"{name} ({'x'.join(str(v) for v in overrides.values())})"
        rows.append((label, base_us, s_us, a_us))
        a_text = f"{a_us:>11.3f}" if a_us is not None else f"{'-':>11}"
        print(f"{label:<24} {base_us:>11.3f} {s_us:>11.3f} {a_text}  {json.dumps(s_knobs)} | {json.dumps(a_knobs)}"
              f"  ({time.perf_counter() - start:.0f} s)", flush=True)
    if not rows:
        return 1

    def geomean(col: int) -> str:
        vals = [r[1] / r[col] for r in rows if r[col] is not None]
        if len(vals) < len(rows):
            return "-" if not vals else f"{math.exp(sum(map(math.log, vals)) / len(vals)):.3f}x (of {len(vals)})"
        return f"{math.exp(sum(map(math.log, vals)) / len(vals)):.3f}x"

    print(f"geomean speedup over rule-based ({len(rows)} kernels): search {geomean(2)}, assisted {geomean(3)}")
    if isinstance(model, Recorder):
        print(f"wrote {model.count} answers to {args.record}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
