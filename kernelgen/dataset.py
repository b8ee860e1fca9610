"""Training data for kernel-writing models, from evaluation records (ascend-eval, or the gallery command
kernelgen.gallery_data), written as a Hugging Face `datasets` folder: `datasets.load_dataset(DIR, CONFIG)`.

Configs (each with splits `train` and `test`, the test split holding the held-out tasks):
- attempts: one row per distinct (task, kernel): the task source, the prompt messages the attempt answered
  (system + task, and for a repair round the earlier responses and diagnostics), the response, the DSL
  kernel, per-stage results parse/check/lower/interp/sim (kernelgen.stages), the diagnostics and codes, the
  emitted AscendC of the kernel's first dtype variant, the cost-model estimate and ideal fraction, and the
  reward (kernelgen.reward's scale).
- sft: (prompt -> a correct kernel), one row per distinct correct kernel of a task.
- repair: (prompt + a failing attempt + the tool's diagnostic -> a correct kernel): the failing response as
  the assistant turn, the repair message with its diagnostics as the user turn (kernelgen.prompt.repair_prompt,
  as the loop sends it), the correct kernel as the completion; origin "same-sample" when the loop's own
  later round fixed it, "other-sample" when another sample of the task passed.
- prompts: one row per task for reinforcement learning: the prompt and `task_files` (the task file and its
  sidecars: what kernelgen.reward.KernelReward needs).

Prompts are rebuilt here (kernelgen.prompt's system and user text, the same relevance ranking) from a
gallery pool that never holds the kernel of the task's own family (its name without a trailing _arg,
_param, _module, _buffer or _groups) nor of any held-out task's family, so no row shows a reference
solution, and a training prompt never shows a held-out task's solution. A final guard drops (and counts)
any row whose prompt still contains its task's reference kernel, a held-out task's reference kernel or its
own answer. Rows are deduplicated on whitespace-normalised kernel text. The split of a task comes from a
hash of its family (or an explicit list), so reruns and new samples keep every task on its side.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from . import prompt
from .prompt.bindings import task_bindings
from .prompt.relevance import rank
from .reward import STAGE_REWARD, outcome_reward
from .stages import STAGES, highest_stage, lower_variants, stage_results
from .tasks import Task, sidecars

DATASET_VERSION = "kernelgen-dataset-1"
SPLITS = ("train", "test")
FAMILY_SUFFIXES = ("_arg", "_param", "_module", "_buffer", "_groups")
SPLIT_SALT = "ascend-dsl-split-1"

# -- schema (also written into the dataset card, so every split loads with the same features) -------------
_MSG = [("role", "string"), ("content", "string")]
_FILE = [("path", "string"), ("content", "string")]
_TASK = [("task_id", "string"), ("category", "string"), ("task_name", "string"), ("task_hash", "string"),
         ("split", "string")]
SCHEMA: dict[str, list] = {
    "attempts": [("id", "string"), *_TASK, ("origin", "string"), ("sample", "int64"), ("round", "int64"),
                 ("task_source", "string"), ("prompt", [_MSG]), ("response", "string"), ("dsl", "string"),
                 ("passed", "bool"), ("failed_stage", "string"), ("highest_stage", "string"),
                 ("stages", [(s, "bool") for s in STAGES]), ("codes", ["string"]), ("diagnostics", "string"),
                 ("ascendc", [_FILE]), ("estimate_us", "float64"), ("ideal_fraction", "float64"),
                 ("reward", "float64"), ("level", "string"), ("target", "string"), ("prompt_version", "string")],
    "sft": [("id", "string"), *_TASK, ("origin", "string"), ("prompt", [_MSG]), ("completion", [_MSG]),
            ("estimate_us", "float64"), ("ideal_fraction", "float64"), ("reward", "float64")],
    "repair": [("id", "string"), *_TASK, ("origin", "string"), ("failing_origin", "string"),
               ("failed_stage", "string"), ("codes", ["string"]), ("prompt", [_MSG]), ("completion", [_MSG])],
    "prompts": [*_TASK, ("task_source", "string"), ("task_files", [[("name", "string"), ("content", "string")]]),
                ("prompt", [_MSG])],
}


def _feature(name: str, kind) -> dict:
    if isinstance(kind, str):
        return {"name": name, "dtype": kind}
    if isinstance(kind, list) and len(kind) == 1 and isinstance(kind[0], str):
        return {"name": name, "list": kind[0]}
    if isinstance(kind, list) and len(kind) == 1:
        return {"name": name, "list": [_feature(n, k) for n, k in kind[0]]}
    return {"name": name, "struct": [_feature(n, k) for n, k in kind]}


# -- splits -------------------------------------------------------------------------------------------------
def family(name: str) -> str:
    """A task's family: its name without a trailing _arg/_param/_module/_buffer/_groups (leaky_relu_arg and
    leaky_relu are one family, kept on one side of the split)."""
    for suffix in FAMILY_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


@dataclass(frozen=True)
class SplitRule:
    """A task is held out ("test") when its family is among `eval_tasks` (names or category/name ids) or,
    without such a list, when the hash of its family falls below `eval_fraction`."""

    eval_fraction: float = 0.2
    eval_tasks: frozenset[str] | None = None

    def __post_init__(self):
        if not 0.0 <= self.eval_fraction <= 1.0:
            raise ValueError(f"eval fraction must be in [0, 1], not {self.eval_fraction}")

    def of(self, name: str) -> str:
        fam = family(name)
        if self.eval_tasks is not None:
            return "test" if fam in {family(t.split("/")[-1]) for t in self.eval_tasks} else "train"
        u = int(hashlib.sha256(f"{SPLIT_SALT}:{fam}".encode()).hexdigest()[:8], 16) / 16**8
        return "test" if u < self.eval_fraction else "train"


# -- text helpers -------------------------------------------------------------------------------------------
def normalize(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.strip("\n").splitlines()) + "\n"


def _squash(text: str) -> str:
    return " ".join(text.split())


def answer_message(code: str) -> dict:
    return {"role": "assistant", "content": f"```python\n{normalize(code)}```"}


def _id(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def task_files(task: Task) -> list[dict]:
    """The task file and its JSON sidecars, as KernelReward's `task_files` column."""
    return [{"name": task.path.name, "content": task.source}] + [
        {"name": p.name, "content": p.read_text()} for p in sidecars(task.path)]


