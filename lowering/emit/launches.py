"""Kind LAUNCHES: the kernels of a kernel's launches (lowering/passes/partition_launches.py), one project each.

Each launch was lowered and emitted by the pipeline as a kernel of its own; its project's files go into a
directory named after its kernel (`<kernel>_l<i>/`), and the top-level manifest lists the launches in the
order the host runs them, the workspace tensors they share (GM buffers the host allocates before the first
launch, sized from the inputs' shapes; read only by launches after the one that writes them) and each
launch's kernel type. The emulator harness runs the launches in that order on one set of GM buffers
(npu_harness/validate_launches.py).
"""

from __future__ import annotations

import json

from ascend_dsl import ir

from ..context import PassContext
from .shared import GENERATOR, scalar_entries, tensor_entries


def launch_files(kernel: ir.Kernel, ctx: PassContext) -> tuple[dict[str, str], dict]:
    """The files of every launch's project under its own directory, and the top-level manifest."""
    files: dict[str, str] = {}
    launches = []
    for la, sub in zip(kernel.body, ctx.launches, strict=True):
        assert isinstance(la, ir.Launch)
        project = sub.project
        for fname, text in project.files.items():
            files[f"{project.name}/{fname}"] = text
        launches.append({"index": la.index, "kernel": project.name, "kind": sub.lowered.kind.value,
                         "kernel_type": project.manifest.get("kernel_type"), "reads": list(la.reads),
                         "writes": list(la.writes), "dir": f"{project.name}/"})
    shared = {n for la in kernel.body for n in (*la.reads, *la.writes)}
    manifest = {"generator": GENERATOR, "kernel": kernel.name, "source": ctx.source_name, "target": ctx.target.name,
                "kernel_type": "LAUNCHES", "launches": launches,
                "tensors": tensor_entries(kernel),
                "workspace_tensors": [{"name": p.name, "dtype": p.dtype.value, "shape": list(p.shape)}
                                      for p in kernel.workspaces if p.name in shared],
                # shape symbols views define (ascend_dsl/views.py): the host computes them for the launches
                "view_symbols": [{"name": d.name, "num": list(d.num), "den": list(d.den)}
                                 for p in kernel.views for d in p.view.defs],
                # shape symbols compiler-declared workspaces define (the NC1HWC0 route's C1 = ceil(C / 16))
                "workspace_symbols": [{"name": d.name, "num": list(d.num), "den": list(d.den), "ceil": d.ceil}
                                      for p in kernel.tensors for d in p.dims],
                "scalars": scalar_entries(kernel)}
    files["manifest.json"] = json.dumps(manifest, indent=2) + "\n"
    return files, manifest
