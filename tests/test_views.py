"""Views of workspace tensors (ascend_dsl/views.py) and the vector launches they need (ascend_dsl/launches.py):
`hg = view(h, M, G=num_groups, L=N / num_groups)` reads a GEMM's `[M, N]` result as `M * G` rows of `N / G`
in another launch; its located errors (element count, divisions at launch, one shape per launch); a vector
loop that reads what an earlier one wrote, or splits another extent, starts a launch. The gallery kernels
(examples/fuse/gemm_group_norm, examples/attention/linear_attention) run at two sizes in tests/test_gallery_e2e.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import lowering
from ascend_dsl import interpreter, ir, load_file, parse_text
from ascend_dsl.diagnostics import DslError

REPO = Path(__file__).resolve().parents[1]

HEAD = '''@kernel
def k(x: Tensor[f16, "M, K"], w: Tensor[f16, "N, K"], y: Tensor[f32, "M, N"], num_groups: i32 = 4, eps: f32 = 1e-5):
    h = workspace(f32, M, N)
'''
VIEW = "    hg = view(h, M, G=num_groups, L=N / num_groups)\n"
CUBE = '''    for blk in split(M, N, cores=AIC):
        with cube:
            acc = matmul(x[blk], w[blk], transpose_b=True)
        with vector:
            store(h[blk], acc)
'''
NORM = '''    for blk2 in split(M * G, cores=AIV):
        for r in tile(blk2, size=auto, buffers=2):
            v = load(hg[r, :])
            d = v - mean(v, axis=1)
            store(yg[r, :], d * rsqrt(mean(d * d, axis=1) + eps))
'''
# the normalised rows go to a second workspace tensor, read back as [M, N] rows by a third launch
Z = "    z = workspace(f32, M, N)\n    yg = view(z, M, G, L)\n"
AFFINE = '''    for blk3 in split(M, cores=AIV):
        for r3 in tile(blk3, size=auto, buffers=2):
            store(y[r3, :], load(z[r3, :]) * 2.0)
'''
GOOD = HEAD + VIEW + Z + CUBE + NORM + AFFINE


def _kernel(text: str) -> ir.Kernel:
    return parse_text(text, "views.adsl")[0].instantiate()


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _error(text: str, lower: bool = True):
    with pytest.raises(DslError) as e:
        k = _kernel(text)
        if lower:
            lowering.lower(k)
    return e.value.diagnostics[0]


def _group_norm_ref(x, w, groups, eps=1e-5):
    h = x.float() @ w.float().T
    return torch.nn.functional.group_norm(h, groups, eps=eps) * 2.0


def test_a_view_reads_the_workspace_with_its_dims_in_another_launch():
    _, ctx = lowering.lower(_kernel(GOOD))
    k = ctx.lowered
    assert k.kind is ir.KernelKind.LAUNCHES
    kinds = [la.kernel.kind for la in k.body]
    assert kinds == [ir.KernelKind.MIX, ir.KernelKind.VECTOR, ir.KernelKind.VECTOR]
    gemm, norm, affine = (la.kernel for la in k.body)
    # the view is renamed to its tensor in the launch that uses it, with the view's dims
    assert gemm.param("h").shape == ("M", "N") and norm.param("h").shape == ("M", "G", "L")
    assert norm.param("z").shape == ("M", "G", "L") and affine.param("z").shape == ("M", "N")
    assert {p.name for p in norm.tensors} == {"h", "z"} and norm.param("hg") is None
    assert (k.body[1].reads, k.body[1].writes) == (("h",), ("z",))


@pytest.mark.parametrize("m, n, groups", [(5, 24, 4), (3, 75, 5)])
def test_the_interpreter_runs_the_view_as_group_norm(m, n, groups):
    k = _kernel(GOOD)
    x, w = torch.randn(m, 16).half(), torch.randn(n, 16).half()
    y = torch.zeros(m, n)
    interpreter.run(k, {"x": x, "w": w, "y": y}, {"num_groups": groups})
    torch.testing.assert_close(y, _group_norm_ref(x, w, groups), rtol=1e-4, atol=1e-4)


def test_a_view_whose_element_count_differs_is_located():
    text = GOOD.replace("L=N / num_groups", "L=N / 2")
    err = _error(text, lower=False)
    assert err.code == "SHAPE" and "'hg' has" in err.message and "M * N" in err.message
    assert err.span.line == _line(text, "hg = view")
    text = GOOD.replace("yg = view(z, M, G, L)", "yg = view(z, G, L)")
    err = _error(text, lower=False)
    assert err.code == "SHAPE" and "'yg' has N elements but 'z' has M * N" in err.message  # G * L = N


def test_a_division_that_is_not_exact_at_launch_is_located():
    k = _kernel(GOOD)
    y = torch.zeros(2, 10)
    with pytest.raises(DslError) as e:
        interpreter.run(k, {"x": torch.randn(2, 16).half(), "w": torch.randn(10, 16).half(), "y": y},
                        {"num_groups": 3})
    d = e.value.diagnostics[0]
    assert d.code == "SHAPE" and "L = N / num_groups = 10 / 3" in d.message
    assert d.span.line == _line(GOOD, "hg = view") and GOOD.splitlines()[d.span.line - 1][d.span.col - 1:].startswith(
        "N / num_groups")


def test_the_harness_binding_checks_the_division_too():
    from types import SimpleNamespace

    from npu_harness.binding import bind

    k = _kernel(GOOD)
    run = SimpleNamespace(inputs=[torch.randn(2, 16)], outputs=[torch.zeros(2, 10)], params={"w": torch.randn(10, 16)},
                          arg_names=["x"], attrs={"num_groups": 4}, args=None)
    with pytest.raises(DslError) as e:
        bind(k, run)
    assert e.value.diagnostics[0].code == "SHAPE"
    run.attrs = {"num_groups": 5}
    b = bind(k, run)
    assert (b.symbols["G"], b.symbols["L"]) == (5, 2)


@pytest.mark.parametrize("old, new, code, needle, at", [
    ("hg = view(h, M,", "hg = view(x, M,", "UNSUPPORTED", "tensor parameter (bound to the task)", "hg = view"),
    ("hg = view(h, M,", "hg = view(hh, M,", "UNDEFINED-NAME", "'hh' is not defined", "hg = view"),
    ("G=num_groups", "G=eps", "TYPE", "'eps' is a f32 parameter", "hg = view"),
    ("G=num_groups", "K=num_groups", "DUPLICATE-NAME", "'K' is already defined", "hg = view"),
    ("yg = view(z, M, G, L)", "yg = view(hg, M, G, L)", "UNSUPPORTED", "'hg' is a view", "yg = view"),
    ("yg = view(z, M, G, L)", "yg = view(z, M, G, Q)", "UNDEFINED-NAME", "'Q' is not defined", "yg = view"),
], ids=["bound-tensor", "unknown-tensor", "float-parameter", "symbol-clash", "view-of-a-view", "unknown-symbol"])
def test_a_bad_view_declaration_is_located(old, new, code, needle, at):
    text = GOOD.replace(old, new)
    err = _error(text, lower=False)
    assert err.code == code and needle in err.message
    assert err.span.line == _line(text, at)


def test_one_launch_using_a_tensor_through_two_shapes_is_located():
    text = (HEAD + VIEW + "    hg2 = view(h, M, G, L)\n" + Z + CUBE
            + NORM.replace("v = load(hg[r, :])", "v = load(hg[r, :]) + load(hg2[r, :])") + AFFINE)
    err = _error(text)
    assert err.code == "UNSUPPORTED" and "'h' through two shapes ('hg', 'hg2')" in err.message
    assert err.span.line == _line(text, "load(hg2[r, :])")


def test_a_view_in_a_kernel_of_one_launch_is_located():
    text = '''@kernel
def k(x: Tensor[f32, "M, N"], y: Tensor[f32, "M, N"]):
    h = workspace(f32, M, N)
    hg = view(h, M, G=2, L=N / 2)
    for blk in split(M, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], load(x[r, :]))
'''
    err = _error(text)
    assert err.code == "UNSUPPORTED" and "view 'hg' of a kernel of one launch" in err.message
    assert err.span.line == _line(text, "hg = view")


def test_a_value_computed_in_one_vector_launch_and_read_in_the_next_is_located():
    text = HEAD + VIEW + Z + CUBE + "    total = 0.0\n" + NORM.replace(
        "d = v - mean(v, axis=1)", "d = v - mean(v, axis=1)\n            total += sum(d)") + AFFINE.replace(
        "load(z[r3, :]) * 2.0", "load(z[r3, :]) * total")
    err = _error(text)
    assert err.code == "UNSUPPORTED" and "'total' is computed in launch 1 and read in launch 2" in err.message
    assert err.span.line == _line(text, "load(z[r3, :]) * total")


def test_vector_loops_over_other_extents_are_launches_of_their_own():
    k = load_file(REPO / "examples/attention/linear_attention.adsl")[0].instantiate()
    _, ctx = lowering.lower(k)
    kinds = [la.kernel.kind for la in ctx.lowered.body]
    assert kinds == [ir.KernelKind.VECTOR, ir.KernelKind.VECTOR, ir.KernelKind.BOX, ir.KernelKind.CHAIN]
    chain = ctx.lowered.body[3].kernel
    assert chain.param("ks").shape == ("Bt", "Dk", "One") and chain.param("ksv") is None


def test_linear_attention_matches_its_reference_in_the_interpreter():
    k = load_file(REPO / "examples/attention/linear_attention.adsl")[0].instantiate()
    q, kk, v = torch.randn(2, 13, 8).half(), torch.randn(2, 21, 8).half(), torch.randn(2, 21, 16).half()
    o = torch.zeros(2, 13, 16)
    interpreter.run(k, {"q": q, "k": kk, "v": v, "o": o})
    phi_q = torch.nn.functional.elu(q.float()) + 1
    phi_k = torch.nn.functional.elu(kk.float()) + 1
    num = phi_q @ (phi_k.transpose(1, 2) @ v.float())
    den = phi_q @ phi_k.sum(1, keepdim=True).transpose(1, 2)
    torch.testing.assert_close(o, num / den, rtol=5e-3, atol=5e-3)


def test_accumulators_declared_before_a_cut_loop_go_to_its_launch():
    text = '''@kernel
def k(x: Tensor[f32, "M, N"], y: Tensor[f32, "M, N"], s: Tensor[f32, "1"]):
    z = workspace(f32, M, N)
    for blk in split(M, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(z[r, :], load(x[r, :]) * 2.0)
    total = 0.0
    for blk2 in split(M, cores=AIV):
        for r2 in tile(blk2, size=auto, buffers=2):
            v = load(z[r2, :])
            total += sum(v)
            store(y[r2, :], v + 1.0)
    store(s[0], total)
'''
    k = _kernel(text)
    _, ctx = lowering.lower(k)
    first, second = (la.kernel for la in ctx.lowered.body)
    assert not any(isinstance(st, ir.AccDecl) for st in first.body)
    assert any(isinstance(st, ir.AccDecl) and st.name == "total" for st in second.body)
    x, y, s = torch.randn(7, 33), torch.zeros(7, 33), torch.zeros(1)
    interpreter.run(k, {"x": x, "y": y, "s": s})
    torch.testing.assert_close(y, x * 2 + 1)
    torch.testing.assert_close(s, (x * 2).sum().reshape(1), rtol=1e-5, atol=1e-4)


def test_a_view_never_used_is_located():
    text = GOOD.replace(Z, Z + "    hg3 = view(h, M, G, L)\n")
    err = _error(text)
    assert err.code == "KERNEL-STRUCTURE" and "view 'hg3' is never written or read" in err.message
    assert err.span.line == _line(text, "hg3 = view")


def test_a_group_count_that_is_not_a_whole_number_is_located():
    k = _kernel(GOOD)
    with pytest.raises(DslError) as e:
        interpreter.run(k, {"x": torch.randn(2, 16).half(), "w": torch.randn(8, 16).half(), "y": torch.zeros(2, 8)},
                        {"num_groups": 2.5})
    d = e.value.diagnostics[0]
    assert d.code == "SHAPE" and "num_groups = 2.5, not a whole number" in d.message
    assert d.span.line == _line(GOOD, "hg = view")


@pytest.mark.slow
def test_the_emulator_run_depends_on_the_view_symbols(monkeypatch):
    """The launches get the view's symbols from the binding: right ones pass, swapped ones (rows of G instead of L)
    give another result, which the comparison catches."""
    from npu_harness import binding
    from npu_harness.validate import load_task_for, validate_sim

    path = REPO / "examples/fuse/gemm_group_norm.adsl"
    k = load_file(path)[0].instantiate()
    run = load_task_for(k, path.with_suffix(".py"), overrides={"M": 5, "K": 16, "N": 24, "num_groups": 4})
    project, ctx = lowering.lower(k)
    assert validate_sim(k, ctx.lowered, project, ctx, run).ok
    real = binding.views.bind_symbols
    monkeypatch.setattr(binding.views, "bind_symbols",
                        lambda *a: {"G": real(*a)["L"], "L": real(*a)["G"]})
    assert not validate_sim(k, ctx.lowered, project, ctx, run).ok