def reference_kernel(task: Task) -> str | None:
    """The task's reference solution: the gallery kernel beside its task file, if any."""
    adsl = task.path.with_suffix(".adsl")
    return adsl.read_text() if adsl.is_file() else None


# -- prompts ------------------------------------------------------------------------------------------------
class PromptBuilder:
    """kernelgen.prompt's messages with a filtered example pool (see the module docstring)."""

    def __init__(self, held_out_families: set[str], avoid: dict[str, list[str]] | None = None):
        from npu_harness.gallery import ROOT, discover

        self.held_out = held_out_families
        self.avoid = {tid: {_squash(k) for k in kernels} for tid, kernels in (avoid or {}).items()}
        self.pool = [prompt.Example(ex.category, ex.name, ex.adsl.read_text(), ex.task.read_text())
                     for ex in (discover(ROOT) if ROOT.is_dir() else []) if ex.task.is_file()]
        self._cache: dict[str, list[dict]] = {}

    def examples(self, task: Task) -> list[prompt.Example]:
        """The most relevant gallery kernels, never one of the task's family, of a held-out family, or equal to
        a known correct kernel of the task."""
        avoid = self.avoid.get(task.id, set())
        pool = [ex for ex in self.pool if family(ex.name) not in self.held_out and family(ex.name) != family(task.name)
                and _squash(ex.dsl) not in avoid]
        return rank(task.source, pool, category=task.category, limit=prompt.MAX_EXAMPLES)

    def initial(self, task: Task) -> list[dict]:
        if task.id not in self._cache:
            exs = self.examples(task)
            self._cache[task.id] = [{"role": "system", "content": prompt.system_prompt(task, exs)},
                                    {"role": "user", "content": prompt.user_prompt(task, task_bindings(task))}]
        return self._cache[task.id]


