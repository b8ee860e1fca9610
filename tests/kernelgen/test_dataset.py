"""Training data (kernelgen.dataset, kernelgen.gallery_data, ascend-eval --export-dataset): records load with
Hugging Face `datasets`, the split holds task families apart, rows are deduplicated, and no prompt contains a
reference solution (the leak guard is shown firing on a planted leak)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from kg_helpers import GALLERY, REPO, gallery_answer, write_replay

from kernelgen.candidate import evaluate
from kernelgen.cli_eval import main as eval_main
from kernelgen.dataset import SplitRule, _squash, build_rows, family, normalize
from kernelgen.gallery_data import main as gallery_main
from kernelgen.mutants import OPERATORS, mutants
from kernelgen.tasks import discover, load_task


def _load(folder: Path, config: str):
    datasets = pytest.importorskip("datasets")
    return datasets.load_dataset(str(folder), config)


def _prompt_text(row: dict) -> str:
    return _squash("\n".join(m["content"] for m in row["prompt"]))


def test_families_and_split():
    assert [family(n) for n in ("leaky_relu_arg", "layer_norm_module", "rms_norm_groups", "relu", "_arg")] == \
        ["leaky_relu", "layer_norm", "rms_norm", "relu", "_arg"]
    rule = SplitRule(eval_tasks=frozenset({"activation/leaky_relu"}))
    assert (rule.of("leaky_relu_arg"), rule.of("leaky_relu"), rule.of("relu")) == ("test", "test", "train")
    names = [p.stem for p in REPO.glob("examples/*/*.adsl")]
    held = [n for n in names if SplitRule(0.2).of(n) == "test"]
    assert held == [n for n in names if SplitRule(0.2).of(n) == "test"]  # deterministic
    assert 0.05 < len(held) / len(names) < 0.4
    assert all(SplitRule(0.2).of(n) == SplitRule(0.2).of(family(n)) for n in names)  # a family stays together
    assert {SplitRule(0.0).of(n) for n in names} == {"train"} and {SplitRule(1.0).of(n) for n in names} == {"test"}
    with pytest.raises(ValueError):
        SplitRule(1.5)


def test_mutants_fail_where_intended():
    """Each operator makes the mistake it names: the checker or the interpreter says so."""
    task = load_task(GALLERY / "relu.py")
    kernel = gallery_answer("relu")
    got = {name: evaluate(f"```python\n{m}```", task, level="interp", seeds=[0], cap=4096)
           for name, m in mutants(kernel)}
    assert set(got) == {name for name, _ in OPERATORS}
    assert {n: (o.failed_stage, o.codes) for n, o in got.items()} == {
        "no-load": ("check", ["INDEX"]), "tile-wrong-var": ("check", ["ARGS"]),
        "undefined-name": ("check", ["UNDEFINED-NAME"]), "wrong-op": ("interp", ["MISMATCH"]),
        "bad-tile-size": ("check", ["TILE-ALIGN"])}
    assert mutants(kernel, 2) == mutants(kernel)[:2]


def _attempt(code: str, rnd: int, **outcome) -> dict:
    o = {"code": code, "parsed": True, "checked": True, "interp_ok": True, "lowered": True, "sim_ok": False,
         "level": "interp", "failed_stage": None, "diagnostics": "", "codes": [], "estimate_us": None, "passed": True}
    o.update(outcome)
    return {"round": rnd, "response": f"```python\n{code}```", "outcome": o, "model": "m",
            "prompt_version": "kernelgen-prompt-2"}


def test_leak_guard_fires_on_a_planted_leak(tmp_path):
    """A failed round that answered the reference kernel puts it into the next round's prompt: those rows are
    dropped and counted, the others are kept."""
    root = tmp_path / "tasks" / "activation"
    root.mkdir(parents=True)
    for suffix in (".py", ".adsl"):
        (root / f"relu{suffix}").write_text((GALLERY / f"relu{suffix}").read_text())
    task = load_task(root / "relu.py")
    reference = gallery_answer("relu")
    other = reference.replace('"""ReLU: y = max(x, 0)."""', '"""ReLU again."""')
    records = [{"task": task.id, "sample": 0, "attempts": [
        _attempt(reference, 0, passed=False, failed_stage="interp", interp_ok=False, lowered=False,
                 diagnostics="error[MISMATCH]: planted", codes=["MISMATCH"]),
        _attempt(other, 1)]}]
    rows, dropped = build_rows(records, [task], split=SplitRule(0.0))
    assert dropped["leaks"] == 2  # round 1's attempt and the repair pair both show the reference in the prompt
    assert [r["round"] for r in rows["attempts"]] == [0] and rows["repair"] == []
    assert len(rows["sft"]) == 1 and _squash(reference) not in _prompt_text(rows["sft"][0])
    assert rows["attempts"][0]["stages"]["lower"] is True  # lowered after the interpreter's rejection


@pytest.mark.slow
def test_gallery_dataset(tmp_path, capsys):
    """The gallery command on two tasks (one held out by family), with two mutants each, at level sim."""
    root = tmp_path / "gallery" / "activation"
    root.mkdir(parents=True)
    for name in ("relu", "leaky_relu_arg"):
        for suffix in (".py", ".adsl"):
            (root / f"{name}{suffix}").write_text((GALLERY / f"{name}{suffix}").read_text())
    out = tmp_path / "data"
    assert gallery_main([str(tmp_path / "gallery"), "-o", str(out), "--mutants", "2", "--eval-tasks", "leaky_relu",
                         "--cap", "65536", "--no-progress"]) == 0
    assert "wrote dataset" in capsys.readouterr().out
    meta = json.loads((out / "meta.json").read_text())
    assert meta["test_tasks"] == ["activation/leaky_relu_arg"] and meta["train_tasks"] == ["activation/relu"]
    assert meta["dropped"] == {"duplicates": 0, "leaks": 0}
    sets = {c: _load(out, c) for c in ("attempts", "sft", "repair", "prompts")}
    assert {c: {s: len(d[s]) for s in d} for c, d in sets.items()} == {
        "attempts": {"train": 3, "test": 3}, "sft": {"train": 1, "test": 1}, "repair": {"train": 2, "test": 2},
        "prompts": {"train": 1, "test": 1}}

    # no prompt shows a reference solution: neither its own task's, nor a held-out family's (leaky_relu is
    # not in this export, but its family is held out)
    refs = {n: _squash(gallery_answer(n)) for n in ("relu", "leaky_relu_arg", "leaky_relu")}
    for config, d in sets.items():
        for split in d:
            for row in d[split]:
                text = _prompt_text(row)
                assert refs[row["task_name"]] not in text, (config, row["task_id"])
                assert refs["leaky_relu_arg"] not in text and refs["leaky_relu"] not in text
                assert row["split"] == split
    assert {r["task_id"] for r in sets["prompts"]["test"]} == {"activation/leaky_relu_arg"}

    by_origin = {r["origin"]: r for r in sets["attempts"]["train"]}
    good = by_origin["gallery"]
    assert good["passed"] and good["highest_stage"] == "sim" and good["stages"]["sim"] is True
    assert good["estimate_us"] > 0 and 1.0 < good["reward"] <= 1.5
    assert any(f["path"].endswith(".cpp") and "AscendC" in f["content"] for f in good["ascendc"])
    assert normalize(good["dsl"]) == normalize(gallery_answer("relu")) and good["task_source"].startswith("import")
    bad = by_origin["gallery-mutant:no-load"]
    assert (bad["failed_stage"], bad["codes"], bad["highest_stage"], bad["reward"]) == ("check", ["INDEX"], "parse", 0.1)
    assert bad["ascendc"] == [] and "error[INDEX]" in bad["diagnostics"]

    sft = sets["sft"]["train"][0]
    assert [m["role"] for m in sft["prompt"]] == ["system", "user"] and sft["completion"][0]["role"] == "assistant"
    assert normalize(sft["completion"][0]["content"].removeprefix("```python\n").removesuffix("```")) == \
        normalize(gallery_answer("relu"))
    for rep in sets["repair"]["train"]:
        assert [m["role"] for m in rep["prompt"]] == ["system", "user", "assistant", "user"]
        assert rep["origin"] == "other-sample" and rep["failing_origin"].startswith("gallery-mutant:")
        assert f"error[{rep['codes'][0]}]" in rep["prompt"][-1]["content"]
        assert rep["completion"] == sft["completion"]
    row = sets["prompts"]["train"][0]
    assert row["task_files"] == [{"name": "relu.py", "content": (GALLERY / "relu.py").read_text()}]


@pytest.mark.slow
def test_eval_export(task_tree, tmp_path, capsys):
    """ascend-eval --export-dataset: a prose answer of relu is repaired by relu's other (correct) sample;
    elu, answered with relu's kernel, lowers but mismatches (reward 0.3) and has no correct kernel to pair."""
    replay = write_replay(tmp_path / "r.jsonl", [
        {"task": "relu", "sample": 0, "text": gallery_answer("relu")},
        {"task": "relu", "sample": 1, "text": "As an AI model I cannot write kernels."},
        {"task": "elu", "text": gallery_answer("relu")}])
    out = tmp_path / "data"
    args = [str(task_tree), "--provider", "replay", "--replay", str(replay), "--samples", "2", "--level", "interp",
            "--trials", "1", "--cap", "4096", "-o", str(tmp_path / "rep"), "--no-progress", "--export-dataset",
            str(out), "--eval-fraction", "0"]
    assert eval_main(args) == 0
    assert "wrote dataset" in capsys.readouterr().out
    attempts = _load(out, "attempts")["train"]
    assert len(attempts) == 3  # elu's two identical answers are one row
    elu = next(r for r in attempts if r["task_name"] == "elu")
    assert (elu["failed_stage"], elu["highest_stage"], elu["reward"]) == ("interp", "lower", 0.3)
    assert elu["stages"]["sim"] is None  # level interp: the emulator never ran
    repair = _load(out, "repair")["train"]
    assert len(repair) == 1 and repair[0]["origin"] == "other-sample" and repair[0]["codes"] == ["GEN-NO-CODE"]
    assert repair[0]["prompt"][2]["content"] == "As an AI model I cannot write kernels."
    assert not list((out / "sft").glob("test*.jsonl"))  # --eval-fraction 0: nothing held out
    assert [t.name for t in discover(task_tree)] == ["elu", "relu"]


