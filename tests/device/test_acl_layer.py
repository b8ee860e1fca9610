"""The emulator's ACL runtime layer (npu_harness/sim/acl): a hand-written host program with one planted
bug per scenario is built against it and each bug is reported; the emitted CMake project builds and
runs in RUN_MODE=emulator unchanged."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from lowering import all_targets, lower
from lowering.emit.host import emulator_defines
from npu_harness.device.chevron import rewrite_launches
from npu_harness.device.emulator_build import ACL_RUNTIME
from npu_harness.sim.compiler import CompileError, compile_program, run_program
from npu_harness.sim.runner import sim_defines

HERE = Path(__file__).parent
REPO = HERE.parent.parent


@pytest.fixture(scope="module")
def acl_host(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("acl") / "acl_host.cpp"
    src.write_text(rewrite_launches((HERE / "programs" / "acl_host.cpp").read_text(), "acl_host.cpp"))
    return compile_program([src, ACL_RUNTIME], defines=emulator_defines(all_targets()["ascend910b1"], False))


def _run(binary: Path, scenario: str):
    res = run_program(binary, [scenario], timeout=60)
    return res, [e.code for e in res.errors]


def test_clean_host_program_runs_the_kernel_and_copies_back(acl_host):
    res, codes = _run(acl_host, "ok")
    assert res.returncode == 0 and codes == []
    assert "sync=0" in res.stdout and "match" in res.stdout.split()


@pytest.mark.parametrize("scenario,code,data", [
    ("unsynced-read", "ACL-UNSYNCED", "mismatch"),    # D2H before aclrtSynchronizeStream: stale output
    ("destroy-pending", "ACL-UNSYNCED", "match"),     # stream destroyed with the launch still queued
    ("over-destmax", "ACL-PARAM", "mismatch"),        # count > destMax: nothing copied
    ("overrun", "ACL-MEMCPY", "match"),               # copy past the end of the device allocation
    ("wrong-kind", "ACL-MEMCPY", "match"),            # DEVICE_TO_HOST with a device destination
    ("double-free", "ACL-FREE", "match"),
    ("host-arg", "ACL-LAUNCH", "mismatch"),           # a host pointer passed to the kernel: not launched
    ("no-device", "ACL-STATE", "mismatch"),           # runtime calls before aclrtSetDevice
])
def test_planted_host_bug_is_reported(acl_host, scenario, code, data):
    res, codes = _run(acl_host, scenario)
    assert code in codes, res.stderr
    assert data in res.stdout.split()


def test_zero_byte_malloc_is_rejected(acl_host):
    res, codes = _run(acl_host, "malloc-zero")
    assert codes == ["ACL-PARAM"] and "rc=100000" in res.stdout  # ACL_ERROR_INVALID_PARAM


def test_kernel_fault_fails_the_synchronize(acl_host):
    res, codes = _run(acl_host, "kernel-fault")  # 100 blocks > 48 vector cores
    assert "BLOCK-DIM" in codes
    assert "sync=507015" in res.stdout  # ACL_ERROR_RT_AICORE_EXCEPTION


@pytest.mark.parametrize("target", ["ascend910b1", "ascend910b4", "ascend310p"])
@pytest.mark.parametrize("mix", [False, True])
def test_cmake_emulator_defines_match_the_emulators_own(target, mix):
    ours = emulator_defines(all_targets()[target], mix)
    theirs = sim_defines(target, "mix" if mix else "vector")
    assert {k: ours[k] for k in theirs} == theirs
    assert (ours["ASCEND_SIM_AIV_NUM"], ours["ASCEND_SIM_AIC_NUM"]) == (all_targets()[target].aiv,
                                                                         all_targets()[target].aic)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")
def test_emitted_cmake_project_builds_and_runs_on_the_emulator(tmp_path):
    """The emitted CMakeLists.txt (RUN_MODE=emulator) builds the unchanged host program and torch entry
    points; the host program reads x.bin and writes y.bin."""
    from ascend_dsl import load_file

    kernel = load_file(REPO / "examples/activation/leaky_relu.adsl")[0].instantiate()
    project, _ = lower(kernel, "ascend910b1")
    src = tmp_path / "src"
    for name, text in project.files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    build = tmp_path / "build"
    cfg = subprocess.run(["cmake", "-S", str(src), "-B", str(build), "-DRUN_MODE=emulator",
                          f"-DASCEND_SIM_ROOT={ACL_RUNTIME.parent.parent}"], capture_output=True, text=True, timeout=120)
    assert cfg.returncode == 0, cfg.stdout + cfg.stderr
    bld = subprocess.run(["cmake", "--build", str(build), "-j", "2"], capture_output=True, text=True, timeout=600)
    assert bld.returncode == 0, bld.stdout[-3000:] + bld.stderr[-3000:]
    assert (build / "libleaky_relu_torch.so").is_file()
    x = np.random.default_rng(0).standard_normal(10007).astype(np.float32)
    with tempfile.TemporaryDirectory() as io:
        x.tofile(Path(io) / "x.bin")
        res = run_program(build / "leaky_relu_main", ["10007", "0.01"], cwd=Path(io), timeout=60)
        assert res.returncode == 0 and not res.errors, res.stderr
        y = np.fromfile(Path(io) / "y.bin", dtype=np.float32)
    np.testing.assert_allclose(y, np.where(x > 0, x, x * np.float32(0.01)), rtol=1e-6, atol=0)


def test_chevron_rewrite_keeps_lines_and_skips_non_launches():
    text = ("// the second <<<>>> argument is l2ctrl\n"
            "    relu_kernel<float><<<blocks, nullptr, stream>>>(x, y, n);\n"
            "    add<<<8, 0, s>>>(a, b);\n"
            "    bool shifted = (a << 3) > b;\n")
    out = rewrite_launches(text, "k.cpp", mix=True).splitlines()
    assert out[:2] == ['#include "acl/ascend_sim_launch.h"', '#line 1 "k.cpp"']
    assert out[2] == text.splitlines()[0] and out[5] == text.splitlines()[3]
    assert out[3] == ('    ::AscendC::sim::acl::Chevron(relu_kernel<float>, "relu_kernel<float>", '
                      "::AscendC::KernelMode::MIX_MODE, blocks, nullptr, stream)(x, y, n);")
    assert out[4].startswith('    ::AscendC::sim::acl::Chevron(add, "add", ::AscendC::KernelMode::MIX_MODE, 8, 0, s)(')


def test_shared_libraries_and_programs_linking_them_compile_header_only(tmp_path):
    # the prebuilt runtime object is not PIC, and a copy in a program would interpose a library's runtime
    src = tmp_path / "x.cpp"
    src.write_text("int main() { return 0; }\n")
    for kw in ({"shared": True}, {"link": [src]}):
        with pytest.raises(CompileError, match="header-only"):
            compile_program([src], defines={}, prebuilt=True, **kw)
