"""ascend-eval with the replay provider: per-category rates, pass@k, fast_p n/a, reports, cache resume,
local pool, Ray (when installed), the get_input_groups task variant."""

from __future__ import annotations

import json
import sys

import pytest
from kg_helpers import gallery_answer, write_replay

from kernelgen.candidate import evaluate
from kernelgen.cli_eval import main as eval_main
from kernelgen.report import NO_ESTIMATE
from kernelgen.tasks import discover, load_task


def _replay(tmp_path):
    # relu: sample 0 correct, sample 1 prose; elu: both samples wrong (relu's kernel)
    return write_replay(tmp_path / "r.jsonl", [
        {"task": "relu", "sample": 0, "text": gallery_answer("relu")},
        {"task": "relu", "sample": 1, "text": "As an AI model I cannot write kernels."},
        {"task": "elu", "text": gallery_answer("relu")},
    ])


def _args(task_tree, tmp_path, *extra):
    return [str(task_tree), "--provider", "replay", "--replay", str(_replay(tmp_path)), "--samples", "2", "-k", "1,2",
            "--level", "interp", "--trials", "1", "-o", str(tmp_path / "rep"), "--no-progress", *extra]


def test_discover_categories(task_tree):
    tasks = discover(task_tree)
    assert [(t.category, t.name, t.format) for t in tasks] == [("activation", "elu", "standard"),
                                                                ("activation", "relu", "standard")]
    assert discover(task_tree, {"matmul"}) == []


@pytest.mark.slow
def test_eval_report_and_resume(task_tree, tmp_path, capsys):
    assert eval_main(_args(task_tree, tmp_path)) == 0
    rep = json.loads((tmp_path / "rep" / "report.json").read_text())
    o = rep["overall"]
    assert (o["tasks"], o["samples"]) == (2, 4)
    assert o["parse_rate"] == 0.75 and o["check_rate"] == 0.75 and o["interp_rate"] == 0.25
    assert o["sim_rate"] is None  # level interp: the emulator was not run
    assert o["pass@k"]["1"] == pytest.approx((0.5 + 0.0) / 2)
    assert o["pass@k"]["2"] == pytest.approx((1.0 + 0.0) / 2)
    assert o["fast_p"]["1.0"] == NO_ESTIMATE  # no cost model estimate: never invented
    assert rep["categories"]["activation"]["samples"] == 4
    assert rep["tasks"]["activation/elu"]["failed_stages"] == ["interp", "interp"]
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| activation | 2 | 4 |" in md and "n/a (no cost model estimate)" in md
    png = (tmp_path / "rep" / "report.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert "pass@2" in capsys.readouterr().out
    # resume: every unit comes from the cache (the replay file is gone, so a rerun would fail)
    (tmp_path / "r.jsonl").unlink()
    args = _args(task_tree, tmp_path)
    args[args.index("--replay") + 1] = str(tmp_path / "r.jsonl")
    write_replay(tmp_path / "r.jsonl", [])
    assert eval_main(args) == 0
    rep2 = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert rep2["overall"]["pass@k"] == o["pass@k"]


def test_eval_bad_input_exit_2(tmp_path, capsys):
    assert eval_main([str(tmp_path), "--provider", "replay", "--replay", "x.jsonl"]) == 2
    assert "no task files" in capsys.readouterr().err


def test_eval_ray_missing_exits_2(task_tree, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    assert eval_main(_args(task_tree, tmp_path, "--executor", "ray")) == 2
    assert "pip install ray" in capsys.readouterr().err


@pytest.mark.slow
def test_eval_local_pool(task_tree, tmp_path):
    assert eval_main(_args(task_tree, tmp_path, "--workers", "2", "--no-cache")) == 0
    rep = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert rep["overall"]["pass@k"]["1"] == pytest.approx(0.25)


@pytest.mark.slow
def test_eval_ray(task_tree, tmp_path):
    pytest.importorskip("ray")
    assert eval_main(_args(task_tree, tmp_path, "--executor", "ray", "--no-cache")) == 0
    rep = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert rep["overall"]["pass@k"]["1"] == pytest.approx(0.25)


GROUPS_TASK = '''
import json
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_input_groups():
    groups = []
    with open("relu_groups.json") as f:
        for line in f:
            case = json.loads(line)
            spec = case["inputs"][0]
            groups.append([torch.randn(*spec["shape"], dtype=getattr(torch, spec["dtype"]))])
    return groups
'''


def test_input_groups_variant(tmp_path):
    d = tmp_path / "activation"
    d.mkdir()
    (d / "relu_groups.py").write_text(GROUPS_TASK)
    cases = [[17, 31], [4, 1024], [1000003]]
    (d / "relu_groups.json").write_text("".join(json.dumps({"inputs": [{"name": "x", "type": "tensor",
                                                                         "dtype": "float32", "shape": s}]}) + "\n"
                                                for s in cases))
    task = load_task(d / "relu_groups.py")
    assert task.format == "groups" and task.category == "activation"
    out = evaluate(gallery_answer("relu"), task, level="interp")
    assert out.passed, out.diagnostics
    wrong = evaluate(gallery_answer("relu").replace("relu(xt)", "xt"), task, level="interp")
    assert wrong.failed_stage == "interp" and "case 0" in wrong.diagnostics and "N=527" in wrong.diagnostics
