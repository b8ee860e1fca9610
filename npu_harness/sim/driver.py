"""Generate and build the emulator driver for an emitted project (shape-generic: one build per kernel)."""

from __future__ import annotations

from pathlib import Path

from lowering.emit import build_view, render
from lowering.targets import Target


def driver_source(view: dict) -> str:
    return render("sim_driver.cpp.jinja", **view)


def target_defines(target: Target) -> dict[str, int]:
    return {
        "ASCEND_SIM_UB_BYTES": target.ub_bytes,
        "ASCEND_SIM_HAS_DATACOPYPAD": int(target.has_datacopypad),
        "__NPU_ARCH__": target.npu_arch,
        "ASCEND_SIM_MAX_BLOCKS": target.aiv,
    }


__all__ = ["build_view", "driver_source", "target_defines", "Path"]
