"""`a ** b` with a tile operand (tensor exponent, scalar base or non-constant scalar exponent): torch.pow's
semantics, composed from Exp / Ln / Abs / Cast / Compare / Select by lowering/passes/legalize.py."""

from __future__ import annotations

import math

import pytest
import torch
from dsl_snippets import first_tile, tile_kernel

from ascend_dsl import interpreter, ir
from lowering import lower
from npu_harness.task import TaskRun
from npu_harness.validate import validate_sim

HEAD = '''@kernel(T=[f32, f16])
def k(x: Tensor[T, "N"], e: Tensor[T, "N"], y: Tensor[T, "N"], z: Tensor[T, "N"], w: Tensor[T, "N"], p: f32 = 2.5):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
'''
BODY = "store(y[t], load(x[t]) ** load(e[t]))\nstore(z[t], 2.0 ** load(e[t]))\nstore(w[t], load(x[t]) ** p)"

#: torch.pow's special cases: negative bases with odd / even / fractional exponents, 0 ** 0, 0 ** -1, 1 ** nan,
#: nan ** 0, -inf ** 0.5 (inf), huge even exponents of negative bases, -1 ** inf; (session 36: the |a| = 1 and b = 0
#: selects test ne, true for NaN) -1 ** nan (nan), -1 ** -inf, 1 ** inf, inf ** 0, -3 ** -0 (all 1).
BASES = [-2.0, -2.0, -2.0, 0.0, 0.0, 0.0, 1.0, math.nan, -math.inf, -1.0, -0.5, 3.0, -1.5, 0.25, -3.0, 2.0,
         -1.0, -1.0, 1.0, math.inf, -3.0]
EXPONENTS = [3.0, 2.0, 0.5, 0.0, -1.0, 2.0, math.nan, 0.0, 0.5, 3e9, 4e7, -1.5, -3.0, 0.5, 1.0, math.nan,
             math.nan, -math.inf, math.inf, 0.0, -0.0]


def test_a_tile_exponent_is_a_pow_op():
    k = tile_kernel(HEAD, BODY, "pow.adsl")
    ops = [s.value for s in first_tile(k).body]
    assert [o.op for o in ops] == ["pow", "pow", "pow"]
    assert all(o.type == ir.tile_of(ir.DType.F32) for o in ops)


def test_lowering_composes_it_without_a_pow_instruction():
    project, _ = lower(tile_kernel(HEAD, BODY, "pow.adsl"), "ascend910b1", "pow.adsl")
    code = project.files["k_kernel.cpp"]
    for api in ("Ln(", "Exp(", "Abs(", "RoundMode::CAST_TRUNC", "Select("):
        assert api in code
    assert "Power" not in code and "Pow(" not in code


def test_interpreter_is_torch_pow():
    n = len(BASES)
    x, e = torch.tensor(BASES), torch.tensor(EXPONENTS)
    y, z, w = torch.empty(n), torch.empty(n), torch.empty(n)
    interpreter.run(tile_kernel(HEAD, BODY, "pow.adsl"), {"x": x, "e": e, "y": y, "z": z, "w": w}, num_cores=2, tile=4)
    torch.testing.assert_close(y, torch.pow(x, e), equal_nan=True)
    torch.testing.assert_close(z, torch.pow(2.0, e), equal_nan=True)
    torch.testing.assert_close(w, torch.pow(x, 2.5), equal_nan=True)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_emulator_follows_torch_pow_on_every_special_case(dtype, tmp_path):
    kernel = tile_kernel(HEAD, BODY, "pow.adsl") if dtype is torch.float32 else \
        __import__("ascend_dsl").parse_text(HEAD + "".join(f"            {line}\n" for line in BODY.splitlines()),
                                            "pow.adsl")[0].instantiate({"T": ir.DType.F16})
    project, ctx = lower(kernel, "ascend910b1", "pow.adsl")
    reps = 70  # several tiles' worth of the special cases plus random values, with a tail
    g = torch.Generator().manual_seed(16)
    rand = torch.randn(1001, generator=g) * 3
    rand = torch.where(rand.abs() < 0.1, torch.full_like(rand, 0.1), rand)  # (0.1) ** -3: finite in f16
    x = torch.cat([torch.tensor(BASES).repeat(reps), rand]).to(dtype)
    e = torch.cat([torch.tensor(EXPONENTS).repeat(reps), torch.randint(-3, 4, (1001,), generator=g).float()]).to(dtype)
    xf, ef = x.float(), e.float()
    run = TaskRun([x, e], [torch.pow(xf, ef), torch.pow(2.0, ef), torch.pow(xf, 2.5)])
    res = validate_sim(kernel, ctx.lowered, project, ctx, run, work_dir=tmp_path)
    assert res.ok, res.summary() + "\n" + "\n".join(c.describe() for c in res.comparisons) + res.detail


def test_per_row_operands_of_a_tile_power_are_located_errors():
    from dsl_snippets import tile_error

    head = '''@kernel
def k(x: Tensor[f32, "B, D"], s: Tensor[f32, "B"], y: Tensor[f32, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''
    d = tile_error(head, "store(y[r, :], load(x[r, :]) ** load(s[r]))", "pow.adsl").diagnostics[0]
    assert d.code == "UNSUPPORTED" and "takes flat tiles or whole rows" in d.message and d.span.line == 5
    k = tile_kernel(head, "store(y[r, :], load(x[r, :]) ** (load(x[r, :]) * 0.5))", "pow.adsl")  # whole rows: fine
    lower(k, "ascend910b1", "pow.adsl")


SCALAR_POW = '''@kernel
def k(z: Tensor[f32, "N"], e: Tensor[f32, "N"], y: Tensor[f32, "N"], p: f32 = 2.0):
    a = 0.0
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            a += sum(load(e[t]))
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], load(z[t]) + p ** a)
'''


@pytest.mark.slow
def test_a_scalar_power_on_the_device_follows_torch_pow_on_every_special_case(tmp_path):
    """`p ** a` of two scalars where one is only known on the device (an accumulator) runs on the scalar unit
    (lowering/emit/shared.py power): 1 ** nan was NaN there (exp(nan * ln 1)), found by the fuzzer (seed 48000);
    every torch.pow special case of BASES x EXPONENTS, one compile."""
    from ascend_dsl import parse_text

    kernel = parse_text(SCALAR_POW, "scalar_pow.adsl")[0].instantiate({})
    project, ctx = lower(kernel, "ascend910b1", "scalar_pow.adsl")
    cases = [*zip(BASES, EXPONENTS, strict=True), (-0.0, -1.0), (-0.0, 3.0), (-1.0, math.inf), (-1.0, math.nan),
             (-math.inf, 3.0),
             (-math.inf, -0.5), (0.5, math.inf), (2.0, -math.inf)]
    failures = []
    for i, (b, x) in enumerate(cases):
        n = 37
        e = torch.zeros(n)
        e[5] = x
        want = torch.zeros(n) + torch.pow(torch.tensor(b), torch.tensor(x))
        run = TaskRun([torch.zeros(n), e], [want], attrs={"p": b})
        res = validate_sim(kernel, ctx.lowered, project, ctx, run, work_dir=tmp_path / str(i))
        if not res.ok:
            failures.append(f"{b} ** {x}: {res.summary()} {res.detail}")
    assert not failures, "\n".join(failures)
