"""Rule-less constructs (lowering/assist/construct.py): extern ops declared with a PyTorch reference, the
model-written compute stage in its template slot, the static admission of that C++ (every forbidden
construct rejected with its reason), the sandbox the emulator runs it in (escape attempts fail), the check
against the reference, the library of accepted code, and end to end through `ascend-lower --assist` with
recorded answers (unsafe, wrong, out of bounds, then correct)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_dsl import load_file
from ascend_dsl.diagnostics import DslError
from ascend_dsl.dtypes import DType
from ascend_dsl.extern_ops import declared_in, registered
from lowering import lower
from lowering.assist import Assistant, SlotLibrary
from lowering.assist import slots as S
from lowering.assist.admit import Rejected, admit
from npu_harness import sandbox

REPO = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent / "assist"
MISH = HERE / "mish_act.adsl"
MISH_REF = HERE / "mish_act.py"
ROWS = HERE / "mish_rows.adsl"
PARAMS = ["dst", "src0", "count"]

#: A correct mish body: mish(x) = x * tanh(softplus(x)) = x * ((1+e^x)^2 - 1) / ((1+e^x)^2 + 1), and x
#: itself where e^x would overflow the square.
GOOD = """\
Exp(dst, src0, count);
Adds(dst, dst, static_cast<T>(1.0f), count);
Mul(dst, dst, dst, count);
for (uint32_t i = 0; i < count; i++) {
    float p = static_cast<float>(dst.GetValue(i));
    float x = static_cast<float>(src0.GetValue(i));
    float r = x;
    if (x < 20.0f) {
        r = x * (p - 1.0f) / (p + 1.0f);
    }
    dst.SetValue(i, static_cast<T>(r));
}
"""


# ----------------------------------------------------------------------------- admission


@pytest.mark.parametrize("body, words", [
    ('#include <cstdlib>\nRelu(dst, src0, count);', "preprocessor directive"),
    ("#define X 1\nRelu(dst, src0, count);", "preprocessor directive"),
    ("Relu(dst, src0, \\\ncount);", "backslash"),
    ('system("touch /tmp/x");', "string literal"),
    ("char c = 'a';", "character literal"),
    ("??=include <x>", "trigraph"),
    ("%:include <x>", "digraph"),
    ("asm(nop);", "inline assembly"),
    ("__asm__(nop);", "inline assembly"),
    ("system(0);", "'system' is not in the admitted subset"),
    ("fopen(0, 0);", "'fopen' is not in the admitted subset"),
    ("syscall(60);", "'syscall' is not in the admitted subset"),
    ("__builtin_trap();", "'__builtin_trap' is not in the admitted subset"),
    ("std::abort();", "the C++ standard library"),
    ("::exit(0);", "'::exit' names something outside the slot"),
    ("float* p = 0;", "'*' as a pointer"),
    ("auto q = &dst;", "'&'"),
    ("float v = *count;", "'*' as a pointer"),
    ("dst->SetValue(0, 0);", "'->'"),
    ("auto p = reinterpret_cast<float>(count);", "a pointer cast"),
    ("auto a = dst.GetPhyAddr();", "method 'GetPhyAddr'"),
    ("auto a = GetPhyAddr(dst);", "a raw UB address"),
    ("Muls(src0, src0, static_cast<T>(2.0f), count);", "src0, a read-only source"),
    ("src0.SetValue(0, static_cast<T>(0.0f));", "src0 is a read-only source"),
    ("float tmp[64];", "a local array"),
    ("} void evil() { Relu(dst, src0, count);", "unbalanced"),
    ("Relu(dst, src0, count); /* open", "unterminated comment"),
    ("goto end;", "goto"),
    ("auto p = new float;", "heap allocation"),
    ("uint32_t n = sizeof(dst);", "sizeof"),
    ("static float s = 0;", "static state"),
    ("extern int errno;", "a declaration outside the slot"),
    ("Relu(dst, src0, count) ; x" + "y" * 7000, "longer than"),
    # race attempts: a slot may not touch the pipes' ordering, DMA or cross-core sync (what could race)
    ("SetFlag<HardEvent::V_S>(EVENT_ID0);", "'SetFlag' is not in the admitted subset"),
    ("WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);", "'WaitFlag' is not in the admitted subset"),
    ("DataCopy(dst, src0, count);", "'DataCopy' is not in the admitted subset"),
    ("SyncAll();", "'SyncAll' is not in the admitted subset"),
    ("PipeBarrier<PIPE_ALL>();", "'PIPE_ALL' is not in the admitted subset"),
])
def test_admission_rejects_each_forbidden_construct(body, words):
    with pytest.raises(Rejected) as e:
        admit(body, PARAMS)
    assert words in e.value.reason, e.value.reason


@pytest.mark.parametrize("body", [
    GOOD,
    "Relu(dst, src0, count);  // a comment",
    "Cast(dst, src0, RoundMode::CAST_NONE, count);\nPipeBarrier<PIPE_V>();",
    "for (uint32_t i = 0; i < count; ++i) { dst.SetValue(i, src0.GetValue(i) * src0.GetValue(i)); }",
])
def test_admission_admits_the_documented_subset(body):
    admit(body, PARAMS)


def test_a_comment_cannot_hide_a_directive():
    with pytest.raises(Rejected, match="preprocessor"):
        admit("// #include <cstdlib>\nRelu(dst, src0, count);", PARAMS)


# ----------------------------------------------------------------------------- the sandbox


def _sandboxed(tmp_path: Path, script: str) -> subprocess.CompletedProcess:
    work = tmp_path / "scratch"
    work.mkdir(exist_ok=True)
    return subprocess.run(sandbox.command([sys.executable, "-I", "-S", "-c", script], work), capture_output=True,
                          text=True, timeout=60, check=False)


def test_sandbox_is_available_here():
    # the checks below and the construct step depend on it; where it cannot be made, model-written code is
    # refused (error[SANDBOX]), never run unconfined
    assert sandbox.unavailable() is None


@pytest.mark.parametrize("attempt", ["write_outside", "network", "remount", "signal_parent"])
def test_sandbox_escape_attempts_fail(tmp_path, attempt):
    outside = tmp_path / "escaped"
    scripts = {
        "write_outside": f"open({str(outside)!r}, 'w').write('x')",
        "network": "import socket; socket.create_connection(('1.1.1.1', 53), timeout=5)",
        "remount": ("import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
                    "r = libc.mount(None, b'/', None, 0x20 | 0x1000, None); "  # MS_REMOUNT|MS_BIND, writable
                    f"assert r != 0, 'remounted'; open({str(outside)!r}, 'w').write('x')"),
        "signal_parent": f"import os; os.kill({__import__('os').getpid()}, 0)",
    }
    r = _sandboxed(tmp_path, scripts[attempt])
    assert r.returncode != 0, r.stdout
    assert not outside.exists()
    expected = {"write_outside": "Read-only file system", "network": "unreachable", "remount": "Read-only file system",
                "signal_parent": "ProcessLookupError"}[attempt]
    assert expected in r.stderr, r.stderr
    # while its scratch directory stays writable
    ok = _sandboxed(tmp_path, "open('inside', 'w').write('x')")
    assert ok.returncode == 0 and (tmp_path / "scratch/inside").read_text() == "x"


# ----------------------------------------------------------------------------- declarations and lowering


def test_extern_ops_are_read_from_the_file_not_executed():
    (op,) = declared_in(MISH_REF)
    assert (op.name, op.arity, op.slot_api) == ("mish", 1, "MishSlot")
    assert "softplus" in op.source and len(op.signature_hash) == 64
    assert declared_in(MISH) == []  # a .adsl file declares none


def test_extern_op_without_checked_code_is_a_located_error():
    with registered(declared_in(MISH_REF)):
        kernel = load_file(MISH)[0].instantiate({})
        with pytest.raises(DslError) as e:
            lower(kernel, source_name=MISH.name)
    d = e.value.diagnostics[0]
    assert d.code == "UNSUPPORTED" and (d.span.line, d.span.col) == (10, 25) and "--assist" in d.hint


def test_extern_op_is_unknown_without_its_declaration():
    with pytest.raises(DslError) as e:
        load_file(MISH)[0].instantiate({})
    assert e.value.codes == ["UNKNOWN-OP"]


def test_extern_op_on_rows_is_a_located_error(tmp_path):
    with registered(declared_in(MISH_REF)):
        kernel = load_file(ROWS)[0].instantiate({})
        with pytest.raises(DslError) as e:
            lower(kernel, source_name=ROWS.name, assistant=Assistant(None, None, library=SlotLibrary(tmp_path)))
    assert e.value.codes == ["UNSUPPORTED"] and "flat tiles only" in e.value.diagnostics[0].message
    assert e.value.diagnostics[0].span.line == 9


def test_library_code_is_admitted_again_before_use(tmp_path):
    (op,) = declared_in(MISH_REF)
    lib = SlotLibrary(tmp_path)
    lib.put(op, DType.F32, "ascend910b1", {"decision": "construct", "model": "m", "code": "system(0);"})
    a = Assistant(None, None, library=lib)
    with registered([op]):
        kernel = load_file(MISH)[0].instantiate({})
        with pytest.raises(DslError, match="no checked compute stage"):
            lower(kernel, source_name=MISH.name, assistant=a)
    assert any("not admitted" in n for n in a.notes)
    # a good entry is used without a model, and the slot lands in the kernel file
    lib.put(op, DType.F32, "ascend910b1", {"decision": "construct", "model": "m", "code": GOOD})
    with registered([op]):
        project, ctx = lower(load_file(MISH)[0].instantiate({}), source_name=MISH.name,
                             assistant=Assistant(None, None, library=lib))
    cpp = project.files["mish_act_kernel.cpp"]
    assert cpp.count("__aicore__ inline void MishSlot(") == 1 and "MishSlot(yLocal, xLocal, count);" in cpp
    assert project.manifest["assist"][0]["code"] == GOOD
    # another signature (the reference changed) or target misses
    assert lib.get(op, DType.F32, "ascend910b4") is None and lib.get(op, DType.F16, "ascend910b1") is None


# ----------------------------------------------------------------------------- end to end (sandboxed emulator)


@pytest.mark.slow
def test_sandboxed_check_stops_an_escape_that_bypasses_admission(tmp_path):
    """Admission is the first line; the sandbox the second: a definition handed straight to the checker
    (never admitted) that writes outside its scratch directory and opens a socket fails, and writes nothing."""
    from npu_harness.assist_slots import SlotChecker

    (op,) = declared_in(MISH_REF)
    outside = tmp_path / "escaped"
    evil = "#include <cstdio>\n" + S.definition(op, DType.F32, GOOD).replace(
        "    using T = float;",
        "    using T = float;\n"
        f'    if (FILE* f = fopen("{outside}", "w")) {{ fputs("x", f); fclose(f); dst.SetValue(0, 12345); return; }}')
    ev = SlotChecker().evaluate(op, DType.F32, evil)
    assert not outside.exists()
    assert ev.ok, ev.reason  # the write failed inside the sandbox, so the rest computed mish


def _lower_cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kernelgen.cli_lower", *args], check=False, capture_output=True,
                          text=True, timeout=timeout, cwd=REPO)


def _files(d: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(d.iterdir()) if p.is_file()}


@pytest.mark.slow
def test_recorded_code_answers_each_checked_then_accepted_cached_and_reused(tmp_path):
    answers = [
        "```cpp\n#include <cstdlib>\nsystem(\"touch /tmp/pwned\");\n```",                    # unsafe: admission
        "```cpp\nRelu(dst, src0, count);\n```",                                               # wrong values
        "```cpp\nExp(dst, src0, count + 64);\nMuls(dst, dst, static_cast<T>(1.0f), count);\n```",  # out of bounds
        f"```cpp\n{GOOD}```",
    ]
    replay = tmp_path / "answers.jsonl"
    replay.write_text("".join(json.dumps({"task": "mish/construct_f32", "round": i, "text": a}) + "\n"
                              for i, a in enumerate(answers))
                      + json.dumps({"task": "mish_act/schedule", "round": 0, "text": '{"knobs": {}}'}) + "\n")
    cache, out = tmp_path / "cache", tmp_path / "out"
    r = _lower_cli(str(MISH), "-o", str(out), "--assist", "replay", "--replay", str(replay), "--assist-rounds", "4",
                   "--assist-cache", str(cache), "--assist-prompt", str(tmp_path / "prompts"), "--validate", "sim")
    assert r.returncode == 0, r.stderr + r.stdout
    assert "sim: PASS" in r.stdout
    record = json.loads((out / "manifest.json").read_text())["assist"][0]
    assert record["decision"] == "construct" and record["code"].strip() == GOOD.strip()
    got = [(p["verdict"], p.get("failed"), p["checks"]) for p in record["proposals"]]
    assert got == [("rejected", "admission", ["answer"]), ("rejected", "emulator", ["answer", "admission"]),
                   ("rejected", "emulator", ["answer", "admission"]),
                   ("accepted", None, ["answer", "admission", "emulator"])]
    reasons = [p.get("reason", "") for p in record["proposals"]]
    assert "preprocessor" in reasons[0] and "y: MISMATCH" in reasons[1] and "error[UB-OOB]" in reasons[2], reasons
    assert all(len(p["prompt_sha256"]) == 64 for p in record["proposals"])
    last = (tmp_path / "prompts/mish.construct_f32.r3.prompt.md").read_text()
    assert "rejected (admission)" in last and "rejected (emulator)" in last and "softplus" in last
    # the accepted code is in the library: a rebuild needs no model (the replay file is gone) and is identical
    replay.unlink()
    again = tmp_path / "again"
    r = _lower_cli(str(MISH), "-o", str(again), "--assist", "cache", "--assist-cache", str(cache))
    assert r.returncode == 0, r.stderr
    assert "from the library" in r.stdout and _files(again) == _files(out)
    # --assist off: no rule for mish, a located error
    r = _lower_cli(str(MISH), "-o", str(tmp_path / "off"), "--assist", "off")
    assert r.returncode == 2 and "error[UNSUPPORTED]" in r.stderr and "mish_act.adsl:10:25" in r.stderr


def test_interpreter_refuses_an_extern_op_with_a_located_error():
    import torch

    from ascend_dsl import interpreter

    with registered(declared_in(MISH_REF)):
        kernel = load_file(MISH)[0].instantiate({})
        with pytest.raises(DslError) as e:
            interpreter.run(kernel, {"x": torch.zeros(64), "y": torch.zeros(64)}, {})
    assert e.value.codes == ["UNSUPPORTED"] and e.value.diagnostics[0].span.line == 10


def test_without_a_sandbox_model_code_is_refused_not_run(monkeypatch):
    from npu_harness.assist_slots import SlotChecker

    monkeypatch.setattr(sandbox, "unavailable", lambda: "user namespaces are disabled")
    (op,) = declared_in(MISH_REF)
    ev = SlotChecker().evaluate(op, DType.F32, S.definition(op, DType.F32, GOOD))
    assert not ev.ok and ev.reason.startswith("error[SANDBOX]") and "user namespaces are disabled" in ev.reason
