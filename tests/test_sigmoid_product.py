"""a * sigmoid(z) of tiles as a / (1 + exp(-z)) (lowering/passes/legalize.py, session 35: swish / SiLU in one Div
where the generic expansion took a Reciprocal and a Mul), against PyTorch in f32 and f16, limits included."""

from __future__ import annotations

import pytest
import torch

import ascend_dsl
import lowering
from ascend_dsl import interpreter, ir
from lowering.passes import legalize


def _kernel(expr: str, dt: str) -> ir.Kernel:
    text = f'''@kernel
def k(x: Tensor[{dt}, "N"], y: Tensor[{dt}, "N"], beta: f32 = 1.5):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            xt = load(x[t])
            store(y[t], {expr})
'''
    k = ascend_dsl.parse_text(text, file="swish.adsl")[0].instantiate({})
    return legalize.run(k, lowering.PassContext(lowering.get_target("ascend910b1")))


def _ops(k: ir.Kernel) -> list[str]:
    seen = {id(e): e for s in ir.walk(k.body) if isinstance(s, ir.Store) for e in ir.walk_expr(s.value)
            if isinstance(e, ir.Op) and e.type.kind is ir.Kind.TILE}
    return [e.op for e in seen.values()]


def _run(k: ir.Kernel, x: torch.Tensor, beta: float = 1.5) -> torch.Tensor:
    y = torch.empty_like(x)
    interpreter.run(k, {"x": x, "y": y}, {"beta": beta}, num_cores=2, tile=256)
    return y


_X = torch.cat([torch.linspace(-100, 100, 4001), torch.tensor([0.0, -0.0, 1e-30, -1e-30, 88.0, -87.0, -89.0,
                                                               float("inf"), float("-inf"), float("nan")])])


@pytest.mark.parametrize("expr", ["xt * sigmoid(xt)", "sigmoid(xt) * xt"])
def test_swish_is_one_division(expr):
    for dt in ("f32", "f16"):
        ops = _ops(_kernel(expr, dt))
        assert "sigmoid" not in ops and "reciprocal" not in ops and ops.count("div") == 1, ops
        assert ops.count("mul") == 1, ops  # -x only: the product became the division


@pytest.mark.parametrize("dt,tol", [("f32", 2e-7), ("f16", 2.0 ** -11)])
def test_swish_matches_torch(dt, tol):
    torch_dt = torch.float32 if dt == "f32" else torch.float16
    x = _X.to(torch_dt)
    got = _run(_kernel("xt * sigmoid(xt)", dt), x)
    ref = torch.nn.functional.silu(x.double())
    both_nan = got.isnan() & ref.isnan()
    assert torch.equal(got.isnan(), ref.isnan() | (x.isinf() & (x < 0))), x[got.isnan() != ref.isnan()]
    r = ref.to(torch_dt).double()  # the reference rounded to the dtype
    assert torch.equal(got[r.isinf()].double(), r[r.isinf()])
    finite = ~got.isnan() & ~both_nan & ~r.isinf()
    g, r = got[finite].double(), r[finite]
    # within a few units of the exact result rounded. Below x = -88 (f32) 1 + exp(-x) is inf and the result 0 where
    # it is below 1e-36, as 1 / (1 + exp(-x)) was 0 before
    under = x[finite].double() < -88.0
    assert (g[under].abs() <= 1e-36).all()
    g, r = g[~under], r[~under]
    bad = (g - r).abs() > 4 * tol * r.abs() + torch.finfo(torch_dt).tiny
    assert not bad.any(), x[finite][~under][bad]


def test_scaled_argument_negates_the_scalar_once():
    k = _kernel("xt * sigmoid(beta * xt)", "f32")
    assert _ops(k).count("mul") == 1  # beta * xt with beta negated by the scalar unit: no separate * -1
    x = torch.linspace(-30, 30, 1201)
    z = (1.5 * x).double()  # beta * x rounded to f32 as the kernel's, then exact
    torch.testing.assert_close(_run(k, x, 1.5), (x.double() * torch.sigmoid(z)).float(), rtol=5e-7, atol=1e-30)


def test_scalar_factor_keeps_the_generic_form():
    ops = _ops(_kernel("sigmoid(xt) * beta", "f32"))
    assert "reciprocal" in ops and "div" not in ops
