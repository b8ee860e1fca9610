"""Scalar math works the same wherever it is written (issue 11): every scalar form, before the first split
loop (computed by the host at launch, and on the device from `load(c[0])`), inside a tile loop (hoisted),
between two loops (from an accumulator) and after the last one, lowered and run in the emulator against
the interpreter. One kernel per form, all in one emulator binary (npu_harness.fuzz.runner)."""

from __future__ import annotations

import pytest

from npu_harness.fuzz.runner import Job, run_jobs

#: form -> a scalar expression over {a} and {b}
FORMS = {
    "add": "{a} + {b}", "sub": "{a} - {b}", "mul": "{a} * {b}", "div": "{a} / (abs({b}) + 0.5)", "neg": "-{a}",
    "exp": "exp({a} * 0.1)", "log": "log(abs({a}) + 0.5)", "sqrt": "sqrt(abs({a}))", "rsqrt": "rsqrt(abs({a}) + 0.5)",
    "abs": "abs({a})", "max": "max({a}, {b})", "min": "min({a}, {b})", "reciprocal": "reciprocal(abs({a}) + 0.5)",
    "relu": "relu({a})", "tanh": "tanh({a})", "sigmoid": "sigmoid({a})", "erf": "erf({a})",
    "pow": "(abs({a}) + 0.5) ** {b}", "pow_negative_base": "(-abs({a}) - 0.5) ** 3.0",
    "lt": "select({a} < {b}, {a}, {b} * 2.0)", "le": "select({a} <= {b}, 1.0, -1.0)",
    "gt": "select({a} > {b}, {a}, 0.5)", "ge": "select({a} >= {b}, {b}, {a})",
    "eq": "select({a} == {a}, 2.0, {b})", "ne": "select({a} != {b}, {a} - {b}, 3.0)",
}

KERNEL = '''@kernel
def k(x: Tensor[f32, "N"], c: Tensor[f32, "1"], p: f32 = 0.7, q: f32 = 1.3, n: i32 = 3,
      y1: Tensor[f32, "N"], y2: Tensor[f32, "N"], o: Tensor[f32, "1"]):
    s0 = {before}
    l0 = load(c[0])
    d0 = {device}
    t1 = 0.0
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            xt = load(x[t])
            store(y1[t], xt * ({inside}) + s0 + d0)
            t1 += sum(xt)
    s1 = {between}
    t2 = -1e30
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            xt = load(x[t])
            store(y2[t], xt * s1 + ({inside2}))
            t2 = max(t2, max(xt))
    store(o[0], {after})
'''


def _kernel(form: str) -> str:
    def f(a: str, b: str) -> str:
        return FORMS[form].format(a=f"({a})", b=f"({b})")

    return KERNEL.format(before=f("p", "q"), device=f("l0", "p"), inside=f("q", "N * 0.001"), between=f("t1 / N", "s0"),
                         inside2=f("s1", "n"), after=f("t2 * 0.01", "s1"))


@pytest.mark.slow
def test_every_scalar_form_in_every_position_matches_the_interpreter():
    """20,000 elements: 5 cores, so the accumulators really combine across cores before s1 and the store."""
    jobs = [Job(_kernel(form), {"N": 20000}, seed=11, label=form) for form in FORMS]
    outcomes = run_jobs(jobs)
    bad = [f"{o.job.label}: {o.status}\n{o.detail[:600]}\n{o.job.text}" for o in outcomes if o.status != "pass"]
    assert not bad, "\n\n".join(bad)


ADAM = '''@kernel(T=[f16])
def adam(param: Tensor[T, "N"], grad: Tensor[T, "N"], m: Tensor[T, "N"], v: Tensor[T, "N"],
         param_out: Tensor[T, "N"], beta1: f32 = 0.9, beta2: f32 = 0.999, lr: f32 = 0.001,
         eps: f32 = 1e-8, step: f32 = 3.0):
    bc1 = 1.0 - exp(step * log(beta1))
    bc2 = 1.0 - beta2 ** step
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            g = cast(load(grad[t]), f32)
            mt = beta1 * cast(load(m[t]), f32) + (1.0 - beta1) * g
            vt = beta2 * cast(load(v[t]), f32) + (1.0 - beta2) * g * g
            p = cast(load(param[t]), f32) - lr * (mt / bc1) / (sqrt(vt / bc2) + eps)
            store(param_out[t], cast(p, T))
'''


def test_issue_11_adam_bias_corrections_are_computed():
    """The kernel of the issue: bc1 and bc2 were declared 0 and never computed (every output inf)."""
    from ascend_dsl import parse_text
    from lowering import lower

    project, _ = lower(parse_text(ADAM, "adam.adsl")[0].instantiate(), "ascend910b1", "adam.adsl")
    tiling = project.files["adam_tiling.h"]
    assert "t->bc1 = " in tiling and "t->bc2 = " in tiling, tiling
    (o,) = run_jobs([Job(ADAM, {"N": 3001}, seed=5, label="adam")])
    assert o.status == "pass", o.detail
