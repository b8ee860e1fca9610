"""A fused kernel's fallback form (ascend_dsl/row_fallback.py): its project beside the fused one.

The fused MIX kernel's files stay the project's `files` (what the emulator compiles); the fallback's (a kernel of
several launches, emitted by lowering/emit/launches.py) are its `fallback` project, written under `fallback/`
(`written_files`), and the fused manifest gains `fallback`: the directory, the
kind, and the rule the host follows (run the fused kernel when its tiling function launches blocks at the
shapes and a static traffic estimate says it is not slower than the launches, the fallback's launches in their
order otherwise; npu_harness/row_fallback.py does so in the emulator). A kernel whose cut was refused records why (`fallback_miss`) and keeps the fused kernel only.
"""

from __future__ import annotations

import json
from dataclasses import replace

from . import EmittedProject

DIR = "fallback/"
RULE = ("run the fused kernel when its tiling function returns blocks > 0 at the launch's shapes and its estimate "
        "is not above the launches' (each: launches x launch overhead + max(cube MACs at peak, A + B once at HBM "
        "rate + re-reads at the L2->L1 rate per launched AIC) + f32 traffic at HBM rate; fused: B re-read "
        "ceil(M / baseM) times, baseM from its tiling; launches: A ceil(N / baseN) and B ceil(M / baseM) times with "
        "fallback/'s first launch's base block, + 8 B per M x N element through the workspace); otherwise run "
        "fallback/manifest.json's launches in order (npu_harness/row_fallback.py estimates)")


def attach(project: EmittedProject, fallback: EmittedProject | None, miss: str = "") -> EmittedProject:
    """`project` with its fallback project and the manifest entry naming it (or why none)."""
    manifest = dict(project.manifest)
    files = dict(project.files)
    if fallback is None:
        manifest["fallback_miss"] = miss
    else:
        manifest["fallback"] = {"dir": DIR, "kernel_type": fallback.manifest.get("kernel_type"), "rule": RULE}
    files["manifest.json"] = json.dumps(manifest, indent=2) + "\n"
    return replace(project, files=files, manifest=manifest, fallback=fallback)


def written_files(project: EmittedProject) -> dict[str, str]:
    """The files an emitted project is written as: its own, and its fallback's under fallback/."""
    if project.fallback is None:
        return dict(project.files)
    return {**project.files, **{DIR + name: text for name, text in project.fallback.files.items()}}
