"""The generate-check-repair loop with the replay provider."""

from __future__ import annotations

import json

import pytest
from kg_helpers import GALLERY, gallery_answer, write_replay

from kernelgen.cli_gen import main as gen_main
from kernelgen.gen_grammar import GrammarSpec
from kernelgen.loop import LoopConfig, run_sample, trial_seeds
from kernelgen.providers import ProviderConfig, make_provider
from kernelgen.tasks import load_task

BROKEN_ELU = gallery_answer("elu").replace("exp(xt)", "exp(xq)")  # a located UNDEFINED-NAME error
WRONG_ELU = gallery_answer("elu").replace("1.0)))", "2.0)))")  # parses and checks, but computes the wrong thing


def _replay(tmp_path, records):
    return make_provider(ProviderConfig("replay", replay=str(write_replay(tmp_path / "r.jsonl", records))))


def test_repair_succeeds_on_second_round(tmp_path):
    provider = _replay(tmp_path, [{"task": "elu", "round": 0, "text": f"Here you go:\n```python\n{BROKEN_ELU}```"},
                                  {"task": "elu", "round": 1, "text": gallery_answer("elu")}])
    captured = []
    provider_complete = provider.complete

    def spy(messages, request):
        captured.append((messages, request))
        return provider_complete(messages, request)

    provider.complete = spy
    log: list[dict] = []
    cfg = LoopConfig(repair_rounds=2, level="interp", trials=1)
    res = run_sample(provider, load_task(GALLERY / "elu.py"), cfg, 0, log.append)
    assert res.passed and len(res.attempts) == 2 and log == res.attempts
    first = res.attempts[0]["outcome"]
    assert first["failed_stage"] == "check" and first["codes"] == ["UNDEFINED-NAME"]
    # the located diagnostic went back to the model in round 1
    feedback = captured[1][0][-1]["content"]
    assert "error[UNDEFINED-NAME]" in feedback and "elu.adsl:10:" in feedback and "^" in feedback
    assert captured[1][0][-2] == {"role": "assistant", "content": f"Here you go:\n```python\n{BROKEN_ELU}```"}
    assert captured[0][1].grammar is None  # replay does not constrain; the parse check does


def test_mismatch_summary_is_fed_back_and_budget_respected(tmp_path):
    provider = _replay(tmp_path, [{"task": "elu", "text": WRONG_ELU}])
    res = run_sample(provider, load_task(GALLERY / "elu.py"), LoopConfig(repair_rounds=1, level="interp", trials=1), 0)
    assert not res.passed and len(res.attempts) == 2
    o = res.final
    assert o.checked and not o.interp_ok and o.failed_stage == "interp"
    assert "error[MISMATCH]" in o.diagnostics and "outside atol=rtol" in o.diagnostics


def test_trials_use_fresh_seeds():
    cfg = LoopConfig(trials=3)
    assert len(set(trial_seeds(cfg, 0))) == 3
    assert not set(trial_seeds(cfg, 0)) & set(trial_seeds(cfg, 1))


def test_provider_failure_is_recorded_not_raised(tmp_path):
    provider = _replay(tmp_path, [{"task": "other", "text": "x"}])
    res = run_sample(provider, load_task(GALLERY / "elu.py"), LoopConfig(level="interp"), 0)
    assert not res.passed and res.error and "REPLAY-MISSING" in res.error


def test_grammar_is_sent_only_to_providers_that_use_it(tmp_path):
    class Constrained:
        name, model, supports_grammar = "fake", "fake", True

        def __init__(self):
            self.grammars = []

        def complete(self, messages, request):
            from kernelgen.providers import Completion

            self.grammars.append(request.grammar)
            return Completion(gallery_answer("relu"), constrained=True)

    p = Constrained()
    res = run_sample(p, load_task(GALLERY / "relu.py"), LoopConfig(level="interp", trials=1), 0)
    assert res.passed and p.grammars == [GrammarSpec().text()]


@pytest.mark.slow
def test_ascend_gen_writes_kernel_ascendc_and_log(tmp_path, capsys):
    replay = write_replay(tmp_path / "r.jsonl", [{"task": "elu", "round": 0, "text": BROKEN_ELU},
                                                 {"task": "elu", "round": 1, "text": gallery_answer("elu")}])
    out = tmp_path / "out"
    rc = gen_main([str(GALLERY / "elu.py"), "--provider", "replay", "--replay", str(replay), "-o", str(out),
                   "--repair-rounds", "1", "--trials", "1"])
    assert rc == 0, capsys.readouterr()
    assert (out / "elu.adsl").read_text() == gallery_answer("elu")
    assert (out / "ascendc" / "elu_kernel.cpp").is_file()
    log = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    assert [e["round"] for e in log] == [0, 1] and log[1]["outcome"]["sim_ok"]
    # the attempt log replays as is
    rc = gen_main([str(GALLERY / "elu.py"), "--provider", "replay", "--replay", str(out / "attempts.jsonl"),
                   "-o", str(tmp_path / "again"), "--repair-rounds", "1", "--level", "interp", "--trials", "1"])
    assert rc == 0


def test_ascend_gen_no_passing_kernel_exits_1(tmp_path, capsys):
    replay = write_replay(tmp_path / "r.jsonl", [{"text": "I cannot help with that."}])
    rc = gen_main([str(GALLERY / "relu.py"), "--provider", "replay", "--replay", str(replay), "-o",
                   str(tmp_path / "o"), "--repair-rounds", "1", "--samples", "2", "--level", "interp"])
    assert rc == 1
    captured = capsys.readouterr()
    assert "FAIL" in captured.out and "GEN-NO-CODE" in captured.err
    assert len((tmp_path / "o" / "attempts.jsonl").read_text().splitlines()) == 4


def test_ascend_gen_bad_provider_args_exit_2(tmp_path, capsys):
    assert gen_main([str(GALLERY / "relu.py"), "--provider", "replay"]) == 2
    assert "error[PROVIDER-ARGS]" in capsys.readouterr().err
    assert gen_main([str(GALLERY / "relu.py"), "--provider", "replay", "--replay", str(tmp_path / "none")]) == 2
