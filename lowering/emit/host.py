"""Host-side files of the kernel-direct project, rendered from a kernel's view model: the standalone
host program (`<k>_main.cpp`), the C entry points of the torch binding (`<k>_torch.cpp`), the launch
stub an emulator build uses in place of CANN's generated `aclrtlaunch_<entry>.h` (`emulator/`), and
the CMake build of all of them for a real NPU or the emulator (docs/npu.md)."""

from __future__ import annotations

from ..targets import Target
from .shared import KernelView, render


def emulator_defines(target: Target, mix: bool) -> dict[str, int]:
    """The emulator's -D macros for `target` (the mapping of npu_harness/sim/runner.py:sim_defines, which
    the tests compare against) plus the core counts the emulated ACL runtime reports."""
    return {
        "ASCEND_SIM_UB_BYTES": target.ub_bytes,
        "ASCEND_SIM_HAS_DATACOPYPAD": int(target.has_datacopypad),
        "__NPU_ARCH__": target.npu_arch,
        "ASCEND_SIM_MAX_BLOCKS": target.aic if mix else target.aiv,
        "ASCEND_SIM_L1_BYTES": target.l1_bytes,
        "ASCEND_SIM_L0A_BYTES": target.l0a_bytes,
        "ASCEND_SIM_L0B_BYTES": target.l0b_bytes,
        "ASCEND_SIM_L0C_BYTES": target.l0c_bytes,
        "ASCEND_SIM_AIV_NUM": target.aiv,
        "ASCEND_SIM_AIC_NUM": target.aic,
    }


def host_files(view: KernelView, target: Target) -> dict[str, str]:
    entry = view.entry
    return {
        f"{view.name}_main.cpp": render("launch_main.cpp.jinja", view),
        f"{view.name}_torch.cpp": render("torch_launch.cpp.jinja", view),
        f"emulator/aclrtlaunch_{entry}.h": render("aclrtlaunch_stub.h.jinja", view),
        f"emulator/aclrtlaunch_{entry}.cpp": render("aclrtlaunch_stub.cpp.jinja", view),
        "CMakeLists.txt": render("CMakeLists.txt.jinja", view, emulator_defines=emulator_defines(target, view.mix)),
    }
