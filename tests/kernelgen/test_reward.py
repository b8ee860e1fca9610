"""The GRPO reward (kernelgen.reward): its exact scale, the stage chain, the sandbox's time and memory limits,
the kernel-hash cache (memory and disk), parallel judging, and TRL's calling convention."""

from __future__ import annotations

import pytest
from kg_helpers import GALLERY, gallery_answer

from kernelgen.mutants import no_load, wrong_op
from kernelgen.reward import STAGE_REWARD, KernelReward, completion_text, outcome_reward, reward_value, sandbox_judge
from kernelgen.stages import STAGES, highest_stage, stage_results

RELU_FILES = [{"name": "relu.py", "content": (GALLERY / "relu.py").read_text()}]


def _fenced(code: str) -> str:
    return f"```python\n{code}```"


def _chain(top: str | None) -> dict:
    """Stages passed up to `top`, the next one failed, the rest not reached."""
    out, failed = {}, False
    for s in STAGES:
        if failed:
            out[s] = None
        elif top is not None and STAGES.index(s) <= STAGES.index(top):
            out[s] = True
        else:
            out[s], failed = False, True
    return out


def test_scale_is_exact():
    assert [reward_value(_chain(top), None) for top in (None, "parse", "check", "lower", "interp")] == \
        [0.0, 0.1, 0.2, 0.3, 0.6]
    assert reward_value(_chain("sim"), None) == 1.0  # no estimate: no speed term, never invented
    assert reward_value(_chain("sim"), 0.5) == 1.25
    assert reward_value(_chain("sim"), 1.0) == 1.5
    assert reward_value(_chain("sim"), 7.0) == 1.5  # clamped
    assert reward_value(_chain("interp"), 1.0) == 0.6  # the speed term only for a correct kernel
    assert sorted(STAGE_REWARD.values()) == list(STAGE_REWARD.values())  # parse < check < lower < interp < sim


def test_chain_breaks_at_first_failure():
    # the interpreter accepts it but lowering fails: lower < interp, so the chain stops at check
    stages = {"parse": True, "check": True, "lower": False, "interp": True, "sim": None}
    assert highest_stage(stages) == "check" and reward_value(stages, None) == 0.2


def test_stage_results_from_outcomes():
    base = {"parsed": True, "checked": True, "level": "sim"}
    interp_fail = {**base, "interp_ok": False, "lowered": False, "failed_stage": "interp"}
    assert stage_results(interp_fail, True) == {"parse": True, "check": True, "lower": True, "interp": False,
                                                "sim": None}
    assert stage_results(interp_fail, None)["lower"] is None  # not computed: never guessed
    lower_fail = {**base, "interp_ok": True, "lowered": False, "failed_stage": "lower"}
    assert stage_results(lower_fail) == {"parse": True, "check": True, "lower": False, "interp": True, "sim": None}
    check_fail = {"parsed": True, "checked": False, "failed_stage": "check", "level": "sim"}
    assert stage_results(check_fail) == {"parse": True, "check": False, "lower": None, "interp": None, "sim": None}
    interp_level = {**base, "interp_ok": True, "lowered": True, "failed_stage": None, "level": "interp"}
    assert stage_results(interp_level)["sim"] is None


def test_no_reward_for_broken_tasks_and_tool_crashes():
    ok = _chain("check")
    assert outcome_reward({"failed_stage": "task", "codes": ["TASK-ERROR"]}, ok) is None
    assert outcome_reward({"failed_stage": "interp", "codes": ["INTERNAL"]}, ok) is None
    assert outcome_reward({"failed_stage": "lower", "codes": ["UB-CAPACITY"]}, ok) == 0.2
    assert KernelReward.reward_of({"sandbox": "TIMEOUT"}) == 0.0
    assert KernelReward.reward_of({"sandbox": "MEMORY-LIMIT"}) is None
    assert KernelReward.reward_of({"sandbox": "CRASH"}) is None


