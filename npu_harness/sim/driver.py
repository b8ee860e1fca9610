"""Generate and build the emulator driver for an emitted project (shape-generic: one build per kernel)."""

from __future__ import annotations

from pathlib import Path

from lowering.emit import KernelView, render
from lowering.targets import Target


def driver_source(view: KernelView) -> str:
    return render("sim_driver.cpp.jinja", view)


def target_defines(target: Target) -> dict[str, int]:
    """The emulator's -D macros for a vector kernel on `target` (one definition: runner.sim_defines)."""
    from .runner import sim_defines

    return sim_defines(target.name, "vector")


__all__ = ["Path", "driver_source", "target_defines"]