# -- export -------------------------------------------------------------------------------------------------
@dataclass
class _Attempt:
    task: Task
    record: dict
    entry: dict
    conversation: list[dict]  # the messages this attempt answered
    origin: str


def _attempts(records: list[dict], tasks: dict[str, Task], builder: PromptBuilder, origins: dict) -> list[_Attempt]:
    out = []
    for rec in sorted(records, key=lambda r: (r["task"], r["sample"])):
        task = tasks.get(rec["task"])
        if task is None:
            continue
        conv = list(builder.initial(task))
        for entry in rec.get("attempts", []):
            o = entry.get("outcome")
            if not o or entry.get("error"):
                break
            if o.get("failed_stage") == "task":  # the task's reference failed: says nothing about the kernel
                break
            origin = origins.get((task.id, rec["sample"], entry["round"])) or entry.get("model") or "unknown"
            out.append(_Attempt(task, rec, entry, conv, origin))
            conv = conv + [{"role": "assistant", "content": entry["response"]},
                           {"role": "user", "content": prompt.repair_prompt(o.get("diagnostics", ""))}]
    return out


class _Lowerer:
    def __init__(self, target: str):
        self.target = target
        self._cache: dict[str, tuple[bool, dict[str, str], str]] = {}

    def __call__(self, code: str, name: str) -> tuple[bool, dict[str, str], str]:
        key = normalize(code)
        if key not in self._cache:
            self._cache[key] = lower_variants(code, f"{name}.adsl", self.target)
        return self._cache[key]


def _attempt_row(a: _Attempt, split: str, lower: _Lowerer, target: str) -> dict:
    o = a.entry["outcome"]
    code = o.get("code")
    lowered_after = files = None
    if code and o.get("failed_stage") == "interp":
        lowered_after, files, _ = lower(code, a.task.name)
    elif code and o.get("lowered"):
        files = lower(code, a.task.name)[1]
    stages = stage_results(o, lowered_after)
    t = a.task
    return {"id": _id(t.hash, normalize(code) if code else a.entry["response"]), "task_id": t.id,
            "category": t.category, "task_name": t.name, "task_hash": t.hash, "split": split, "origin": a.origin,
            "sample": a.record["sample"], "round": a.entry["round"], "task_source": t.source,
            "prompt": a.conversation, "response": a.entry["response"], "dsl": code, "passed": bool(o.get("passed")),
            "failed_stage": o.get("failed_stage"), "highest_stage": highest_stage(stages), "stages": stages,
            "codes": list(o.get("codes") or []), "diagnostics": o.get("diagnostics") or "",
            "ascendc": [{"path": k, "content": v} for k, v in sorted((files or {}).items())],
            "estimate_us": o.get("estimate_us"), "ideal_fraction": o.get("ideal_fraction"),
            "reward": outcome_reward(o, stages), "level": o.get("level"), "target": target,
            "prompt_version": a.entry.get("prompt_version") or prompt.PROMPT_VERSION}