def test_completion_forms():
    assert completion_text("abc") == "abc"
    assert completion_text([{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]) == "ab"


def test_bad_settings_and_missing_column():
    with pytest.raises(ValueError, match="executor"):
        KernelReward(executor="slurm")
    with pytest.raises(ValueError, match="task_files"):
        KernelReward()(completions=["x"])


def test_no_code_scores_zero_without_a_process(monkeypatch):
    import kernelgen.reward as mod

    monkeypatch.setattr(mod, "sandbox_judge", lambda *a, **k: pytest.fail("no process for a response without code"))
    r = KernelReward()
    assert r(completions=["I am sorry, I cannot write kernels."], task_files=[RELU_FILES]) == [0.0]
    assert r.stats["no_code"] == 1


@pytest.mark.slow
def test_reward_as_trl_calls_it(tmp_path):
    """The keyword convention of TRL's GRPOTrainer (prompts, completions as chat messages, completion_ids, the
    dataset's columns, trainer_state, log_metric, log_extra); each distinct kernel judged once in a sandbox."""
    kernel = gallery_answer("relu")
    texts = [_fenced(kernel), _fenced(no_load(kernel)), _fenced(wrong_op(kernel)), "no code here", _fenced(kernel)]
    metrics, extra = {}, {}
    r = KernelReward(workers=2, cache_dir=tmp_path / "cache")
    out = r(prompts=[[{"role": "user", "content": "p"}]] * 5,
            completions=[[{"role": "assistant", "content": t}] for t in texts], completion_ids=[[1]] * 5,
            task_files=[RELU_FILES] * 5, category=["activation"] * 5, trainer_state=None,
            log_metric=lambda k, v: metrics.__setitem__(k, v), log_extra=lambda k, v: extra.__setitem__(k, v))
    assert out[1:4] == [0.1, 0.3, 0.0]  # no load: check fails; relu -> abs: interpreter mismatch (it lowers)
    assert 1.0 < out[0] <= 1.5 and out[4] == out[0]  # correct, plus the cost model's speed term
    assert r.stats == {"judged": 3, "cached": 0, "no_code": 1}  # the duplicate kernel was judged once
    assert metrics["kernel/sim_rate"] == 0.4 and metrics["kernel/parse_rate"] == 0.8
    assert extra["kernel_stage"] == ["sim", "parse", "lower", None, "sim"]
    # the speed term is the cost model's ideal fraction of the judged run
    res = r.judge([texts[0]], [RELU_FILES])[0]
    assert out[0] == pytest.approx(1.0 + 0.5 * res["outcome"]["ideal_fraction"])
    assert r.stats["cached"] == 1
    # a new instance (a new training process) reads the disk cache: no process started
    again = KernelReward(cache_dir=tmp_path / "cache")
    assert again(completions=texts, task_files=[RELU_FILES] * 5) == out
    assert again.stats["judged"] == 0 and again.stats["cached"] == 4


@pytest.mark.slow
def test_sandbox_limits_fire():
    job = {"response": _fenced(gallery_answer("relu")), "task_files": RELU_FILES, "category": "activation",
           "task_name": "relu", "level": "interp", "seeds": [0], "cap": 4096, "target": "ascend910b1"}
    timed_out = sandbox_judge(job, timeout=0.2)  # the worker cannot even start in 0.2 s: killed
    assert timed_out["sandbox"] == "TIMEOUT" and KernelReward.reward_of(timed_out) == 0.0
    starved = sandbox_judge(job, timeout=120, memory_bytes=200 << 20)  # torch cannot be mapped in 200 MB
    assert starved.get("sandbox") == "MEMORY-LIMIT" or "MEMORY-LIMIT" in starved["outcome"]["codes"]
    assert KernelReward.reward_of(starved) is None


@pytest.mark.slow
def test_broken_task_gets_no_reward():
    broken = RELU_FILES[0]["content"].replace("return torch.relu(x)", "raise RuntimeError('broken reference')")
    r = KernelReward(level="interp", cap=4096)
    assert r(completions=[_fenced(gallery_answer("relu"))], task_files=[[{"name": "relu.py", "content": broken}]]) \
        == [None]


def test_ray_missing_is_a_clear_error(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(RuntimeError, match=r"needs Ray: pip install"):
        KernelReward(executor="ray").judge([_fenced(gallery_answer("relu"))], [RELU_FILES])
