"""Split-K (lowering/passes/plan_split_k.py, mix_*.jinja): GEMMs whose output has fewer base blocks than cube
cores split K over the cores, partial sums in an fp32 GM workspace, SyncAll, then the vector cores add the
slices in a fixed order and run the epilogue once on the full sum. Validated in the emulator against PyTorch
(its order check runs the blocks in more than one order, so a result that depends on core order fails)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ascend_dsl
import lowering
from ascend_dsl import ir
from ascend_dsl.dtypes import DType
from lowering.context import PassContext
from lowering.passes import plan_split_k
from lowering.pipeline import run_pipeline
from lowering.targets import get_target

REPO = Path(__file__).resolve().parent.parent

#: f16/bf16 inputs, transposed weight, bias, an element-wise epilogue and a cast to the input dtype.
LINEAR = '''from ascend_dsl import kernel, Tensor, f32, f16, bf16


@kernel(T=[f16, bf16])
def lin(x: Tensor[T, "M, K"], w: Tensor[T, "N, K"], bias: Tensor[f32, "N"], y: Tensor[T, "M, N"]):
    for blk in split(M, N, cores=AIC):
        with cube:
            acc = matmul(x[blk], w[blk], bias=bias, transpose_b=True)
        with vector:
            store(y[blk], cast(relu(acc) * 0.5 + acc * 0.25, T))
'''

LINEAR_TASK = '''import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w, b):
        acc = torch.matmul(x.float(), w.float().T) + b
        return (torch.relu(acc) * 0.5 + acc * 0.25).to(x.dtype)


M = 40
K = 3000
N = 72
DT = torch.float16


def get_inputs():
    return [torch.randn(M, K).to(DT), (torch.randn(N, K) * 0.05).to(DT), torch.randn(N)]


def get_init_inputs():
    return []
'''


def _example(tmp_path: Path, name: str, adsl: str, task: str, dt: str = "float16"):
    from npu_harness.gallery import Example

    (tmp_path / f"{name}.adsl").write_text(adsl)
    (tmp_path / f"{name}.py").write_text(task.replace("torch.float16", f"torch.{dt}"))
    return Example("test", name, tmp_path / f"{name}.adsl", tmp_path / f"{name}.py")


def _gallery(example: str):
    from npu_harness.gallery import Example

    cat, name = example.split("/")
    return Example(cat, name, REPO / f"examples/{example}.adsl", REPO / f"examples/{example}.py")


def _validate(ex, overrides: dict, dtypes: dict | None = None):
    from npu_harness.gallery import validate

    return validate(ex, dtypes or {}, overrides)


def _split(res) -> int:
    """Slices the launch used: every AIV passes the one SyncAll of the split-K path (0: not split)."""
    blocks = res.counters["blocks"]
    return sum(1 for b in blocks if b.get("sync_all"))


# ----------------------------------------------------------------------------- the plan


def _lowered(text: str, allow: bool = True) -> ir.Kernel:
    k = ascend_dsl.parse_text(text, file="sk.adsl")[0].instantiate({})
    ctx = PassContext(get_target("ascend910b1"), "sk.adsl")
    ctx.allow_split_k = allow
    return run_pipeline(k, ctx)


def test_plan_allows_split_k_and_the_switch_turns_it_off():
    assert ir.cube_loop(_lowered(LINEAR)).plan.split_k_min == plan_split_k.MIN_SLICE_K
    assert ir.cube_loop(_lowered(LINEAR, allow=False)).plan.split_k_min == 0


def test_host_tiling_decides_from_runtime_shapes():
    """The emitted host code picks S from M, N, K and the cores; nothing is split without the plan."""
    k = ascend_dsl.parse_text(LINEAR, file="sk.adsl")[0].instantiate({})
    project, _ = lowering.lower(k, "ascend910b1", "sk.adsl")
    tiling = next(v for n, v in project.files.items() if n.endswith("_tiling.h"))
    assert "tasks < cubeCores" in tiling and f"kMinSliceK = {plan_split_k.MIN_SLICE_K}" in tiling
    kernel_cpp = next(v for n, v in project.files.items() if n.endswith("_kernel.cpp"))
    assert "SyncAll();" in kernel_cpp and "ReduceSlices" in kernel_cpp and "SetAtomicAdd" not in kernel_cpp


# ----------------------------------------------------------------------------- emulator vs PyTorch


@pytest.mark.slow
@pytest.mark.parametrize("dt,T", [("float16", DType.F16), ("bfloat16", DType.BF16)])
def test_linear_bias_epilogue_f16_out_odd_shapes(tmp_path, dt, T):
    """Bias + element-wise epilogue + cast to f16/bf16 once, odd M/N/K (tails in every dimension)."""
    res = _validate(_example(tmp_path, "lin", LINEAR, LINEAR_TASK, dt), {"M": 40, "K": 3000, "N": 72}, {"T": T})
    assert res.ok, res.detail
    assert _split(res) > 0, "K = 3000 with one output block must be split"


@pytest.mark.slow
def test_direct_store_64x8192x64():
    """No epilogue (IterateAll kernels): the split path adds the slices and writes C itself."""
    res = _validate(_gallery("matmul/matmul_square"), {"M": 64, "N": 64, "K": 8192})
    assert res.ok, res.detail
    blocks = res.counters["blocks"]
    assert _split(res) == len(blocks) and len(blocks) == 2 * 16  # S = 8192 / 512 slices, one AIC each
    assert sum(b.get("cube_macs", 0) for b in blocks) == 64 * 64 * 8192


@pytest.mark.slow
def test_direct_bias_transposed_odd():
    res = _validate(_gallery("matmul/matmul_bias"), {"M": 33, "N": 47, "K": 2100})
    assert res.ok, res.detail
    assert _split(res) > 0


@pytest.mark.slow
def test_row_reduction_epilogue_sees_the_full_sum():
    """softmax over rows after the slices are added (whole-row base blocks)."""
    res = _validate(_gallery("fuse/matmul_softmax"), {"M": 24, "N": 40, "K": 4096})
    assert res.ok, res.detail
    assert _split(res) > 0


@pytest.mark.slow
def test_not_split_when_the_output_fills_the_cores_or_k_is_short():
    res = _validate(_gallery("matmul/matmul_square"), {"M": 64, "N": 64, "K": 512})
    assert res.ok, res.detail
    assert _split(res) == 0
