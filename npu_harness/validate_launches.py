"""Helpers for a kernel of several launches (LAUNCHES kind, lowering/passes/partition_launches.py) in the harness.

npu_harness/validate.py validates one in the emulator as follows.

Each launch's project is compiled as a program of its own (shared through the content-addressed compile
cache like any kernel's) and the launches run in order on one I/O directory, the host's GM: inputs are written
once, a workspace tensor shared by two launches is a file created before the first launch and filled with 0xFF
bytes (NaN for floats: a launch reading what no earlier launch wrote shows in the result), written by the launch
that stores it (an output of its program) and mapped by the launches that read it (an input of theirs). The
outputs of the whole kernel are compared with the reference as for any kernel; a launch that fails stops the
sequence. The estimate is the launches' estimates added (npu_harness/cost/launches.py).
"""

from __future__ import annotations

import math

from ascend_dsl.diagnostics import DslError
from ascend_dsl.diagnostics import ErrorCode as E
from lowering import EmittedProject, PassContext


def require_one_launch(project: EmittedProject, ctx: PassContext, what: str, why: str = "is not written yet",
                       hint: str | None = None) -> None:
    """`what` (an export, a device build) takes a kernel of one launch: a located UNSUPPORTED for several, `why`
    saying why (a format that cannot express it, or a path not written)."""
    if project.launches:
        la = ctx.lowered.body[1] if ctx.lowered is not None else None
        raise DslError.at(E.UNSUPPORTED, f"{what} of a kernel of several launches ({len(project.launches)}: "
                          + ", ".join(p.name for p in project.launches) + f") {why}", la.span if la else None,
                          hint or "validate it in the emulator (--validate sim) or on an NPU through the torch op "
                          "(--validate npu), or write each launch as a kernel of its own")


def numel(shape: tuple, symbols: dict[str, int]) -> int:
    return math.prod(symbols[d] if isinstance(d, str) else d for d in shape)
