"""The prompt of a schedule decision: the kernel, its IR as `--dump-after schedule_stages` prints it, the
cost model's estimate with its per-pipe breakdown and bottleneck, the target's limits, the knobs' JSON
schema, the settings so far and every earlier proposal with its verdict."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from ascend_dsl.ops import CALLABLE, POW_EXPONENTS

from ..targets import Target
from ..tiling_rules import BLOCK_BYTES, MAX_BUFFERS_PER_QUEUE, REPEAT_BYTES

INTRO = """\
You tune the schedule of one AscendC kernel that ascend-dsl lowered from the DSL kernel below. Propose knob
settings that make the cost model's estimate faster. Nothing you propose is trusted: it is applied to the
kernel, passed through the constraint checker, lowered, run in the emulator against the PyTorch reference
at the shapes below, and kept only if the cost model estimates it faster than the best schedule so far.
Rejected proposals come back to you with the reason."""


@dataclass(frozen=True)
class Attempt:
    """One earlier round as the model sees it again."""

    round: int
    answer: str
    verdict: str


def target_limits(t: Target) -> str:
    return (f"{t.name}: UB {t.ub_bytes} B per core ({t.ub_budget} B for the kernel's buffers, the rest is API "
            f"scratch), {t.aiv} vector cores (AIV), {t.aic} cube cores (AIC), queues at most "
            f"{MAX_BUFFERS_PER_QUEUE} deep, DataCopy in {BLOCK_BYTES}-byte blocks, vector instructions in "
            f"{REPEAT_BYTES}-byte repeats, DataCopyPad {'available' if t.has_datacopypad else 'missing'}")


def estimate_text(est: dict, shapes: dict) -> str:
    sizes = ", ".join(f"{k}={v}" for k, v in shapes.items()) or "-"
    pipes = ", ".join(f"{k} {v:.3f} us" for k, v in est.get("pipes_us", {}).items())
    return (f"at {sizes}: {est.get('summary', '')}\n"
            f"slowest core: {pipes}; {est.get('iterations', '?')} iterations, "
            f"{'double-buffered overlap' if est.get('overlapped') else 'no overlap (pipes serialise)'}; "
            f"{est.get('blocks', '?')} blocks; bottleneck {est.get('bottleneck', '?')}\n"
            "(core time = slowest pipe + the other pipes / iterations when double-buffered, their sum when not; "
            "every DMA transfer and vector instruction also pays a fixed latency)")


def render(kernel_text: str, ir_text: str, est: dict, shapes: dict, target: Target, schema: dict,
           current: dict, attempts: list[Attempt]) -> str:
    parts = [INTRO,
             "## The kernel (DSL)\n" + kernel_text.rstrip(),
             "## Its lowering (IR after schedule_stages)\n" + ir_text.rstrip(),
             "## Cost model estimate of the best schedule so far (an ESTIMATE, not a measurement)\n"
             + estimate_text(est, shapes),
             "## Target\n" + target_limits(target),
             "## Answer: one JSON object of this schema (knobs left out keep their current values)\n"
             + json.dumps(schema, indent=1) + _ops_line(schema),
             "## Current settings\n" + json.dumps(current)]
    if attempts:
        parts.append("## Earlier proposals\n" + "\n".join(
            f"round {a.round}: {a.answer.strip()[:600]}\n  -> {a.verdict}" for a in attempts))
    parts.append('Answer with the JSON object only. Answer {"knobs": {}, "why": "..."} if nothing is faster.')
    return "\n\n".join(parts) + "\n"


def _ops_line(schema: dict) -> str:
    if not any(k.startswith("expr.") for k in schema["properties"]["knobs"]["properties"]):
        return ""
    return (f"\nDSL expressions (expr.*): the calls {', '.join(CALLABLE)}; the operators + - * / and comparisons; "
            f"x ** c for c in {', '.join(map(str, POW_EXPONENTS))}; float literals; the kernel's names and scalars.")


def prompt_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
