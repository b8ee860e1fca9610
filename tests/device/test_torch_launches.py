"""Kernels of several launches called on torch tensors (npu_harness/device/launches.py): CPU tensors run each
launch's emulator library in the manifest's order with the workspaces allocated by torch, against PyTorch; a
row-fallback kernel runs the form its host rule picks (npu_harness/row_fallback.py); a launch that cannot run or
faults is named in the error."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from ascend_dsl import load_file, parse_text
from ascend_dsl.api import KernelFunction
from npu_harness import torch_op
from npu_harness.device import launches
from npu_harness.device.runtime import KernelRunError

REPO = Path(__file__).resolve().parents[2]

#: two vector loops, the second reading the workspace the first writes: two vector launches (a scalar in each)
TWO_PASS = '''@kernel
def two_pass(x: Tensor[f32, "M, N"], y: Tensor[f32, "M, N"], alpha: f32 = 0.5):
    h = workspace(f32, M, N)
    for blk in split(M, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(h[r, :], relu(load(x[r, :])) * alpha)
    for blk2 in split(M, cores=AIV):
        for r2 in tile(blk2, size=auto, buffers=2):
            v = load(h[r2, :])
            store(y[r2, :], v - max(v, axis=1))
'''


def _kernel(rel: str) -> KernelFunction:
    return KernelFunction(load_file(REPO / "examples" / rel)[0])


@pytest.fixture(scope="module")
def two_pass():
    return KernelFunction(parse_text(TWO_PASS, "two_pass.adsl")[0])


@pytest.fixture(scope="module")
def gsl():
    return _kernel("fuse/gemm_softmax_long.adsl")


def _kop(name: str) -> torch_op.KernelOp:
    return next(k for k in torch_op._OPS.values() if k.kernel.name == name)


def _two_pass_ref(x: torch.Tensor, alpha: float) -> torch.Tensor:
    h = torch.relu(x) * alpha
    return h - h.amax(dim=1, keepdim=True)


@pytest.mark.slow
def test_a_vector_launches_kernel_runs_its_launches_in_order(two_pass, no_interpreter):
    x = torch.randn(37, 300)
    y = two_pass(x, alpha=1.5)
    torch.testing.assert_close(y, _two_pass_ref(x, 1.5), rtol=1e-6, atol=1e-6)
    pl, _ = _kop("two_pass").launches["launches", "cpu"]
    assert [s.name for s in pl.steps] == ["two_pass_l0", "two_pass_l1"] and [p.name for p in pl.workspaces] == ["h"]
    assert _kop("two_pass").emulated is None  # no single-kernel library: the launches ran
    out = torch.empty(37, 300)
    assert two_pass(x, out) is out  # every tensor given: written in place
    torch.testing.assert_close(out, _two_pass_ref(x, 0.5), rtol=1e-6, atol=1e-6)


@pytest.mark.slow
def test_a_launch_reading_a_workspace_no_launch_wrote_reads_nan(two_pass, monkeypatch):
    """Planted wrong order: the row pass queued before the pass that writes h reads unwritten device memory (the
    emulated aclrtMalloc's 0xFF bytes, NaN), not zeros or stale data, so a lost or misordered workspace shows."""
    x = torch.randn(5, 64)
    two_pass(x)
    pl, backend = _kop("two_pass").launches["launches", "cpu"]
    swapped = launches.Plan(pl.lowered, pl.steps[::-1], pl.workspaces)
    y = torch.zeros(5, 64)
    launches.run(swapped, backend, {"x": x, "y": y}, {"M": 5, "N": 64}, {"alpha": 0.5}, "two_pass")
    assert torch.isnan(y).all()


@pytest.mark.slow
def test_gemm_softmax_long_runs_its_cube_and_vector_launches(gsl, no_interpreter):
    """A row of 3000: the GEMM into the workspace, then chunked row passes (longer than the vector launch's UB
    tile), against torch."""
    x, w, b = torch.randn(19, 64).half(), torch.randn(3000, 64).half(), torch.randn(3000)
    y = gsl(x, w, b)
    ref = torch.softmax(x.float() @ w.float().T + b, dim=1)
    assert y.shape == (19, 3000) and y.dtype == torch.float32
    torch.testing.assert_close(y, ref, rtol=1e-3, atol=1e-6)


@pytest.mark.slow
def test_linear_attention_runs_its_four_launches_with_a_view_of_a_workspace(no_interpreter):
    f = _kernel("attention/linear_attention.adsl")
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 40, 32).half(), torch.randn(2, 24, 32).half(), torch.randn(2, 24, 16).half()
    o = f(q, k, v)
    fq, fk = F.elu(q.float()) + 1.0, F.elu(k.float()) + 1.0
    ref = torch.einsum("bmd,bde->bme", fq, torch.einsum("bnd,bne->bde", fk, v.float())) / \
        torch.einsum("bmd,bd->bm", fq, fk.sum(dim=1)).unsqueeze(-1)
    torch.testing.assert_close(o, ref, rtol=5e-3, atol=1e-4)
    pl, _ = _kop("linear_attention").launches["launches", "cpu"]
    assert len(pl.steps) == 4 and {p.name for p in pl.workspaces} >= {"fq", "fk", "ks"}


