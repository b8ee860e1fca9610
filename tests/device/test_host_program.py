"""The emitted host program (`<k>_main.cpp`, unchanged) on the emulator's ACL runtime, for a sample of
gallery kernels (a vector kernel with a scalar, a loss combined across cores through a workspace, a MIX
matmul), compared with the PyTorch reference (`--validate acl`); a host program that reads its results
before synchronising the stream fails."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from ascend_dsl import load_file
from lowering import lower
from npu_harness.device.host_program import validate_host
from npu_harness.validate import load_task_for

REPO = Path(__file__).resolve().parents[2]
SAMPLE = ["activation/leaky_relu.adsl", "loss/mse_loss.adsl", "fuse/matmul_bias_relu.adsl"]
CAP = 20000


def _validate(rel: str, patch=None):
    adsl = REPO / "examples" / rel
    kernel = load_file(adsl)[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1")
    if patch:
        project = replace(project, files={**project.files, **patch(project)})
    return validate_host(kernel, project, ctx, load_task_for(kernel, adsl.with_suffix(".py"), cap=CAP))


@pytest.mark.slow
@pytest.mark.parametrize("rel", SAMPLE)
def test_emitted_host_program_matches_the_reference(rel):
    r = _validate(rel)
    assert r.ok and r.level == "acl", r.detail
    assert r.comparisons and all(c.ok for c in r.comparisons)


@pytest.mark.slow
def test_host_program_reading_results_before_synchronising_fails():
    def no_sync(project):
        main = f"{project.name}_main.cpp"
        assert "    aclrtSynchronizeStream(stream);\n" in project.files[main]
        return {main: project.files[main].replace("    aclrtSynchronizeStream(stream);\n", "")}

    r = _validate(SAMPLE[0], no_sync)
    assert not r.ok
    assert "ACL-UNSYNCED" in [e.code for e in r.sim_errors]
    assert not all(c.ok for c in r.comparisons)  # the outputs were copied before the kernel ran


@pytest.mark.slow
def test_cli_validate_acl(tmp_path):
    out = subprocess.run([sys.executable, "-m", "npu_harness.cli", str(REPO / "examples" / SAMPLE[0]), "-o",
                          str(tmp_path / "leaky_relu"), "--validate", "acl", "--cap", str(CAP)],
                         capture_output=True, text=True, timeout=600, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert "acl: PASS" in out.stdout
