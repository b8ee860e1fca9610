"""`@kernel` functions called on torch tensors (npu_harness/torch_op.py): CPU tensors run the emitted
AscendC in the emulator through the torch binding's C entry points and the emulated ACL runtime, the op
is a torch.library custom op (fake shapes, torch.compile), argument mistakes are located errors. The
sample shares its compiled libraries with test_host_program.py (same emitted sources)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from ascend_dsl import KernelCallError, api, load_file
from ascend_dsl.api import KernelFunction
from npu_harness import torch_op
from npu_harness.device.runtime import KernelRunError

REPO = Path(__file__).resolve().parents[2]


def _kernel(rel: str) -> KernelFunction:
    return KernelFunction(load_file(REPO / "examples" / rel)[0])


@pytest.fixture(scope="module")
def leaky():
    return _kernel("activation/leaky_relu.adsl")


@pytest.fixture(scope="module")
def mse():
    return _kernel("loss/mse_loss.adsl")


@pytest.fixture(scope="module")
def mm():
    return _kernel("fuse/matmul_bias_relu.adsl")


def _kop(name: str) -> torch_op.KernelOp:
    return next(k for k in torch_op._OPS.values() if k.kernel.name == name)


@pytest.mark.slow
def test_cpu_tensors_run_the_emitted_kernel_in_the_emulator(leaky, no_interpreter):
    x = torch.randn(3, 1001)
    y = leaky(x, negative_slope=0.2)
    assert y.shape == x.shape and y.dtype == torch.float32  # y: [N] like x: [N] -> x's shape
    torch.testing.assert_close(y, F.leaky_relu(x, 0.2), rtol=1e-6, atol=0)
    assert _kop("leaky_relu").emulated is not None  # ran through the emulator's library
    out = torch.empty(3003)
    assert leaky(x, out) is out  # every tensor given: outputs written in place
    torch.testing.assert_close(out, F.leaky_relu(x.reshape(-1), 0.01), rtol=1e-6, atol=0)


@pytest.mark.slow
def test_accumulator_kernel_combines_across_cores(mse, no_interpreter):
    p, t = torch.randn(64, 999), torch.randn(64, 999)
    loss = mse(p, t)
    assert loss.shape == (1,)  # declared "1": not an input's dims
    torch.testing.assert_close(loss[0], F.mse_loss(p, t), rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_mix_kernel_picks_its_dtype_variant_from_the_inputs(mm, no_interpreter):
    a, b = torch.randn(96, 128).half(), torch.randn(128, 160).half()
    bias = torch.randn(160)
    c = mm(a, b, bias)
    assert c.shape == (96, 160) and c.dtype == torch.float32
    torch.testing.assert_close(c, torch.relu(a.float() @ b.float() + bias), rtol=1e-3, atol=1e-3)
    assert _kop("matmul_bias_relu").qualname.startswith("ascend_dsl::matmul_bias_relu_f16_")


def test_meta_tensors_give_output_shapes_without_running(mm):
    c = mm(torch.empty(7, 64, device="meta", dtype=torch.float16), torch.empty(64, 9, device="meta",
                                                                                dtype=torch.float16),
           torch.empty(9, device="meta"))
    assert c.device.type == "meta" and c.shape == (7, 9) and c.dtype == torch.float32


@pytest.mark.parametrize("call,code,text", [
    (lambda k, m: k(), "CALL", "no tensors"),
    (lambda k, m: k(torch.randn(4), torch.randn(4), torch.randn(4)), "CALL", "takes 1 input tensor(s) (x)"),
    (lambda k, m: k(torch.randn(4), 0.5), "CALL", "not a torch.Tensor"),
    (lambda k, m: k(torch.randn(4), slope=0.5), "CALL", "no scalar parameter slope"),
    (lambda k, m: k(torch.randn(4, dtype=torch.float64)), "CALL-DTYPE", "(float64)"),
    (lambda k, m: m(torch.randn(8, 16).half(), torch.randn(15, 4).half(), torch.randn(4)), "BINDING",
     "shape symbol K is 16 for one tensor and 15"),
    (lambda k, m: m(torch.randn(8, 16).half(), torch.randn(16, 4).half(), torch.randn(4, device="meta")),
     "CALL-DEVICE", "several devices"),
])
def test_argument_mistakes_are_located_errors(leaky, mm, call, code, text):
    with pytest.raises(KernelCallError) as ei:
        call(leaky, mm)
    assert ei.value.codes == [code] and text in str(ei.value)
    assert isinstance(ei.value, TypeError)


@pytest.mark.slow
def test_inside_torch_compile(leaky):
    x = torch.randn(5, 333)
    leaky(x)  # the runner is loaded and the op registered before tracing
    f = torch.compile(lambda t: leaky(t, negative_slope=0.3) * 2.0, backend="aot_eager", fullgraph=True, dynamic=True)
    for shape in [(5, 333), (2, 1024)]:
        t = torch.randn(*shape)
        torch.testing.assert_close(f(t), F.leaky_relu(t, 0.3) * 2.0, rtol=1e-6, atol=0)
    assert torch._dynamo.explain(lambda t: leaky(t) + 1)(x).graph_break_count == 0


@pytest.mark.slow
def test_a_kernel_fault_raises_with_the_emulators_report(leaky, monkeypatch):
    x = torch.randn(300_000)
    leaky(x[:1024])
    monkeypatch.setattr(_kop("leaky_relu").emulated, "cores", 1000)  # the tiling now asks for > 48 blocks
    with pytest.raises(KernelRunError) as ei:
        leaky(x)
    assert "error[BLOCK-DIM]" in str(ei.value) and "leaky_relu (N=300000)" in str(ei.value)


def test_interpret_is_the_explicit_interpreter_choice(leaky):
    x, y = torch.randn(1000), torch.empty(1000)
    out = leaky.interpret(x, y, negative_slope=0.5)
    assert out["y"] is y
    torch.testing.assert_close(y, F.leaky_relu(x, 0.5))
    with pytest.raises(KernelCallError, match="takes 2 tensors"):
        leaky.interpret(x)


def test_without_a_runner_the_call_says_how_to_get_one(leaky, monkeypatch):
    monkeypatch.setattr(api, "_RUNNER", None)
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [])
    with pytest.raises(KernelCallError) as ei:
        leaky(torch.randn(4))
    assert ei.value.codes == ["CALL-RUNNER"] and "interpret" in str(ei.value)


def test_the_language_layer_imports_nothing_above_it():
    code = ("import sys, ascend_dsl\nfrom ascend_dsl import kernel, KernelFunction\n"
            "print([m for m in ('torch', 'lowering', 'npu_harness', 'kernelgen') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr
