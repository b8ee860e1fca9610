"""Kind CHAIN: several cube stages joined by GM workspace tensors, emitted as one MIX kernel (chain_*.jinja).

Each stage (an `ir.ChainStage`, planned by lowering/passes/plan_stages.py and lowered by the pipeline as
a MIX kernel of its own) is rendered by the MIX templates as a stage class (`MixView.stage`: no includes,
no entry; it borrows the entry's TPipe and Matmul object) and keeps its own tiling header and host tiling
function. The entry registers every stage's Matmul object in one REGIST_MATMUL_OBJ (on hardware the AIC
runs the Matmul server loop inside it and never returns, so all objects must be known there; at most 4),
points each workspace tensor at its region of the user workspace (after the Matmul API's system
workspace), runs the stages in order with `pipe.Reset()` between them and `SyncAll()` where plan_stages
placed one (a stage reads what an earlier stage's cores wrote), and ends every Matmul object. The host
tiling calls every stage's tiling function, lays the workspace tensors out (512-byte aligned) and
launches the most blocks any stage needs; a stage with fewer tasks leaves the extra cores idle until the
next SyncAll.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ascend_dsl import ir

from ..context import PassContext
from . import mix
from .shared import KernelView, kernel_fields, loc, manifest, render, tensor_views

#: Bytes reserved for the Matmul API's system workspace in front of the user workspace (the MIX kind's
#: allocation; GetLibApiWorkSpaceSize() on CANN).
SYS_WORKSPACE = "16 * 1024 * 1024"
#: Alignment of every workspace tensor's region.
WORKSPACE_ALIGN = 512


@dataclass(frozen=True)
class WorkspaceView:
    name: str
    esize: int  # bytes per element
    numel_host: str  # elements, over the host's shape variables
    offset: str  # tiling field holding the region's byte offset from the workspace start
    decl_loc: str


@dataclass(frozen=True)
class StageView:
    index: int
    view: mix.MixView  # rendered with stage=True
    member: str  # the tiling member holding this stage's tiling data
    args: tuple[str, ...]  # GM addresses passed to the stage's Init, in its tensor order
    symbols: tuple[str, ...]
    sync: str
    reads: tuple[str, ...]
    loc: str
    text: str  # the stage class


@dataclass(frozen=True, kw_only=True)
class ChainView(KernelView):
    stages: tuple[StageView, ...]
    workspaces: tuple[WorkspaceView, ...]
    any_epilogue: bool
    sys_workspace: str
    align: int
    workspace_bytes: str


def build_view(kernel: ir.Kernel, ctx: PassContext) -> ChainView:
    fields = kernel_fields(kernel, ctx)
    ws_names = {p.name for p in kernel.workspaces}
    fields["tensors"] = tuple(t for t in tensor_views(kernel) if t.name not in ws_names)
    fields["launch_scalars"] = ()
    workspaces = tuple(WorkspaceView(p.name, p.dtype.size, " * ".join(str(d) for d in p.shape), f"{p.name}Offset",
                                     loc(ctx, p.span)) for p in kernel.workspaces)
    stages = []
    for st in kernel.body:
        assert isinstance(st, ir.ChainStage)
        view = replace(mix.build_view(st.kernel, ctx), stage=True)
        stages.append(StageView(st.index, view, f"s{st.index}", tuple(t.name for t in view.tensors), view.symbols,
                                st.sync, st.reads, loc(ctx, st.span), render("mix_kernel.cpp.jinja", view)))
    fields["launch_checks"] = tuple(dict.fromkeys(c for s in stages for c in s.view.launch_checks))
    return ChainView(**fields, buffers=(), mix=True, stages=tuple(stages), workspaces=workspaces,
                     any_epilogue=any(not s.view.direct for s in stages), sys_workspace=SYS_WORKSPACE,
                     align=WORKSPACE_ALIGN, workspace_bytes="tiling.workspaceBytes",
                     gm_workspace="tiling.workspaceBytes",
                     tiling_error="the host tiling found no cube base block that fits for one of the stages "
                                  "(see each stage's tiling in the project)"
                                  + (f"; not fused into flash attention: {ctx.flash_miss}" if ctx.flash_miss else ""))


def stage_tiling_files(kernel: ir.Kernel, view: ChainView) -> dict[str, str]:
    """Each stage's own tiling header (its struct and host tiling function), included by the chain's."""
    return {f"{s.view.name}_tiling.h": render("mix_tiling.h.jinja", s.view) for s in view.stages}


def project_manifest(kernel: ir.Kernel, ctx: PassContext, view: ChainView) -> dict:
    return manifest(kernel, ctx, view, "MIX_AIC_1_2", None, "stages", (), workspace_tensors=workspace_list(kernel),
                    stages=[{"index": s.index, "kernel": s.view.name, "sync_before": s.sync or None, "reads": list(s.reads),
                             "epilogue": "none (IterateAll)" if s.view.direct else "vector (Iterate + GetTensorC)"}
                            for s in view.stages])


def workspace_list(kernel: ir.Kernel) -> list[dict]:
    """The manifest's entry for the kernel's own GM tensors (placed in the launch workspace by the host tiling)."""
    return [{"name": p.name, "dtype": p.dtype.value, "shape": list(p.shape)} for p in kernel.workspaces]
