"""Rule-less constructs: a model writes the compute stage of an extern op (ascend_dsl/extern_ops.py) for one
tile, inside a template slot whose signature, buffers, sizes and dtypes the compiler fixes
(lowering/assist/slots.py). Per (op, dtype) the kernel uses, per round:

    answer --admission--> the body is in the admitted C++ subset (lowering/assist/admit.py: no
    preprocessor, asm, libc or system calls, pointers, ...) --emulator--> compiled into a check kernel
    (`y = op(x0, ...)` over random tiles and edge values) and run sandboxed (npu_harness/sandbox.py: no
    network, a scratch directory as the only writable path, CPU / memory / time limits) with every
    emulator check on, against the PyTorch reference

Accepted code goes into the library keyed by the op's signature (lowering/assist/library.py) and is
reused without a model (admitted again on every use); a rejected answer goes back to the model with the
reason. An extern op left without accepted code is a located UNSUPPORTED error (`require`).
"""

from __future__ import annotations

import json
import re

from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError
from ascend_dsl.diagnostics import ErrorCode as E
from ascend_dsl.dtypes import DType
from ascend_dsl.extern_ops import ExternOp, active
from ascend_dsl.ops import OPS

from ..context import PassContext
from ..pipeline import run_pipeline
from ..targets import get_target
from . import slots as S
from .admit import VECTOR_APIS, Rejected, admit
from .api import AnswerKey, Assistant, ask
from .prompt import prompt_hash

DECISION = "construct"
CHECKS = ("answer", "admission", "emulator")

INTRO = """\
You write AscendC for the compute stage of one UB tile of an element-wise operation that the ascend-dsl
compiler has no rule for. The compiler fixes the slot (signature, buffers, sizes, dtypes); you write only
the function body. Nothing you write is trusted: it must pass a static admission check (an AscendC subset),
then it is compiled into a check kernel and run in the emulator, sandboxed, with every check on (UB bounds,
uninitialised reads, pipe races), on random tiles and edge values against the PyTorch reference below."""

API_DOC = """\
Admitted: the slot's parameters; scalar locals of float, half, T, int32_t, uint32_t, int64_t, uint64_t,
int16_t, uint16_t, bool, auto (one name per declaration, no arrays); for / while / if / else; static_cast;
dst.GetValue(i), dst.SetValue(i, v), srcK.GetValue(i), x.GetSize(); PipeBarrier<PIPE_V>(); and the vector
instructions (count form, dst first; a source may equal dst):
  Add/Sub/Mul/Div/Max/Min(dst, a, b, count)        Adds/Muls/Maxs/Mins(dst, a, scalar, count)
  Exp/Ln/Abs/Sqrt/Rsqrt/Reciprocal/Relu(dst, a, count)   LeakyRelu(dst, a, slope, count)
  Duplicate(dst, scalar, count)   Cast(dst, a, RoundMode::CAST_NONE, count)
Not admitted: anything else (preprocessor, #include, asm, strings, pointers, '&', '->', other functions,
libc or system calls, std::, writes to a source)."""


def _extern_uses(kernel: ir.Kernel) -> list[tuple[ExternOp, DType, ir.Op]]:
    out: dict[tuple[str, DType], tuple[ExternOp, DType, ir.Op]] = {}
    for s in ir.walk(kernel.body):
        if isinstance(s, ir.VALUE_STMTS):
            for e in ir.walk_expr(s.value):
                if isinstance(e, ir.Op) and OPS.get(e.op) is not None and OPS[e.op].extern:
                    op = active(e.op)
                    if op is not None:
                        out.setdefault((e.op, e.type.dtype), (op, e.type.dtype, e))
    return list(out.values())


def _check_usage(uses) -> None:
    for op, _, e in uses:
        if e.type.kind is not ir.Kind.TILE or any(a.type.kind is not ir.Kind.TILE for a in e.args):
            raise DslError.at(E.UNSUPPORTED, f"extern op '{op.name}' takes tiles only (its compute stage works on UB "
                              "tiles)", e.span, "apply it to loaded tiles; combine scalars outside it")
        if any(x.type.layout is not ir.Layout.FLAT for x in (e, *e.args)):
            raise DslError.at(E.UNSUPPORTED, f"extern op '{op.name}' runs element-wise over flat tiles only (rows "
                              "carry UB padding its compute stage would see)", e.span,
                              "use it in a flat tile loop: split(N) over a 1-D view")


def run(kernel: ir.Kernel, ctx: PassContext) -> None:
    """Find accepted code for every extern op of the kernel (library, else the model); into `ctx.slots`."""
    a: Assistant | None = ctx.assistant
    uses = _extern_uses(kernel)
    if not uses or a is None:
        return
    _check_usage(uses)
    for op, dtype, _ in uses:
        if (op.name, dtype) in ctx.slots:
            continue
        record = a.library.get(op, dtype, ctx.target.name) if a.library is not None and not a.refresh else None
        if record is not None:
            try:
                admit(record["code"], S.params(op))
            except (Rejected, KeyError, TypeError) as e:
                a.notes.append(f"{op.name} ({dtype}): the library's code is not admitted ({e}); ignored")
                record = None
        if record is not None:
            ctx.slots[(op.name, dtype)] = S.definition(op, dtype, record["code"])
            ctx.decisions.append(record)
            a.notes.append(f"{op.name} ({dtype}): compute stage from the library (accepted from {record['model']}); "
                           "no model consulted")
            continue
        if a.model is None or a.slot_evaluator is None:
            continue
        _decide(op, dtype, ctx, a)


