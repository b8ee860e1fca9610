"""Host arrays (numpy) between the task worker and the parent: exact for every dtype, bf16 included,
and the CLI's sim validation never imports torch in the parent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from npu_harness.arrays import HostArray, Opaque, from_torch
from npu_harness.compare import compare
from npu_harness.task_result import TensorShape, load_cases, save_cases

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int8, torch.uint8])
def test_round_trip_is_exact(dtype, tmp_path):
    g = torch.Generator().manual_seed(0)
    t = (torch.randn(3, 7, generator=g) * 100).to(dtype)
    if dtype.is_floating_point:
        t[0, 0], t[0, 1], t[0, 2] = float("inf"), float("-inf"), float("nan")
    h = from_torch(t)
    assert h.shape == (3, 7)
    back = h.to_torch()
    assert back.dtype == dtype
    assert torch.equal(back.view(torch.uint8) if dtype.itemsize == 1 else back.view(getattr(torch, f"int{8 * dtype.itemsize}")),
                       t.view(torch.uint8) if dtype.itemsize == 1 else t.view(getattr(torch, f"int{8 * dtype.itemsize}")))
    # widening to float64 is exact (same values as torch's own widening)
    want = t.to(torch.float64).numpy()
    np.testing.assert_array_equal(h.to_float64(), want)
    save_cases(tmp_path / "r.npz", {"format": "standard", "constants": {"dim": 7}, "cases": [
        {"inputs": [h, 3, "s", object()], "outputs": [h], "params": {"w": h, "m": TensorShape((2, 3), "float16")},
         "attrs": {"alpha": 0.5}}]})
    data = load_cases(tmp_path / "r.npz")
    case = data["cases"][0]
    ins, outs = case["inputs"], case["outputs"]
    assert isinstance(ins[0], HostArray) and ins[0].dtype == h.dtype
    np.testing.assert_array_equal(ins[0].data, h.data)
    assert ins[1:3] == [3, "s"] and isinstance(ins[3], Opaque) and ins[3].type_name == "object"
    assert case["attrs"] == {"alpha": 0.5} and data["constants"] == {"dim": 7}
    assert case["params"]["m"] == TensorShape((2, 3), "float16")
    np.testing.assert_array_equal(outs[0].to_float64(), want)
    np.testing.assert_array_equal(case["params"]["w"].data, h.data)


def test_bf16_bits_and_compare():
    t = torch.tensor([1.0, -2.5, 3.140625, 1e-3], dtype=torch.bfloat16)
    h = from_torch(t)
    assert h.data.dtype == np.uint16
    np.testing.assert_array_equal(h.to_float64(), t.to(torch.float64).numpy())
    assert compare("y", h, t.to(torch.float32), "bf16").ok
    bad = t.clone()
    bad[1] = 0.0
    c = compare("y", from_torch(bad), h, "bf16")
    assert not c.ok and c.mismatches == 1 and c.max_abs_err == 2.5


def test_compare_matches_torch_isclose():
    g = torch.Generator().manual_seed(1)
    ref = torch.randn(1000, generator=g)
    got = ref + torch.randn(1000, generator=g) * 2e-4
    got[5] = float("nan")
    ref[6] = float("nan")
    got[6] = float("nan")
    ref[7], got[7] = float("inf"), 1.0
    ref[8], got[8] = float("inf"), float("inf")
    ref[9], got[9] = float("-inf"), float("inf")
    c = compare("y", got, ref, "f32")
    close = torch.isclose(got.double(), ref.double(), atol=1e-4, rtol=1e-4, equal_nan=True)
    assert c.mismatches == int((~close).sum()) and c.max_abs_err == float("inf")
    assert not close[7] and close[8] and not close[9]
    assert compare("y", ref[:5], ref[:5].clone(), "f32").ok


def test_cli_sim_validation_does_not_import_torch(tmp_path):
    code = ("import sys; from npu_harness import cli; "
            f"rc = cli.main(['examples/activation/relu.adsl', '-o', {str(tmp_path / 'out')!r}, '--validate', 'sim', "
            "'--set', 'batch_size=2', '--set', 'dim=1000']); "
            "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH'); sys.exit(rc)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    res = subprocess.run([sys.executable, "-c", code], check=False, cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "sim: PASS" in res.stdout and "NO-TORCH" in res.stdout