def build_rows(records: list[dict], tasks: Iterable[Task], *, split: SplitRule = SplitRule(),
               target: str = "ascend910b1", origins: dict | None = None) -> tuple[dict[str, list[dict]], dict]:
    """Rows per config, and what was dropped: {"duplicates": n, "leaks": n}."""
    tasks = {t.id: t for t in tasks}
    split_of = {tid: split.of(t.name) for tid, t in tasks.items()}
    held_out = {family(t.name) for tid, t in tasks.items() if split_of[tid] == "test"}
    correct: dict[str, list[str]] = {}
    for rec in records:
        for entry in rec.get("attempts", []):
            o = entry.get("outcome") or {}
            if o.get("passed") and o.get("code") and rec["task"] in tasks:
                codes = correct.setdefault(rec["task"], [])
                if normalize(o["code"]) not in codes:
                    codes.append(normalize(o["code"]))
    builder = PromptBuilder(held_out, correct)
    attempts = _attempts(records, tasks, builder, origins or {})
    lower = _Lowerer(target)
    rows: dict[str, list[dict]] = {c: [] for c in SCHEMA}
    dropped = {"duplicates": 0, "leaks": 0}
    seen: set[tuple[str, str]] = set()

    def add(config: str, row: dict) -> None:
        if (config, row["id"]) in seen:
            dropped["duplicates"] += 1
            return
        seen.add((config, row["id"]))
        rows[config].append(row)

    for a in attempts:
        add("attempts", _attempt_row(a, split_of[a.task.id], lower, target))

    fixed_by: dict[tuple[str, int], tuple[str, dict]] = {}  # (task, sample) -> the passing attempt
    for a in attempts:
        if a.entry["outcome"].get("passed"):
            fixed_by.setdefault((a.task.id, a.record["sample"]), (a.entry["outcome"]["code"], a.entry["outcome"]))
    for a in attempts:
        o, t = a.entry["outcome"], a.task
        base = {"task_id": t.id, "category": t.category, "task_name": t.name, "task_hash": t.hash,
                "split": split_of[t.id]}
        initial = builder.initial(t)
        if o.get("passed"):
            code = normalize(o["code"])
            stages = stage_results(o)
            add("sft", {"id": _id(t.hash, code), **base, "origin": a.origin, "prompt": initial,
                        "completion": [answer_message(code)], "estimate_us": o.get("estimate_us"),
                        "ideal_fraction": o.get("ideal_fraction"), "reward": outcome_reward(o, stages)})
            continue
        same = fixed_by.get((t.id, a.record["sample"]))
        if same is not None:
            target_code, origin = same[0], "same-sample"
        elif correct.get(t.id):
            target_code, origin = correct[t.id][0], "other-sample"
        else:
            continue
        failing = normalize(o["code"]) if o.get("code") else a.entry["response"]
        add("repair", {"id": _id(t.hash, failing, normalize(target_code)), **base, "origin": origin,
                       "failing_origin": a.origin, "failed_stage": o.get("failed_stage"),
                       "codes": list(o.get("codes") or []),
                       "prompt": initial + [{"role": "assistant", "content": a.entry["response"]},
                                            {"role": "user", "content": prompt.repair_prompt(o.get("diagnostics", ""))}],
                       "completion": [answer_message(target_code)]})

    rows["prompts"] = prompt_rows([tasks[tid] for tid in sorted({a.task.id for a in attempts})], split, builder)

    guard = _LeakGuard(tasks.values(), split_of)
    for config in rows:
        kept = [r for r in rows[config] if not guard.leaks(r)]
        dropped["leaks"] += len(rows[config]) - len(kept)
        rows[config] = kept
    return rows, dropped


def prompt_rows(tasks: Iterable[Task], split: SplitRule = SplitRule(), builder: PromptBuilder | None = None) -> list[dict]:
    """The `prompts` config: one row per task (prompt messages and task_files, what GRPO training needs)."""
    tasks = list(tasks)
    if builder is None:
        builder = PromptBuilder({family(t.name) for t in tasks if split.of(t.name) == "test"})
    return [{"task_id": t.id, "category": t.category, "task_name": t.name, "task_hash": t.hash,
             "split": split.of(t.name), "task_source": t.source, "task_files": task_files(t),
             "prompt": builder.initial(t)} for t in tasks]


class _LeakGuard:
    """A row leaks when its prompt holds its task's reference kernel, a held-out task's reference kernel, or
    its own answer (whitespace-insensitive)."""

    def __init__(self, tasks: Iterable[Task], split_of: dict[str, str]):
        self.reference = {t.id: _squash(k) for t in tasks if (k := reference_kernel(t))}
        self.held_out = [k for tid, k in self.reference.items() if split_of.get(tid) == "test"]

    def leaks(self, row: dict) -> bool:
        text = _squash("\n".join(m["content"] for m in row["prompt"]))
        own = [self.reference.get(row["task_id"])] + [_squash(m["content"].removeprefix("```python").removesuffix("```"))
                                                     for m in row.get("completion", [])]
        return any(k and k in text for k in own + self.held_out)