def require(kernel: ir.Kernel, ctx: PassContext) -> None:
    """Every extern op needs accepted code: else a located error saying how to get it."""
    for op, dtype, e in _extern_uses(kernel):
        if (op.name, dtype) not in ctx.slots:
            raise DslError.at(E.UNSUPPORTED, f"'{op.name}' ({dtype}) has no lowering rule: it is an extern op (reference "
                              f"in {op.file}) and no checked compute stage for it is at hand", e.span,
                              "lower with --assist PROVIDER to have a model write it (checked before use), or "
                              "--assist cache to take it from the library of accepted code")


def lower_with_slots(kernel: ir.Kernel, target, source_name: str, slots: dict) -> tuple[object, PassContext]:
    """Lower a kernel whose extern ops have the given slot definitions ((name, dtype) -> C++)."""
    ctx = PassContext(get_target(target) if isinstance(target, str) else target, source_name)
    ctx.slots = dict(slots)
    require(kernel, ctx)
    ctx.lowered = run_pipeline(kernel, ctx)
    ctx.project = S.inject(ctx.project, list(ctx.slots.values()))
    return ctx.project, ctx


def _body(answer: str) -> str:
    fenced = re.search(r"```(?:cpp|c\+\+|c)?\s*\n(.*?)```", answer, re.S)
    if fenced:
        return fenced.group(1)
    text = answer.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return text
        if isinstance(data, dict) and isinstance(data.get("body"), str):
            return data["body"]
    return text


GRAMMAR = 'start: "```cpp\\n" /[^`]+/ "```"\n'


def render(op: ExternOp, dtype: DType, max_tile: int, attempts: list[tuple[int, str, str]]) -> str:
    parts = [INTRO,
             f"## The operation: {op.name} on {dtype} tiles ({op.arity} source(s)), PyTorch reference\n"
             f"```python\n{op.source.strip()}\n```",
             "## The slot\n```cpp\n" + S.signature(op, dtype) + "\n{\n    using T = " + dtype.ctype
             + ";\n    // your body\n}\n```\n" + S.contract(op, dtype) + f" Tiles hold at most {max_tile} elements.",
             "## " + API_DOC,
             f"## The check\nThe body runs in a kernel `y = {op.name}(x0, ...)` over random values and edge values "
             "(zeros, signs, tiny and large magnitudes) in tiles of every length up to the largest, and must match "
             "the reference within the dtype's tolerance (f32: atol = rtol = 1e-4)."]
    if attempts:
        parts.append("## Earlier answers\n" + "\n".join(
            f"round {r}:\n```cpp\n{body.strip()[:1500]}\n```\n  -> {verdict}" for r, body, verdict in attempts))
    parts.append("Answer with the body only, in one ```cpp fenced block.")
    return "\n\n".join(parts) + "\n"


def _decide(op: ExternOp, dtype: DType, ctx: PassContext, a: Assistant) -> None:
    attempts: list[tuple[int, str, str]] = []
    entries: list[dict] = []
    accepted = None
    complete = True
    for rnd in range(a.rounds):
        text = render(op, dtype, a.slot_evaluator.max_tile(op, dtype), attempts)
        key = AnswerKey(op.name, f"{DECISION}_{dtype.value}", rnd)
        answer = ask(a, key, text, GRAMMAR, f"{op.name} ({dtype})", f"{key.stem}.txt")
        if answer is None:
            complete = False
            break
        body = _body(answer)
        entry = {"round": rnd, "prompt_sha256": prompt_hash(text), "code": body[:4000]}
        passed = ["answer"]
        try:
            admit(body, S.params(op))
        except Rejected as e:
            verdict = f"rejected (admission): {e.reason}"
            entries.append({**entry, "checks": passed, "verdict": "rejected", "failed": "admission", "reason": e.reason})
            attempts.append((rnd, body, verdict))
            continue
        passed.append("admission")
        ev = a.slot_evaluator.evaluate(op, dtype, S.definition(op, dtype, body))
        if not ev.ok:
            entries.append({**entry, "checks": passed, "verdict": "rejected", "failed": "emulator", "reason": ev.reason})
            attempts.append((rnd, body, f"rejected (emulator): {ev.reason}"))
            continue
        passed.append("emulator")
        entries.append({**entry, "checks": passed, "verdict": "accepted"})
        accepted = body
        break
    record = {"decision": DECISION, "op": op.name, "dtype": dtype.value, "target": ctx.target.name,
              "signature": op.signature_hash,
              "model": a.model.name, "code": accepted, "proposals": entries}
    ctx.decisions.append(record)
    if accepted is None:
        a.notes.append(f"{op.name} ({dtype}): no compute stage accepted after {len(entries)} answer(s)")
        return
    ctx.slots[(op.name, dtype)] = S.definition(op, dtype, accepted)
    a.notes.append(f"{op.name} ({dtype}): compute stage from {a.model.name} accepted in round {entries[-1]['round']} "
                   "(admitted, emulator PASS against the reference)")
    if complete and a.library is not None:
        a.library.put(op, dtype, ctx.target.name, record)


__all__ = ["CHECKS", "DECISION", "GRAMMAR", "VECTOR_APIS", "lower_with_slots", "render", "require", "run"]
