"""Emulator builds of kernel sources that launch with `k<<<blockDim, l2ctrl, stream>>>(args...)` (the
bisheng launch syntax of ascendc.md §7 Path B, which g++ cannot parse): each such launch becomes
`::AscendC::sim::acl::Chevron(k, "k", mode, blockDim, l2ctrl, stream)(args...)`, which queues the
kernel on the emulated ACL runtime exactly as the launch would on an NPU (acl/ascend_sim_launch.h).
The rewrite keeps the line structure, so reports still name the kernel file's own lines."""

from __future__ import annotations

import re

_LAUNCH = re.compile(r"\b(?P<fn>[A-Za-z_][\w:]*(?:<[^<>;()\n]*>)?)[ \t]*<<<(?P<cfg>[^;\n]+?)>>>[ \t]*\(")


def rewrite_launches(text: str, file: str, *, mix: bool = False) -> str:
    """`text` with every `<<<>>>` launch rewritten for the emulator (MIX kernels: `mix=True`, as
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2) selects on CANN)."""
    mode = "MIX_MODE" if mix else "AIV_MODE"

    def sub(m: re.Match) -> str:
        fn = m.group("fn")
        return f'::AscendC::sim::acl::Chevron({fn}, "{fn}", ::AscendC::KernelMode::{mode}, {m.group("cfg")})('

    body = _LAUNCH.sub(sub, text)
    return f'#include "acl/ascend_sim_launch.h"\n#line 1 "{file}"\n{body}'
