"""Benchmark-scale shapes: every gallery kernel lowers and its host tiling launches at them.

Shapes come from the task files run on PyTorch's meta device (no data), so 1.6 G-element tensors
cost nothing; only the emitted host tiling code runs (npu_harness.tiling_probe). The emulator
validates the same kernels at smaller shapes (tests/test_gallery_e2e.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lowering import lower
from lowering.targets import get_target
from npu_harness.gallery import discover, launch_at, scale_shapes
from npu_harness.row_fallback import form_blocks
from npu_harness.task_worker import task_shapes
from npu_harness.tiling_probe import launch_blocks

REPO = Path(__file__).resolve().parent.parent
TARGET = "ascend910b1"


def _cases():
    for ex in discover():
        key = f"{ex.category}/{ex.name}"
        shapes = scale_shapes(key, task_shapes(ex.task)["constants"])
        for shape in [{}, *(s for s in shapes if s)]:  # {}: the task's own sizes (a groups task: its cases)
            for dtypes in ex.validation_dtypes():
                tag = ",".join(f"{k}={v.value}" for k, v in dtypes.items()) or "-"
                size = ",".join(f"{k}={v}" for k, v in shape.items()) or "default"
                yield pytest.param(ex, dtypes, shape, id=f"{key}[{tag}][{size}]")


@pytest.mark.parametrize("ex,dtypes,shape", list(_cases()))
def test_gallery_kernel_launches_at_benchmark_scale(ex, dtypes, shape):
    blocks, symbols = launch_at(ex, dtypes, shape)
    assert 0 < blocks <= get_target(TARGET).aiv, (blocks, symbols)


def test_every_gallery_kernel_has_a_benchmark_scale_shape():
    missing = [f"{ex.category}/{ex.name}" for ex in discover()
               if not scale_shapes(f"{ex.category}/{ex.name}", task_shapes(ex.task)["constants"])]
    assert not missing, missing


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "reverse_cumsum", "exclusive_cumsum", "masked_cumsum"])
def test_scans_with_rows_longer_than_ub_launch_in_chunks(name):
    ex = next(e for e in discover() if e.name == name)
    for dts in ex.dtypes:
        assert launch_at(ex, dts, {"batch_size": 4096, "dim": 393216})[0] == 48
        assert launch_at(ex, dts, {"batch_size": 4, "dim": 1_000_000})[0] == 48  # each row over a group of 12 cores


def test_softmax_epilogue_with_rows_longer_than_the_fused_block_launches_its_fallback():
    ex = next(e for e in discover() if e.name == "matmul_softmax")
    kernel = ex.source.instantiate(ex.dtypes[0])
    project, ctx = lower(kernel, TARGET, ex.adsl.name)
    fits, long = {"M": 4096, "K": 4096, "N": 512}, {"M": 4096, "K": 4096, "N": 4096}
    assert launch_blocks(project, TARGET, fits, {}, 48) > 0  # the fused kernel alone
    assert launch_blocks(project, TARGET, long, {}, 48) == 0
    # a row that fits keeps the fused kernel where it is not slower (a small GEMM); at 4096 x 4096 x 512 its base
    # blocks of 16 whole rows would re-read B 256 times: the launches run (npu_harness/row_fallback.py estimates)
    assert form_blocks(kernel, project, ctx, {"M": 512, "K": 256, "N": 512}, {})[0] == "fused"
    assert form_blocks(kernel, project, ctx, fits, {})[0] == "fallback"
    form, blocks = form_blocks(kernel, project, ctx, long, {})
    assert form == "fallback" and blocks > 0
    assert launch_at(ex, ex.dtypes[0], long)[0] > 0


def test_group_count_that_does_not_divide_the_channels_does_not_launch():
    ex = next(e for e in discover() if e.name == "group_norm")
    kernel = ex.source.instantiate(ex.dtypes[0])
    project, ctx = lower(kernel, TARGET, ex.adsl.name)
    symbols = {"N": 16, "C": 64, "H": 256, "W": 256}
    assert launch_blocks(project, TARGET, symbols, {"num_groups": 8, "eps": 1e-5}, 48) > 0
    assert launch_blocks(project, TARGET, symbols, {"num_groups": 7, "eps": 1e-5}, 48) == 0


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "npu_harness.cli", *args], check=False, capture_output=True,
                          text=True, timeout=300, cwd=REPO)


def test_cli_validate_tiling_passes_and_fails_with_the_reason(tmp_path):
    ok = _cli("examples/activation/softmax.adsl", "-o", str(tmp_path / "a"), "--validate", "tiling",
              "--set", "batch_size=4096", "--set", "dim=393216")
    assert ok.returncode == 0, ok.stderr
    assert "tiling: PASS (B=4096, D=393216; 48 blocks" in ok.stdout
    bad = _cli("examples/loss/cross_entropy.adsl", "-o", str(tmp_path / "b"), "--validate", "tiling", "--set",
               "num_classes=1000000")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "tiling: FAIL (B=4096, C=1000000)" in bad.stdout and "'gather' needs the whole row in UB" in bad.stdout


def test_task_that_cannot_run_on_the_meta_device_is_a_task_error(tmp_path):
    task = tmp_path / "t.py"
    task.write_text('''import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x * float(x.sum().item())
N = 1024
def get_inputs():
    return [torch.randn(N)]
def get_init_inputs():
    return []
''')
    res = _cli("examples/activation/relu.adsl", "-o", str(tmp_path / "o"), "--validate", "tiling", "--task", str(task))
    assert res.returncode == 2, res.stdout + res.stderr
    assert "error[TASK-ERROR]" in res.stderr and "meta device" in res.stderr
