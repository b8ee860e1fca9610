"""Golden files for the emitted AscendC: kernel, tiling/host code, per target (update: --update-golden)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_dsl import load_file
from lowering import lower

REPO = Path(__file__).resolve().parent.parent

CASES = [
    ("activation/gelu", "ascend910b1", {}),
    ("activation/elu", "ascend910b1", {}),
    ("activation/hardtanh", "ascend910b1", {"T": "f16"}),
    ("activation/leaky_relu", "ascend310p", {}),
    ("loss/mse_loss", "ascend910b1", {}),  # cross-core accumulator: workspace slots + SyncAll
    ("optimizer/lamb", "ascend910b1", {"T": "f16"}),  # two split loops, kernel-scope sqrt and select
    ("math/exclusive_cumsum", "ascend910b1", {}),
    ("pooling/max_pool2d", "ascend910b1", {}),
    ("reduce/prod_dim", "ascend910b1", {"T": "f16"}),  # row products: a halving tree of Mul over an f32 row
    ("index/gather_middle", "ascend910b1", {"T": "f16"}),  # torch.gather along dim 1: x slabs in UB, Gather
    ("attention/causal_sdpa", "ascend910b1", {}),  # flash attention: the AIC-driven ring + its Matmul-API form
]


@pytest.mark.parametrize("example,target,dtypes", CASES, ids=lambda c: str(c).replace("/", "_"))
def test_emitted_project(example, target, dtypes, golden):
    adsl = REPO / "examples" / f"{example}.adsl"
    kernel = load_file(adsl)[0].instantiate(dtypes)
    project, _ = lower(kernel, target, adsl.name)
    suffix = "_".join([target] + [f"{k}{v}" for k, v in dtypes.items()])
    for fname in (f"{kernel.name}_kernel.cpp", f"{kernel.name}_tiling.h"):
        golden.check(f"{kernel.name}_{suffix}/{fname}", project.files[fname])


def test_emission_is_deterministic():
    adsl = REPO / "examples/activation/selu.adsl"
    a, _ = lower(load_file(adsl)[0].instantiate(), "ascend910b1", adsl.name)
    b, _ = lower(load_file(adsl)[0].instantiate(), "ascend910b1", adsl.name)
    assert a.files == b.files


def test_source_comments_point_at_dsl_lines():
    adsl = REPO / "examples/activation/gelu.adsl"
    project, _ = lower(load_file(adsl)[0].instantiate(), "ascend910b1", adsl.name)
    text = adsl.read_text().splitlines()
    store_line = next(i for i, line in enumerate(text, 1) if "store(" in line)
    assert f"// gelu.adsl:{store_line}" in project.files["gelu_kernel.cpp"]


def test_310p_has_no_datacopypad_and_910b_does():
    adsl = REPO / "examples/activation/relu.adsl"
    k = load_file(adsl)[0].instantiate()
    p310, _ = lower(k, "ascend310p", adsl.name)
    p910, _ = lower(k, "ascend910b1", adsl.name)
    assert "DataCopyPad(" not in p310.files["relu_kernel.cpp"]
    assert "DataCopyPad(" in p910.files["relu_kernel.cpp"]
