"""Run a kernel library built for the emulator (emulator_build.build_library) on CPU tensors, in this
process, the way a host program drives an NPU: aclrtMalloc device memory, copy the inputs in, queue the
kernel through the torch binding's launch entry on an ACL stream, synchronise, copy the outputs out.

The emulator writes its report to the C stderr; it is captured for the call (file descriptor 2) and
turned into a KernelRunError when the kernel faulted. A kernel that hangs is stopped by the emulator's
watchdog (ASCEND_SIM_TIME_LIMIT seconds, which ends the process); one that crashes takes the process down
with it, as an NPU exception takes down its context (docs/npu.md)."""

from __future__ import annotations

import ctypes
import os
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

from ..sim.compiler import parse_report, split_counters
from .runtime import (
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    KernelLibrary,
    KernelRunError,
)

_LOCK = threading.Lock()  # one emulated device per library, the stderr capture is process-wide


class EmulatedDevice:
    """A kernel library built for the emulator, with its ACL runtime initialised and one stream."""

    def __init__(self, library: Path, entry: str):
        self.kl = KernelLibrary(library, entry)
        acl = self.kl.acl
        self._check(acl.aclInit(None), "aclInit")
        self._check(acl.aclrtSetDevice(0), "aclrtSetDevice")
        stream = ctypes.c_void_p()
        self._check(acl.aclrtCreateStream(ctypes.byref(stream)), "aclrtCreateStream")
        self.stream = stream.value
        self.cores = self.kl.vector_cores()

    def _check(self, err: int, what: str) -> None:
        if err != 0:
            raise KernelRunError(f"{what} failed with ACL error {err}{self.kl.recent_error()}")

    def _malloc(self, nbytes: int) -> int:
        p = ctypes.c_void_p()
        self._check(self.kl.acl.aclrtMalloc(ctypes.byref(p), max(nbytes, 1), ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")
        return int(p.value)

    def run(self, inputs: list, outputs: list, symbols: list[int], scalars: list[float], label: str) -> str:
        """Run the kernel: `inputs` and `outputs` are contiguous CPU torch tensors (outputs are written).
        Returns the emulator's report (stderr); raises KernelRunError if it reported faults."""
        launch = self.kl.tiling(symbols, scalars, self.cores)
        n_in, n_out = len(inputs), len(outputs)
        return self.run_gm(launch, inputs + outputs, [True] * n_in + [False] * n_out,
                           [False] * n_in + [True] * n_out, label)

    def run_gm(self, launch, tensors: list, copy_in: list[bool], copy_out: list[bool], label: str) -> str:
        """Launch with `tensors` (contiguous CPU torch tensors, in the binding's GM order) in device memory: those
        `copy_in` marks are copied in (the others start as aclrtMalloc's unwritten bytes), those `copy_out` marks
        copied back after the run. Returns the emulator's report; KernelRunError if it reported faults."""
        acl = self.kl.acl
        with _LOCK:
            device: list[int] = []
            try:
                for t, fill in zip(tensors, copy_in, strict=True):
                    nbytes = t.numel() * t.element_size()
                    device.append(self._malloc(nbytes))
                    if nbytes and fill:
                        self._check(acl.aclrtMemcpy(device[-1], nbytes, t.data_ptr(), nbytes, ACL_MEMCPY_HOST_TO_DEVICE),
                                    "aclrtMemcpy")
                pointers = list(device)
                if launch.workspace_bytes:
                    device.append(self._malloc(launch.workspace_bytes))
                    pointers.append(device[-1])
                with _captured_stderr() as report:
                    launched = self.kl.launch(launch, self.stream, pointers)
                    synced = acl.aclrtSynchronizeStream(self.stream) if launched == 0 else 0
                text, _ = split_counters(report.text)
                errors, _, _ = parse_report(text)
                if launched != 0 or synced != 0 or errors:
                    lines = [ln for ln in text.splitlines() if ln.startswith(("error[", " --> ", "note:"))]
                    raise KernelRunError(f"{label}: the emulator reported faults (launch {launched}, synchronise "
                                         f"{synced}):\n" + "\n".join(lines or [text.strip()]))
                for t, p, back in zip(tensors, device, copy_out, strict=False):
                    nbytes = t.numel() * t.element_size()
                    if nbytes and back:
                        self._check(acl.aclrtMemcpy(t.data_ptr(), nbytes, p, nbytes, ACL_MEMCPY_DEVICE_TO_HOST),
                                    "aclrtMemcpy")
                return text
            finally:
                for p in device:
                    acl.aclrtFree(p)


class _Captured:
    text = ""


@contextmanager
def _captured_stderr():
    """File descriptor 2 redirected to a temporary file for the duration (C-level writes included)."""
    box = _Captured()
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 2)
        try:
            yield box
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            f.seek(0)
            box.text = f.read().decode(errors="replace")