def test_eval_export_rejects_a_bad_fraction_before_any_work(task_tree, tmp_path, capsys):
    assert eval_main([str(task_tree), "--provider", "replay", "--replay", str(tmp_path / "none.jsonl"),
                      "--export-dataset", str(tmp_path / "d"), "--eval-fraction", "2"]) == 2
    assert "eval fraction" in capsys.readouterr().err


def test_rewritten_folder_loads_fresh_rows(tmp_path):
    """`datasets` caches a local folder by its card, not its files: the export names files by content, so two
    exports into folders of the same name (or one folder rewritten) never load each other's rows."""
    from kernelgen.dataset import SCHEMA, write

    def rows(name: str) -> dict:
        row = {"task_id": f"activation/{name}", "category": "activation", "task_name": name, "task_hash": name,
               "split": "train", "task_source": "", "task_files": [], "prompt": [{"role": "user", "content": name}]}
        return {c: [] for c in SCHEMA} | {"prompts": [row]}

    for parent, name in (("a", "relu"), ("b", "elu"), ("a", "gelu")):
        write(rows(name), tmp_path / parent / "data", {})
        assert _load(tmp_path / parent / "data", "prompts")["train"][0]["task_name"] == name
    assert len(list((tmp_path / "a" / "data" / "prompts").glob("*.jsonl"))) == 1  # the old file is gone


