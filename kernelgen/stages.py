"""The stage chain a kernel climbs, for rewards and datasets: parse < check < lower < interp < sim.

The repair loop (kernelgen.candidate) runs the interpreter before lowering and stops at the first failure, so
a kernel the interpreter rejects was never lowered. Training data and rewards rank "lowers to AscendC" below
"computes the right result", so for such a kernel lowering is run here afterwards (every dtype variant, the
same passes as the loop): `stage_results` then has a value for every stage up to the first failure in chain
order.
"""

from __future__ import annotations

from ascend_dsl import parse_text
from ascend_dsl.diagnostics import DslError
from lowering import lower

STAGES = ("parse", "check", "lower", "interp", "sim")


def lower_variants(code: str, file: str, target: str) -> tuple[bool, dict[str, str], str]:
    """Lower every dtype variant of the (already checked) kernel in `code`: (all lowered, the emitted files
    of the first variant, the diagnostics of the first failure)."""
    files: dict[str, str] = {}
    try:
        source = parse_text(code, file)[0]
        for i, dts in enumerate(source.dtype_variants):
            project = lower(source.instantiate(dts), target, file)[0]
            if i == 0:
                files = dict(project.files)
    except DslError as e:
        return False, files, e.render()
    except Exception as e:  # noqa: BLE001 - model-written kernels must never crash an export or a reward
        return False, files, f"error[INTERNAL]: lowering crashed: {type(e).__name__}: {e}"
    return True, files, ""


def stage_results(outcome: dict, lowered_after_interp: bool | None = None) -> dict[str, bool | None]:
    """Per stage: True passed, False failed, None not reached (or not requested: sim at level interp).
    `outcome` is an Outcome.summary(); `lowered_after_interp` is lower_variants' verdict for a kernel the
    interpreter rejected (None: not computed)."""
    failed = outcome.get("failed_stage")
    ran = {"parse": True, "check": outcome.get("parsed"), "interp": outcome.get("checked") and failed != "task",
           "sim": outcome.get("lowered") and outcome.get("level") in ("sim", "npu")}
    out: dict[str, bool | None] = {
        "parse": bool(outcome.get("parsed")),
        "check": bool(outcome.get("checked")) if ran["check"] else None,
        "interp": bool(outcome.get("interp_ok")) if ran["interp"] else None,
        "sim": bool(outcome.get("sim_ok")) if ran["sim"] else None,
    }
    if outcome.get("lowered"):
        out["lower"] = True
    elif failed == "lower":
        out["lower"] = False
    elif failed == "interp":
        out["lower"] = lowered_after_interp
    else:
        out["lower"] = None
    return {s: out[s] for s in STAGES}


def highest_stage(stages: dict[str, bool | None]) -> str | None:
    """The last stage of the unbroken run of passes from `parse` (None: it does not even parse)."""
    top = None
    for s in STAGES:
        if not stages.get(s):
            break
        top = s
    return top
