"""Bad LLM output is reported with a diagnostic, never crashes; the DSL can never reach torch."""

from __future__ import annotations

import pytest
from kg_helpers import GALLERY, gallery_answer

from ascend_dsl.diagnostics import DslError
from kernelgen.candidate import evaluate
from kernelgen.extract import extract_code, extract_dsl
from kernelgen.tasks import load_task

RELU = gallery_answer("relu")


@pytest.fixture(scope="module")
def task():
    return load_task(GALLERY / "relu.py")


def test_fenced_code_with_prose_is_extracted():
    text = f"Here is the kernel you asked for.\n\n```python\n{RELU}```\n\nIt computes max(x, 0)."
    assert extract_code(text) == RELU


def test_unfenced_kernel_is_extracted():
    assert extract_code("Sure.\n" + RELU) == RELU


def test_first_fence_with_a_kernel_wins():
    text = f"```text\nnotes\n```\n```python\n{RELU}```"
    assert extract_code(text) == RELU


@pytest.mark.parametrize("response,stage,code", [
    ("I am sorry, I cannot write NPU kernels.", "parse", "GEN-NO-CODE"),
    ("", "parse", "GEN-NO-CODE"),
    ("```python\n" + RELU[: len(RELU) // 2], "parse", "SYNTAX"),  # truncated mid-kernel, fence never closed
    ("```cpp\n#include \"kernel_operator.h\"\nextern \"C\" __global__ __aicore__ void relu(GM_ADDR x) {}\n```",
     "parse", "WRONG-LANGUAGE"),
    ("```python\nimport torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
     "        return torch.relu(x)\n```", "parse", "FORBIDDEN"),
    ("```python\ndef relu(x):\n    return x if x > 0 else 0\n```", "parse", "SYNTAX"),
])
def test_bad_output_is_reported_not_raised(task, response, stage, code):
    out = evaluate(response, task, level="interp")
    assert not out.passed
    assert out.failed_stage == stage
    assert code in out.codes, out.diagnostics
    assert f"error[{code}]" in out.diagnostics


def test_torch_import_and_call_are_rejected_with_located_diagnostics(task):
    bad = RELU.replace("from ascend_dsl import", "import torch\nfrom ascend_dsl import").replace(
        "relu(xt)", "torch.relu(xt)")
    with pytest.raises(DslError) as e:
        extract_dsl(bad, "relu.adsl")
    text = e.value.render()
    assert e.value.codes == ["FORBIDDEN", "FORBIDDEN"]
    assert "relu.adsl:1:1" in text and "cannot import 'torch'" in text
    assert "torch.relu" in text and "^" in text
    out = evaluate(f"```python\n{bad}```", task, level="interp")
    assert out.failed_stage == "parse" and not out.interp_ok


def test_check_errors_are_located(task):
    out = evaluate(RELU.replace("relu(xt)", "relu(xq)"), task, level="interp")
    assert out.parsed and not out.checked and out.failed_stage == "check"
    assert "error[UNDEFINED-NAME]" in out.diagnostics and "relu.adsl:" in out.diagnostics


def test_docstrings_and_comments_may_name_torch():
    """What a kernel replaces may be named in its docstring or a comment (the gallery's layer_norm_module says
    `nn.LayerNorm`); a call in code is still rejected, and text Python cannot tokenize is checked as written."""
    from kernelgen.extract import code_only, forbidden

    doc = RELU.replace('"""ReLU: y = max(x, 0)."""', '"""torch.relu / nn.ReLU, as\n    F.relu(x) does."""')
    doc = doc.replace("xt = load(x[t])", "xt = load(x[t])  # not torch.clamp(x, 0)")
    assert doc != RELU and forbidden(doc, "relu.adsl") == []
    bare = code_only(doc)
    assert len(bare) == len(doc) and bare.count("\n") == doc.count("\n") and "torch" not in bare
    call = doc.replace("relu(xt)", "torch.relu(xt)")
    assert [d.code for d in forbidden(call, "relu.adsl")] == ["FORBIDDEN"]
    assert forbidden(call, "relu.adsl")[0].span.line == call[: call.index("torch.relu(xt)")].count("\n") + 1
    truncated = 'import torch\n"""unterminated torch.relu\n'
    assert code_only(truncated) == truncated and len(forbidden(truncated, "t.adsl")) == 2
    assert [d.code for d in forbidden('x = "\x0c\x0b torch.relu"\n', "t.adsl")] == []  # odd whitespace in a string
    for name in ("layer_norm_module", "linear_relu_module"):  # gallery kernels whose docstrings name nn modules
        path = next(GALLERY.parent.glob(f"*/{name}.adsl"))
        assert "nn." in path.read_text() and forbidden(path.read_text(), path.name) == []