def _gallery_tree(tmp_path: Path, names: tuple[str, ...]) -> Path:
    root = tmp_path / "tasks"
    (root / "activation").mkdir(parents=True)
    for name in names:
        for suffix in (".py", ".adsl"):
            (root / "activation" / f"{name}{suffix}").write_text((GALLERY / f"{name}{suffix}").read_text())
    return root


def test_leak_guard_fires_on_a_held_out_kernel(tmp_path):
    """A training task's repair prompt that shows a held-out task's reference kernel (the model answered elu's
    kernel for relu) is dropped; a record whose task reference failed says nothing about the kernel: no rows."""
    root = _gallery_tree(tmp_path, ("relu", "elu"))
    relu, elu = load_task(root / "activation" / "relu.py"), load_task(root / "activation" / "elu.py")
    records = [
        {"task": relu.id, "sample": 0, "attempts": [
            _attempt(gallery_answer("elu"), 0, passed=False, failed_stage="interp", interp_ok=False, lowered=False,
                     diagnostics="error[MISMATCH]: elu is not relu", codes=["MISMATCH"]),
            _attempt(gallery_answer("relu").replace("ReLU: y", "ReLU, y"), 1)]},
        {"task": elu.id, "sample": 0, "attempts": [
            _attempt(gallery_answer("elu"), 0, passed=False, failed_stage="task", codes=["TASK-ERROR"])]}]
    rows, dropped = build_rows(records, [relu, elu], split=SplitRule(eval_tasks=frozenset({"elu"})))
    # relu round 1 (its prompt holds elu's kernel as the failed answer) and the repair pair built on it
    assert dropped == {"duplicates": 0, "leaks": 2}
    assert [(r["task_name"], r["round"]) for r in rows["attempts"]] == [("relu", 0)]
    assert rows["attempts"][0]["split"] == "train" and rows["repair"] == [] and len(rows["sft"]) == 1
    assert [r["task_name"] for r in rows["prompts"]] == ["relu"]  # elu's only attempt: its reference failed
    held = _squash(gallery_answer("elu"))
    assert all(held not in _prompt_text(r) for config in rows.values() for r in config)


