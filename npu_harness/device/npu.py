"""The torch op on NPU tensors: the emitted project built with CANN (npu_build), its torch binding's C
entry points called through ctypes, the kernel queued on torch_npu's current stream with the outputs
and the workspace allocated on the device by torch (so the caching allocator orders them by stream).

The stream comes from `torch_npu._C._npu_getCurrentRawStream(device)`, which returns
`c10_npu::getCurrentNPUStream(device).stream()` and so empties torch_npu's task queue first; the NoWait
variant does not, and launching beside queued work would reorder it (Ascend/pytorch
torch_npu/csrc/npu/Module.cpp). Older torch_npu: `torch_npu.npu.current_stream(device).npu_stream`
(torch_npu/npu/streams.py)."""

from __future__ import annotations

import os

from ascend_dsl import KernelCallError
from lowering import all_targets

from . import env
from .runtime import KernelLibrary, KernelRunError

TARGET_ENV = "ASCEND_DSL_TARGET"


class NpuKernel:
    def __init__(self, library, entry: str):
        self.lib = KernelLibrary(library, entry)
        self.cores = self.lib.vector_cores()


def device_target(device) -> str:
    """The lowering target of an NPU device: $ASCEND_DSL_TARGET, else its SoC name (Ascend910B2 -> ascend910b2)."""
    name = os.environ.get(TARGET_ENV)
    if not name:
        torch_npu = env.require_torch_npu()
        name = str(torch_npu.npu.get_device_name(device.index or 0)).strip().lower()
    if name not in all_targets():
        raise KernelCallError.at("CALL-TARGET", f"no lowering target for NPU '{name}'", None,
                                 f"set {TARGET_ENV} to one of: {', '.join(sorted(all_targets()))}")
    return name


def current_stream(torch_npu, device) -> int:
    index = device.index if device.index is not None else torch_npu.npu.current_device()
    raw = getattr(torch_npu._C, "_npu_getCurrentRawStream", None)
    return int(raw(index)) if raw is not None else int(torch_npu.npu.current_stream(index).npu_stream)


def run(kop, ins: list, outs: list, symbols: list[int], scalars: list[float]) -> None:
    """Queue the kernel of `kop` (torch_op.KernelOp) on the current NPU stream; `outs` are written."""
    import torch

    from .npu_build import build

    cann, torch_npu = env.require_npu()
    with kop.lock:
        if kop.npu is None:
            project, ctx = kop.project()
            kop.npu = NpuKernel(build(project, ctx, cann).torch_library, project.manifest["entry"])
    nk: NpuKernel = kop.npu
    launch = nk.lib.tiling(symbols, scalars, nk.cores)
    device = ins[0].device
    pointers = [t.data_ptr() for t in ins + outs]
    workspace = None
    if launch.workspace_bytes:
        workspace = torch.empty(launch.workspace_bytes, dtype=torch.uint8, device=device)
        pointers.append(workspace.data_ptr())
    err = nk.lib.launch(launch, current_stream(torch_npu, device), pointers)
    if err != 0:
        raise KernelRunError(f"{kop.kernel.name}: the kernel launch failed with ACL error {err}{nk.lib.recent_error()}")
