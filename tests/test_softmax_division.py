"""Softmax's normalisation of f16 rows kept in f16 (lowering/passes/softmax_division.py, session 36): e / sum(e) with
e = exp(v - max(v)) is e * (1 / s) in f16 (s >= 1, so 1 / s cannot overflow); every other f16 division by one
value per row still runs in f32 (legalize.py: 1 / s overflows f16 for |s| < 1.5e-5)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ascend_dsl
import lowering
from ascend_dsl import ir, load_file
from ascend_dsl.dtypes import DType
from lowering import lower
from lowering.passes import legalize
from npu_harness.validate import load_task_for, validate_sim

HEAD = '''@kernel
def k(x: Tensor[f16, "B, D"], z: Tensor[f16, "B, D"], y: Tensor[f16, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            xt = load(x[r, :])
            zt = load(z[r, :])
'''


def _legalized(body: str) -> ir.Kernel:
    text = HEAD + "".join(f"            {line}\n" for line in body.splitlines())
    k = ascend_dsl.parse_text(text, file="sd.adsl")[0].instantiate({})
    return legalize.run(k, lowering.PassContext(lowering.get_target("ascend910b1")))


def _division(k: ir.Kernel) -> ir.Op:
    (div,) = [e for s in ir.walk(k.body) if isinstance(s, ir.Store) for e in ir.walk_expr(s.value)
              if isinstance(e, ir.Op) and e.op == "div"]
    return div


@pytest.mark.parametrize("body", [
    "e = exp(xt - max(xt, axis=1))\nstore(y[r, :], e / sum(e, axis=1))",
    "store(y[r, :], exp(xt - max(xt, axis=1)) / sum(exp(xt - max(xt, axis=1)), axis=1))",
    "e = exp(xt - max(xt, axis=1))\nw = e * 2.0\nstore(y[r, :], e / sum(e, axis=1))",
])
def test_softmax_normalisation_stays_in_f16(body):
    div = _division(_legalized(body))
    assert div.type.dtype is DType.F16 and div.args[0].type.dtype is DType.F16, div


@pytest.mark.parametrize("body", [
    "store(y[r, :], xt / sum(xt, axis=1))",  # the sum may be 0 or tiny: 1 / s overflows f16
    "e = exp(xt)\nstore(y[r, :], e / sum(e, axis=1))",  # no max subtracted: no e = 1 in the row
    "e = exp(xt - max(zt, axis=1))\nstore(y[r, :], e / sum(e, axis=1))",  # another row's max
    "e = exp(xt - max(xt, axis=1))\nstore(y[r, :], zt / sum(e, axis=1))",  # a numerator other than e
    "e = exp(xt - max(xt, axis=1))\ne = e * 0.0001\nstore(y[r, :], e / sum(e, axis=1))",  # e reassigned: s < 1
    "e = exp(xt - max(xt, axis=1))\nstore(y[r, :], e / max(e, axis=1))",
])
def test_other_row_divisions_still_run_in_f32(body):
    div = _division(_legalized(body))
    assert div.type.dtype is DType.F32, div


def _task(tmp_path: Path, inputs: str) -> Path:
    (tmp_path / "sm.adsl").write_text(
        '@kernel\ndef sm(x: Tensor[f16, "B, D"], y: Tensor[f16, "B, D"]):\n'
        "    for blk in split(B, cores=AIV):\n        for r in tile(blk, size=auto, buffers=2):\n"
        "            xt = load(x[r, :])\n            e = exp(xt - max(xt, axis=1))\n"
        "            store(y[r, :], e / sum(e, axis=1))\n")
    (tmp_path / "sm.py").write_text(
        "import torch\n\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
        "        return torch.softmax(x, dim=-1)\n\n\n"
        f"def get_inputs():\n    g = torch.Generator().manual_seed(36)\n    x = {inputs}\n    return [x]\n\n\n"
        "def get_init_inputs():\n    return []\n")
    return tmp_path / "sm.adsl"


def _sim(adsl: Path):
    kernel = load_file(adsl)[0].instantiate({})
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    cpp = project.files["sm_kernel.cpp"]
    assert "Cast(yLocal" not in cpp and "static_cast<half>(1.0f / " in cpp  # y = e * (1 / s), all in f16
    (cmp,) = validate_sim(kernel, ctx.lowered, project, ctx, load_task_for(kernel, adsl.with_suffix(".py"))).comparisons
    return cmp


@pytest.mark.slow
@pytest.mark.parametrize("rows,cols", [(16, 4096), (2, 100003)])  # whole rows; rows in chunks (online max / sum)
def test_emulated_softmax_within_one_unit(tmp_path, rows, cols):
    # outputs in [0, 1]: one f16 unit at 1 is 2^-11 (the exp of f16 and the two roundings of e * (1 / s) together)
    cmp = _sim(_task(tmp_path, f"(4.0 * torch.randn({rows}, {cols}, generator=g)).half()"))
    assert cmp.ok and cmp.max_abs_err <= 2.0 ** -11, cmp


@pytest.mark.slow
def test_emulated_softmax_subnormal_reciprocal(tmp_path):
    # 20,000 near-equal logits: s ~ 20,000 > 16,384, so 1 / s and every output are subnormal in f16 (unit 2^-24)
    cmp = _sim(_task(tmp_path, "(0.01 * torch.randn(4, 20000, generator=g)).half()"))
    assert cmp.ok and cmp.max_abs_err <= 2.0 ** -23, cmp


@pytest.mark.slow
def test_emulated_softmax_non_finite_rows(tmp_path):
    # a row with +inf or NaN is NaN, a row with -inf entries their 0, an all -inf row NaN (as torch.softmax)
    inputs = ("torch.randn(8, 256, generator=g).half()\n    x[1, 3] = float('inf')\n    x[2, 7] = float('nan')\n"
              "    x[3, :100] = float('-inf')\n    x[4, :] = float('-inf')")
    cmp = _sim(_task(tmp_path, inputs))
    assert cmp.ok, cmp