@pytest.mark.slow
def test_a_row_fallback_kernel_runs_the_form_its_host_rule_picks(no_interpreter, monkeypatch):
    """matmul_softmax: a row of 1301 holds in no fused base block, so the host rule picks the launches; a small
    row keeps the fused kernel. The op asks row_fallback.pick (the one rule), once per shape."""
    from npu_harness import row_fallback

    f = _kernel("fuse/matmul_softmax.adsl")
    calls = []
    real = row_fallback.pick
    monkeypatch.setattr(row_fallback, "pick", lambda *a, **k: calls.append(a[4]) or real(*a, **k))
    a, b = torch.randn(37, 45).half(), torch.randn(45, 1301).half()
    for _ in range(2):
        c = f(a, b)
        torch.testing.assert_close(c, torch.softmax(a.float() @ b.float(), dim=1), rtol=1e-3, atol=1e-6)
    kop = _kop("matmul_softmax")
    assert calls == [{"M": 37, "K": 45, "N": 1301}]  # cached by shape
    assert ("fallback", "cpu") in kop.launches and kop.emulated is None
    a2, b2 = torch.randn(16, 32).half(), torch.randn(32, 64).half()
    torch.testing.assert_close(f(a2, b2), torch.softmax(a2.float() @ b2.float(), dim=1), rtol=1e-3, atol=1e-6)
    assert kop.forms[(16, 32, 64), ()] == "fused" and kop.emulated is not None


def test_meta_tensors_give_a_launches_kernels_output_shapes(gsl):
    y = gsl(torch.empty(7, 64, device="meta", dtype=torch.float16), torch.empty(900, 64, device="meta",
                                                                                 dtype=torch.float16),
            torch.empty(900, device="meta"))
    assert y.device.type == "meta" and y.shape == (7, 900) and y.dtype == torch.float32


@pytest.mark.slow
def test_a_fault_in_the_second_launch_names_it(two_pass, monkeypatch):
    x = torch.randn(300_000, 8)
    two_pass(x[:64])
    _, backend = _kop("two_pass").launches["launches", "cpu"]
    monkeypatch.setattr(backend.devices["two_pass_l1"], "cores", 1000)  # its tiling now asks for > 48 blocks
    with pytest.raises(KernelRunError) as ei:
        two_pass(x)
    msg = str(ei.value)
    assert "launch 2 of 2 (two_pass_l1)" in msg and "error[BLOCK-DIM]" in msg and "M=300000" in msg, msg


@pytest.mark.slow
def test_a_launch_that_cannot_run_is_tiling_naming_it_before_any_launch_runs(monkeypatch):
    """argmax needs whole rows in UB: at a row of 200,000 floats the second launch has no tile, so the call is
    TILING naming launch 2, and launch 1 is not queued (every tiling runs first)."""
    f = KernelFunction(parse_text(TWO_PASS.replace("v - max(v, axis=1)", "v - cast(argmax(v, axis=1), f32)")
                                  .replace("two_pass", "two_pass_argmax"), "two_pass_argmax.adsl")[0])
    x = torch.randn(3, 64)
    h = torch.relu(x) * 0.5
    torch.testing.assert_close(f(x), h - h.argmax(dim=1, keepdim=True).float())
    ran = []
    monkeypatch.setattr(launches.EmulatedLaunches, "launch", lambda self, step, *a: ran.append(step.name))
    with pytest.raises(KernelRunError) as ei:
        f(torch.randn(2, 200_000))
    msg = str(ei.value)
    assert "launch 2 of 2 (two_pass_argmax_l1)" in msg and "error[TILING]" in msg, msg
    assert ran == []