def write(rows: dict[str, list[dict]], out_dir: Path, meta: dict) -> dict:
    """JSONL per config and split, the dataset card (README.md: configs and features for `datasets`), and
    meta.json. Returns the row counts {config: {split: n}}."""
    out_dir.mkdir(parents=True, exist_ok=True)
    counts: dict[str, dict[str, int]] = {}
    files: dict[str, dict[str, str]] = {}
    for config, config_rows in rows.items():
        counts[config], files[config] = {}, {}
        for old in (out_dir / config).glob("*.jsonl") if (out_dir / config).is_dir() else ():
            old.unlink()
        for split in SPLITS:
            part = [r for r in config_rows if r["split"] == split]
            if not part:
                continue
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in part)
            # named by content: `datasets` caches a local folder by its card, so a rewritten folder must change it
            name = f"{config}/{split}-{hashlib.sha256(text.encode()).hexdigest()[:12]}.jsonl"
            (out_dir / name).parent.mkdir(parents=True, exist_ok=True)
            (out_dir / name).write_text(text)
            counts[config][split], files[config][split] = len(part), name
    (out_dir / "meta.json").write_text(json.dumps({**meta, "counts": counts, "files": files}, indent=1,
                                                  sort_keys=True) + "\n")
    (out_dir / "README.md").write_text(card(counts, files, meta))
    return counts


def card(counts: dict[str, dict[str, int]], files: dict[str, dict[str, str]], meta: dict) -> str:
    configs, infos = [], []
    for config, splits in counts.items():
        if not splits:
            continue
        configs.append({"config_name": config, "data_files": [{"split": s, "path": files[config][s]}
                                                              for s in SPLITS if s in splits]})
        infos.append({"config_name": config, "features": [_feature(n, k) for n, k in SCHEMA[config]]})
    head = _yaml({"configs": configs, "dataset_info": infos})
    table = "\n".join(f"| {c} | {s.get('train', 0)} | {s.get('test', 0)} |" for c, s in counts.items())
    return (f"---\n{head}---\n# ascend-dsl kernel-writing data ({DATASET_VERSION})\n\n"
            "Written by `kernelgen.dataset` (docs/kernelgen.md, \"Training data\"). Load with\n"
            "`datasets.load_dataset(\"<this folder>\", \"sft\")`; the `test` split holds the held-out tasks "
            f"({', '.join(meta.get('test_tasks', [])) or 'none'}).\n\n"
            "| config | train | test |\n|---|---|---|\n" + table + "\n\n"
            f"Rewards use kernelgen.reward's scale: stage rewards {json.dumps({str(k): v for k, v in STAGE_REWARD.items()})}"
            ", plus 0.5 x the cost model's ideal fraction for a kernel that passes the emulator.\n")


def _yaml(value, indent: int = 0) -> str:
    """Block YAML for dicts, lists and scalars (strings JSON-quoted, which YAML reads as is)."""
    pad = " " * indent
    if isinstance(value, dict):
        lines = []
        for k, v in value.items():
            if isinstance(v, (dict, list)) and v:
                lines.append(f"{pad}{k}:\n{_yaml(v, indent + 2)}")
            else:
                lines.append(f"{pad}{k}: {_scalar(v)}\n")
        return "".join(lines)
    lines = []
    for item in value:
        text = _yaml(item, indent + 2) if isinstance(item, (dict, list)) else f"{pad}  {_scalar(item)}\n"
        lines.append(f"{pad}- {text.lstrip()}")
    return "".join(lines)