@pytest.mark.slow
def test_prompts_command(tmp_path, capsys):
    """python -m kernelgen.dataset TASKS -o DIR: the prompts config alone, split by family, loadable; bad input
    is a located error and exit 2."""
    from kernelgen.dataset import main as dataset_main

    root = _gallery_tree(tmp_path, ("relu", "elu"))
    out = tmp_path / "prompts"
    assert dataset_main([str(root), "-o", str(out), "--eval-tasks", "elu"]) == 0
    assert "prompts 1+1 rows" in capsys.readouterr().out
    d = _load(out, "prompts")
    assert [r["task_name"] for r in d["train"]] == ["relu"] and [r["task_name"] for r in d["test"]] == ["elu"]
    relu = d["train"][0]
    assert relu["task_files"] == [{"name": "relu.py", "content": (GALLERY / "relu.py").read_text()}]
    assert [m["role"] for m in relu["prompt"]] == ["system", "user"]
    for ref in ("relu", "elu"):  # neither its own kernel nor the held-out one
        assert _squash(gallery_answer(ref)) not in _prompt_text(relu)
    assert json.loads((out / "meta.json").read_text())["test_tasks"] == ["activation/elu"]

    (tmp_path / "empty").mkdir()
    assert dataset_main([str(tmp_path / "empty"), "-o", str(out)]) == 2
    assert "error[TASK-ERROR]" in capsys.readouterr().err
    assert dataset_main([str(root), "-o", str(out), "--eval-fraction", "-1"]) == 2
    assert "eval fraction" in capsys.readouterr().err


def test_gallery_command_bad_input(tmp_path, capsys):
    (tmp_path / "empty" / "activation").mkdir(parents=True)
    shutil.copy(GALLERY / "relu.py", tmp_path / "empty" / "activation")  # a task without a kernel: not a gallery task
    assert gallery_main([str(tmp_path / "empty"), "-o", str(tmp_path / "d"), "--no-progress"]) == 2
    assert "error[TASK-ERROR]: no gallery task" in capsys.readouterr().err
    assert gallery_main([str(GALLERY.parent), "-o", str(tmp_path / "d"), "--mutants", str(len(OPERATORS) + 1)]) == 2
    assert "--mutants must be" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()  # nothing written before the arguments are known good