class _FakeLib:
    """A launch's NPU library standing in for CANN's: its tiling and its launches recorded."""

    def __init__(self, name: str, calls: list, fail: bool = False):
        self.name, self.calls, self.fail = name, calls, fail

    def tiling(self, symbols, scalars, cores):
        from npu_harness.device.runtime import Launch

        self.calls.append(("tiling", self.name, list(symbols)))
        return Launch(4, 32 if self.name.endswith("l1") else 0, None)

    def launch(self, launch, stream, pointers):
        self.calls.append(("launch", self.name, stream, list(pointers)))
        return 507035 if self.fail else 0

    def recent_error(self):
        return ": the aicore raised an exception"


class _FakeKernel:
    def __init__(self, lib):
        self.lib, self.cores = lib, 40


def test_the_npu_backend_queues_each_launch_with_its_tensors_in_its_binding_order(gsl):
    """The NPU branch without an NPU (no CANN here): each launch's library is a recording fake; the sequencing
    is device/launches.run, the one the emulated device runs. Every tiling first; launch 1 gets x, w, bias, h;
    launch 2 y, h (the same torch-allocated workspace) and its own system workspace; one stream."""
    import lowering

    project, ctx = lowering.lower(gsl.source.instantiate(gsl.source.dtype_variants[0]))
    pl = launches.plan(ctx.lowered, project)
    calls: list = []
    kernels = {s.name: _FakeKernel(_FakeLib(s.name, calls)) for s in pl.steps}
    x, w, b, y = torch.randn(5, 16).half(), torch.randn(24, 16).half(), torch.randn(24), torch.empty(5, 24)
    backend = launches.NpuLaunches(kernels, torch.device("cpu"), 1234)
    launches.run(pl, backend, {"x": x, "fc_weight": w, "fc_bias": b, "y": y}, {"M": 5, "K": 16, "N": 24}, {}, "gsl")
    assert [c[:2] for c in calls] == [("tiling", "gemm_softmax_long_l0"), ("tiling", "gemm_softmax_long_l1"),
                                      ("launch", "gemm_softmax_long_l0"), ("launch", "gemm_softmax_long_l1")]
    assert calls[0][2] == [5, 16, 24] and calls[1][2] == [5, 24]  # each launch's own symbols (M, K, N / M, N)
    (_, _, s0, p0), (_, _, s1, p1) = calls[2], calls[3]
    assert s0 == s1 == 1234
    assert p0[:3] == [x.data_ptr(), w.data_ptr(), b.data_ptr()] and len(p0) == 4
    assert p1[0] == y.data_ptr() and p1[1] == p0[3] and len(p1) == 3  # y, the shared h, its system workspace
    kernels["gemm_softmax_long_l1"].lib.fail = True
    with pytest.raises(KernelRunError, match=r"gsl, launch 2 of 2 \(gemm_softmax_long_l1\): the kernel launch failed "
                       "with ACL error 507035: the aicore raised an exception"):
        launches.run(pl, backend, {"x": x, "fc_weight": w, "fc_bias": b, "y": y}, {"M": 5, "K": 16, "N": 24}, {}, "gsl")


@pytest.mark.slow
def test_the_npu_harness_validates_a_launches_kernel_with_the_emulator_standing_in():
    """`--validate npu`'s worker calls the torch op: a kernel of two launches against its task's Model."""
    from npu_harness.device.npu_validate import validate_npu

    dsl = REPO / "examples/fuse/gemm_softmax_long.adsl"
    r = validate_npu(dsl, "gemm_softmax_long", {"T": "f16"}, "ascend910b1", dsl.with_suffix(".py"),
                     overrides={"M": 6, "K": 32, "N": 700}, device="cpu", correct_trials=1, warmup=1, trials=2)
    assert r.ok, r.error
    assert r.shapes == {"M": 6, "K": 32, "N": 700} and r.comparisons[0].numel == 6 * 700


@pytest.mark.slow
def test_a_launches_kernel_inside_torch_compile(two_pass):
    x = torch.randn(6, 128)
    two_pass(x)  # the runner is loaded and the op registered before tracing
    f = torch.compile(lambda t: two_pass(t, alpha=2.0) + 1.0, backend="aot_eager", fullgraph=True, dynamic=True)
    for shape in [(6, 128), (3, 200)]:
        t = torch.randn(*shape)
        torch.testing.assert_close(f(t), _two_pass_ref(t, 2.0) + 1.0, rtol=1e-6, atol=1e-6)