def _scalar(v) -> str:
    if isinstance(v, (dict, list)):
        return "{}" if isinstance(v, dict) else "[]"
    return json.dumps(v)


def export(records: list[dict], tasks: Iterable[Task], out_dir: str | Path, *, split: SplitRule = SplitRule(),
           target: str = "ascend910b1", origins: dict | None = None, meta: dict | None = None) -> dict:
    """build_rows + write; returns meta.json's content."""
    tasks = list(tasks)
    rows, dropped = build_rows(records, tasks, split=split, target=target, origins=origins)
    split_of = {t.id: split.of(t.name) for t in tasks}
    used = {r["task_id"] for r in rows["prompts"]}
    info = {"version": DATASET_VERSION, "prompt_version": prompt.PROMPT_VERSION, "target": target,
            "eval_fraction": split.eval_fraction, "eval_tasks": sorted(split.eval_tasks or []),
            "split_salt": SPLIT_SALT, "test_tasks": sorted(t for t in used if split_of[t] == "test"),
            "train_tasks": sorted(t for t in used if split_of[t] == "train"), "dropped": dropped, **(meta or {})}
    counts = write(rows, Path(out_dir), info)
    return {**info, "counts": counts}


# -- command-line helpers (ascend-eval --export-dataset, python -m kernelgen.gallery_data) ------------------
def add_split_args(p) -> None:
    p.add_argument("--eval-fraction", type=float, default=0.2,
                   help="dataset export: share of task families held out as the test split (default 0.2)")
    p.add_argument("--eval-tasks", help="dataset export: comma-separated task names held out (their families) "
                   "instead of --eval-fraction")


def split_rule(args) -> SplitRule:
    names = frozenset(n.strip() for n in (args.eval_tasks or "").split(",") if n.strip())
    return SplitRule(args.eval_fraction, names or None)


def describe(info: dict) -> str:
    c = info["counts"]
    parts = [f"{cfg} {s.get('train', 0)}+{s.get('test', 0)}" for cfg, s in c.items()]
    return (f"{', '.join(parts)} rows (train+test); {len(info['test_tasks'])} held-out task(s); dropped "
            f"{info['dropped']['duplicates']} duplicate(s), {info['dropped']['leaks']} leaking row(s)")


def main(argv: list[str] | None = None) -> int:
    """python -m kernelgen.dataset TASKS -o DIR: the `prompts` config alone for a task folder (GRPO on tasks
    nobody has answered yet); the other configs come from ascend-eval --export-dataset or kernelgen.gallery_data."""
    import argparse
    import sys

    from ascend_dsl.diagnostics import DslError

    from .tasks import discover

    p = argparse.ArgumentParser(prog="python -m kernelgen.dataset", description=main.__doc__.splitlines()[0])
    p.add_argument("tasks", type=Path, help="a task file, or a folder tree whose folder names are categories")
    p.add_argument("-o", "--out", type=Path, required=True)
    p.add_argument("--category", action="append", default=[])
    add_split_args(p)
    args = p.parse_args(argv)
    try:
        split = split_rule(args)
        tasks = discover(args.tasks, set(args.category) or None)
        if not tasks:
            raise DslError.at("TASK-ERROR", f"no task files under {args.tasks}", None)
    except DslError as e:
        print(e.render(), file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"error[ARGS]: {e}", file=sys.stderr)
        return 2
    rows = {c: [] for c in SCHEMA} | {"prompts": prompt_rows(tasks, split)}
    test = sorted(r["task_id"] for r in rows["prompts"] if r["split"] == "test")
    counts = write(rows, args.out, {"version": DATASET_VERSION, "prompt_version": prompt.PROMPT_VERSION,
                                    "eval_fraction": split.eval_fraction, "eval_tasks": sorted(split.eval_tasks or []),
                                    "split_salt": SPLIT_SALT, "test_tasks": test, "source": "prompts"})
    print(f"wrote {args.out}: prompts {counts['prompts'].get('train', 0)}+{counts['prompts'].get('test', 0)} rows "
          f"(train+test)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
