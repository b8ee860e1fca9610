"""ctypes view of a built kernel library: the torch binding's C entry points (`<entry>_tiling_size`,
`<entry>_tiling`, `<entry>_launch`, emitted as `<k>_torch.cpp`) and the ACL runtime functions the
caller needs (resolved in the library and its dependencies: libascendcl on an NPU, the emulated runtime
compiled into the library otherwise)."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path

ACL_DEV_ATTR_VECTOR_CORE_NUM = 201  # aclrtDevAttr.md
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2  # aclrtMemcpyKind.md
ACL_MEM_MALLOC_HUGE_FIRST = 0  # aclrtMemMallocPolicy.md
_ERR_LEN = 512


class KernelRunError(RuntimeError):
    """The kernel could not be launched at these shapes, or it faulted (the emulator's report attached)."""


@dataclass(frozen=True)
class Launch:
    blocks: int
    workspace_bytes: int
    tiling: ctypes.Array  # the tiling struct's bytes


class KernelLibrary:
    def __init__(self, path: Path, entry: str):
        self.path, self.entry = Path(path), entry
        self.lib = ctypes.CDLL(str(path))
        c = ctypes
        self._tiling_size = getattr(self.lib, f"{entry}_tiling_size")
        self._tiling_size.restype, self._tiling_size.argtypes = c.c_uint32, []
        self._tiling = getattr(self.lib, f"{entry}_tiling")
        self._tiling.restype = c.c_uint32
        self._tiling.argtypes = [c.POINTER(c.c_uint64), c.POINTER(c.c_double), c.c_uint32, c.c_void_p,
                                 c.POINTER(c.c_uint64), c.c_char_p, c.c_uint32]
        self._launch = getattr(self.lib, f"{entry}_launch")
        self._launch.restype = c.c_int32
        self._launch.argtypes = [c.c_uint32, c.c_void_p, c.POINTER(c.c_void_p), c.c_void_p]
        self.acl = _acl_functions(self.lib)

    def vector_cores(self) -> int:
        value = ctypes.c_int64(0)
        err = self.acl.aclrtGetDeviceInfo(0, ACL_DEV_ATTR_VECTOR_CORE_NUM, ctypes.byref(value))
        if err != 0:
            raise KernelRunError(f"aclrtGetDeviceInfo(VECTOR_CORE_NUM) failed with {err}{self.recent_error()}")
        return int(value.value)

    def recent_error(self) -> str:
        msg = self.acl.aclGetRecentErrMsg()
        return f": {msg.decode(errors='replace')}" if msg else ""

    def tiling(self, symbols: list[int], scalars: list[float], core_num: int) -> Launch:
        """The host tiling for these runtime shapes; KernelRunError with the host code's reason if none."""
        tiling = ctypes.create_string_buffer(max(int(self._tiling_size()), 1))
        ws = ctypes.c_uint64(0)
        err = ctypes.create_string_buffer(_ERR_LEN)
        sym = (ctypes.c_uint64 * max(len(symbols), 1))(*symbols)
        sca = (ctypes.c_double * max(len(scalars), 1))(*scalars)
        blocks = self._tiling(sym, sca, core_num, ctypes.cast(tiling, ctypes.c_void_p), ctypes.byref(ws), err, _ERR_LEN)
        if blocks == 0:
            raise KernelRunError(f"error[TILING]: {err.value.decode(errors='replace')}")
        return Launch(int(blocks), int(ws.value), tiling)

    def launch(self, launch: Launch, stream: int | None, pointers: list[int]) -> int:
        gm = (ctypes.c_void_p * max(len(pointers), 1))(*pointers)
        return int(self._launch(launch.blocks, stream, gm, ctypes.cast(launch.tiling, ctypes.c_void_p)))


def _acl_functions(lib: ctypes.CDLL):
    """The ACL runtime functions with their C signatures (acl/acl_rt.h)."""
    c = ctypes

    class Acl:
        pass

    acl = Acl()
    sigs = {
        "aclInit": (c.c_int, [c.c_char_p]),
        "aclrtSetDevice": (c.c_int, [c.c_int32]),
        "aclrtGetDeviceInfo": (c.c_int, [c.c_uint32, c.c_int, c.POINTER(c.c_int64)]),
        "aclGetRecentErrMsg": (c.c_char_p, []),
        "aclrtMalloc": (c.c_int, [c.POINTER(c.c_void_p), c.c_size_t, c.c_int]),
        "aclrtFree": (c.c_int, [c.c_void_p]),
        "aclrtMemcpy": (c.c_int, [c.c_void_p, c.c_size_t, c.c_void_p, c.c_size_t, c.c_int]),
        "aclrtCreateStream": (c.c_int, [c.POINTER(c.c_void_p)]),
        "aclrtSynchronizeStream": (c.c_int, [c.c_void_p]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
        setattr(acl, name, fn)
    return acl
