"""AscendC emission: one module and one template family per kernel kind, chosen through `KINDS`.

A kind's module builds a frozen view (a dataclass of strings and numbers, every decision already made
by the passes) from the lowered kernel; its templates lay the code out. The emitted project carries
its view, so the harness renders the emulator driver from it. Adding a kind: an ir.KernelKind member,
its rule in lowering/passes/select_kind.py, a module here with `build_view` and `project_manifest`,
its templates in codegen_templates/, and one `Kind(...)` line below (docs/design.md shows an example).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from ascend_dsl import ir

from ..context import PassContext
from . import (
    antialias,
    box,
    chain,
    conv,
    convert5hd,
    flash,
    flash_ring,
    gather_middle,
    grid_sample,
    launches,
    mix,
    resize,
    scatter_shared,
    vector,
    window,
)
from .host import host_files
from .shared import GENERATOR, KernelView, render, view_fields


@dataclass(frozen=True)
class Kind:
    """How one kernel kind is emitted: its view builder, templates and manifest."""

    build_view: Callable[[ir.Kernel, PassContext], KernelView]
    kernel_template: str
    tiling_template: str
    manifest: Callable[[ir.Kernel, PassContext, KernelView], dict]
    #: More files of the kind's project (a multi-stage kernel's per-stage tiling headers), by file name.
    extra_files: Callable[[ir.Kernel, KernelView], dict[str, str]] | None = None


KINDS: dict[ir.KernelKind, Kind] = {
    ir.KernelKind.VECTOR: Kind(vector.build_view, "kernel.cpp.jinja", "tiling.h.jinja", vector.project_manifest),
    ir.KernelKind.WINDOW: Kind(window.build_view, "window_kernel.cpp.jinja", "window_tiling.h.jinja",
                               window.project_manifest),
    ir.KernelKind.RESIZE: Kind(resize.build_view, "resize_kernel.cpp.jinja", "resize_tiling.h.jinja",
                               resize.project_manifest),
    ir.KernelKind.GRID: Kind(grid_sample.build_view, "grid_sample_kernel.cpp.jinja", "grid_sample_tiling.h.jinja",
                             grid_sample.project_manifest),
    ir.KernelKind.GATHER_MIDDLE: Kind(gather_middle.build_view, "gather_middle_kernel.cpp.jinja",
                                      "gather_middle_tiling.h.jinja", gather_middle.project_manifest),
    ir.KernelKind.SCATTER_SHARED: Kind(scatter_shared.build_view, "scatter_shared_kernel.cpp.jinja",
                                       "scatter_shared_tiling.h.jinja", scatter_shared.project_manifest),
    ir.KernelKind.ANTIALIAS: Kind(antialias.build_view, "antialias_kernel.cpp.jinja", "antialias_tiling.h.jinja",
                                  antialias.project_manifest),
    ir.KernelKind.BOX: Kind(box.build_view, "box_kernel.cpp.jinja", "box_tiling.h.jinja", box.project_manifest),
    ir.KernelKind.MIX: Kind(mix.build_view, "mix_kernel.cpp.jinja", "mix_tiling.h.jinja", mix.project_manifest),
    ir.KernelKind.CHAIN: Kind(chain.build_view, "chain_kernel.cpp.jinja", "chain_tiling.h.jinja",
                              chain.project_manifest, chain.stage_tiling_files),
    ir.KernelKind.FLASH: Kind(flash.build_view, "flash_kernel.cpp.jinja", "flash_tiling.h.jinja",
                              flash.project_manifest),
    ir.KernelKind.CONV: Kind(conv.build_view, "conv_kernel.cpp.jinja", "conv_tiling.h.jinja", conv.project_manifest),
    ir.KernelKind.CONVERT5HD: Kind(convert5hd.build_view, "convert5hd_kernel.cpp.jinja", "convert5hd_tiling.h.jinja",
                                   convert5hd.project_manifest),
}


#: A FLASH kernel that plan_flash_ring gave the AIC-driven ring (its project carries the Matmul-API form as well).
FLASH_RING = Kind(flash_ring.build_view, "flash_ring_kernel.cpp.jinja", "flash_ring_tiling.h.jinja",
                  flash_ring.project_manifest)


def kind_of(kernel: ir.Kernel) -> Kind:
    """How `kernel` is emitted: its kind's entry of KINDS, or FLASH_RING for a FLASH kernel the ring took."""
    if kernel.kind is ir.KernelKind.FLASH and (ring := kernel.body[0].ring) is not None and ring.taken:
        return FLASH_RING
    return KINDS[kernel.kind]


@dataclass(frozen=True)
class EmittedProject:
    """The files of a kernel-direct project, its manifest, and the view they were rendered from."""

    name: str
    files: dict[str, str] = field(default_factory=dict)
    manifest: dict = field(default_factory=dict)
    view: KernelView | None = None
    #: LAUNCHES kernels: each launch's project, in launch order (their files are in `files` too, by directory).
    launches: tuple[EmittedProject, ...] = ()
    #: A fused kernel whose rows may not fit: the launches form the host runs then (lowering/emit/fallback.py).
    fallback: EmittedProject | None = None


def build_view(kernel: ir.Kernel, ctx: PassContext) -> KernelView:
    return kind_of(kernel).build_view(kernel, ctx)


def emit(kernel: ir.Kernel, ctx: PassContext) -> EmittedProject:
    """The project of a fully lowered kernel (after every pass of lowering/pipeline.py)."""
    if kernel.kind is ir.KernelKind.LAUNCHES:  # each launch emitted already (lowering/pipeline.py)
        files, manifest = launches.launch_files(kernel, ctx)
        return EmittedProject(kernel.name, files, manifest, None, tuple(sub.project for sub in ctx.launches))
    kind = kind_of(kernel)
    view = kind.build_view(kernel, ctx)
    manifest = kind.manifest(kernel, ctx, view)
    files = {
        f"{kernel.name}_kernel.cpp": render(kind.kernel_template, view),
        f"{kernel.name}_tiling.h": render(kind.tiling_template, view),
        **(kind.extra_files(kernel, view) if kind.extra_files else {}),
        **host_files(view, ctx.target),  # the host program, torch binding, emulator launch stub, CMake
        "manifest.json": json.dumps(manifest, indent=2) + "\n",
    }
    return EmittedProject(kernel.name, files, manifest, view)


__all__ = ["GENERATOR", "KINDS", "EmittedProject", "Kind", "KernelView", "build_view", "emit", "render", "view_fields"]
