"""The torch op of a kernel of several launches (kind LAUNCHES, lowering/emit/launches.py; or the launches form
of a row-fallback kernel, npu_harness/row_fallback.py): each launch's project is built as a kernel library of its
own (the emulator's on CPU tensors, CANN's on NPU tensors) and its torch binding's C entry points are called in
the manifest's launch order on one stream.

One call: every launch's host tiling runs first with the shape symbols and scalars that launch's manifest lists
(a launch that cannot run at the shapes is `TILING` naming it, before anything is queued); the GM workspace
tensors the launches share (manifest `workspace_tensors`, shaped from the call's symbols and the
compiler-declared workspace symbols) are allocated by torch on the call's device; then the launches are queued
in order, each with its tensors in its own manifest order (its torch binding's `gm` order) and its own system
workspace. A launch's fault names that launch.

The NPU backend passes device pointers (one GM for all launches: libascendcl is shared). The emulated backend
runs each launch in its own library, whose emulated ACL runtime owns its device memory, so a tensor's bytes go
from host to that launch's device memory and back: a kernel input, or a tensor an earlier launch wrote, is
copied in (the rest start as aclrtMalloc's 0xFF bytes: a launch reading what no launch wrote reads NaN), and
what the launch writes is copied out; the result is the one shared GM would give. Everything else (the order,
the tilings, the workspace sizes, the names in errors) is this module's code for both backends.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir, views
from lowering import EmittedProject, PassContext

from .runtime import KernelRunError


@dataclass(frozen=True)
class Step:
    """One launch: its kernel's name, project, entry point and the names its torch binding takes."""

    index: int
    name: str
    project: EmittedProject
    symbols: tuple[str, ...]  # its host tiling's shape symbols, in order
    scalars: tuple[str, ...]  # its scalars, in order
    tensors: tuple[str, ...]  # its GM tensors in its binding's order
    writes: frozenset[str]  # the tensors it stores (its outputs)

    @property
    def entry(self) -> str:
        return self.project.manifest["entry"]


@dataclass(frozen=True)
class Plan:
    """The launches of a LAUNCHES kernel, in the order the host runs them, and the workspace tensors they share."""

    lowered: ir.Kernel
    steps: tuple[Step, ...]
    workspaces: tuple[ir.TensorParam, ...]


def plan(lowered: ir.Kernel, project: EmittedProject) -> Plan:
    """The plan of a lowered LAUNCHES kernel and its project (project.launches parallel to lowered.body)."""
    assert lowered.kind is ir.KernelKind.LAUNCHES and project.launches
    steps = []
    for la, sub in zip(lowered.body, project.launches, strict=True):
        m = sub.manifest
        steps.append(Step(la.index, sub.name, sub, tuple(m["symbols"]), tuple(s["name"] for s in m["scalars"]),
                          tuple(t["name"] for t in m["tensors"]),
                          frozenset(t["name"] for t in m["tensors"] if t["role"] == "output")))
    shared = {n for la in lowered.body for n in (*la.reads, *la.writes)}
    return Plan(lowered, tuple(steps), tuple(p for p in lowered.workspaces if p.name in shared))


def run(pl: Plan, backend, tensors: dict, symbols: dict, scalars: dict, label: str) -> None:
    """Run every launch of `pl` in order: `tensors` holds the kernel's inputs and outputs by name (outputs are
    written), `symbols` / `scalars` the call's values. `backend`: EmulatedLaunches or NpuLaunches."""
    symbols = {**symbols, **views.bind_symbols(pl.lowered, symbols, scalars)}  # views, compiler workspaces
    n = len(pl.steps)
    names = [f"launch {i + 1} of {n} ({s.name})" for i, s in enumerate(pl.steps)]
    launches = []
    for step, where in zip(pl.steps, names, strict=True):  # every tiling first: nothing is queued if one fails
        try:
            launches.append(backend.tiling(step, [int(symbols[s]) for s in step.symbols],
                                           [float(scalars[s]) for s in step.scalars]))
        except KernelRunError as e:
            raise KernelRunError(f"{label}, {where}: {e}") from None
    gm = dict(tensors)
    ready = {p.name for p in pl.lowered.inputs}  # tensors holding data: the inputs, then what launches wrote
    for p in pl.workspaces:  # allocated by torch on the call's device, as the single launch's workspace is
        gm[p.name] = backend.empty([int(symbols[d]) if isinstance(d, str) else d for d in p.shape], p.dtype.torch)
    for step, launch, where in zip(pl.steps, launches, names, strict=True):
        backend.launch(step, launch, [gm[t] for t in step.tensors], [t in ready for t in step.tensors],
                       f"{label}, {where}")
        ready |= step.writes


class EmulatedLaunches:
    """The launches on CPU tensors: each launch's emulator library (emulator_build) driven in this process."""

    def __init__(self, pl: Plan, ctx: PassContext):
        from .emulated import EmulatedDevice
        from .emulator_build import build_library

        self.devices = {s.name: EmulatedDevice(build_library(s.project, ctx), s.entry) for s in pl.steps}

    def tiling(self, step: Step, symbols: list[int], scalars: list[float]):
        dev = self.devices[step.name]
        return dev.kl.tiling(symbols, scalars, dev.cores)

    def empty(self, shape: list[int], dtype):
        import torch

        return torch.empty(shape, dtype=dtype)

    def launch(self, step: Step, launch, tensors: list, ready: list[bool], where: str) -> None:
        """`ready`: which of `tensors` hold data (copied in; the others start as unwritten device memory)."""
        copy_out = [name in step.writes for name in step.tensors]
        self.devices[step.name].run_gm(launch, tensors, ready, copy_out, where)


def npu_kernels(pl: Plan, ctx: PassContext, cann) -> dict:
    """Each launch's CANN build (npu_build) loaded: {launch name: device.npu.NpuKernel}."""
    from .npu import NpuKernel
    from .npu_build import build

    return {s.name: NpuKernel(build(s.project, ctx, cann).torch_library, s.entry) for s in pl.steps}


class NpuLaunches:
    """The launches of one call on NPU tensors, queued on `stream` (torch_npu's current stream)."""

    def __init__(self, kernels: dict, device, stream: int):
        self.kernels, self.device, self.stream = kernels, device, stream

    def tiling(self, step: Step, symbols: list[int], scalars: list[float]):
        nk = self.kernels[step.name]
        return nk.lib.tiling(symbols, scalars, nk.cores)

    def empty(self, shape: list[int], dtype):
        import torch

        return torch.empty(shape, dtype=dtype, device=self.device)

    def launch(self, step: Step, launch, tensors: list, ready: list[bool], where: str) -> None:
        """One GM for every launch: the tensors' device pointers (`ready` does not matter here)."""
        import torch

        pointers = [t.data_ptr() for t in tensors]
        workspace = None  # the launch's system workspace; the stream-ordered allocator reuses it only after it
        if launch.workspace_bytes:
            workspace = torch.empty(launch.workspace_bytes, dtype=torch.uint8, device=self.device)
            pointers.append(workspace.data_ptr())
        lib = self.kernels[step.name].lib
        err = lib.launch(launch, self.stream, pointers)
        if err != 0:
            raise KernelRunError(f"{where}: the kernel launch failed with ACL error {err}{lib.recent_error()}")
