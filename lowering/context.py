"""What every pass receives besides the kernel: the target, options and injected services."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .targets import Target


@dataclass
class PassContext:
    target: Target
    #: Name used in `// file:LINE` comments of the emitted C++ (usually the DSL file's basename).
    source_name: str = "kernel.adsl"
    #: Optional LLM assistant (lowering.assist.Assistant) for the steps that consult one (dependency injection).
    assistant: Any = None
    timings: dict[str, float] = field(default_factory=dict)
    #: The kernel after the last pass (set by `lowering.lower`), which the emulator harness needs.
    lowered: Any = None
    dumps: dict[str, str] = field(default_factory=dict)
    #: The emitted project (lowering.emit.EmittedProject), set by the last pass.
    project: Any = None
    #: Provenance of the assisted decisions taken (lowering/assist), written into the manifest.
    decisions: list = field(default_factory=list)
    #: (extern op, dtype) -> the C++ definition of its checked compute stage (lowering/assist/construct.py).
    slots: dict = field(default_factory=dict)
    #: Split-K may be planned for MIX kernels (passes/plan_split_k.py); benchmarks turn it off for the "before" figure.
    allow_split_k: bool = True
    #: The two chained SDPA stages may be fused into a FLASH kernel (passes/plan_flash.py); benchmarks turn it off
    #: for the unfused figure.
    allow_flash: bool = True
    #: A FLASH kernel may take the AIC-driven ring (passes/plan_flash_ring.py); tests of the Matmul-API form and
    #: benchmarks' "before" turn it off.
    allow_flash_ring: bool = True
    #: Why two attention-like stages were not fused (plan_flash), for the chain's launch error; "" if none.
    flash_miss: str = ""
    #: A lone forward conv2d may take the NC1HWC0 route (passes/route_conv5hd.py); benchmarks and the old paths'
    #: tests turn it off.
    allow_conv5hd: bool = True
    #: Lowering one launch of a LAUNCHES kernel (launches do not nest: passes/route_conv5hd.py routes top-level convs only).
    in_launch: bool = False
    #: LAUNCHES kernels: each launch's context (its `lowered` kernel and `project`), in launch order.
    launches: list = field(default_factory=list)
    #: A kernel with a row fallback (ascend_dsl/row_fallback.py): the fallback's context (lowered, project).
    fallback: Any = None
