"""Scratch directories for the emulator's input / output files.

The emulator maps its inputs and outputs from files (``sim::GmMapInput`` / ``GmMapOutput``); on a
memory file system (``/dev/shm``) that is page-cache memory with no disk work, so the files go there
when they fit comfortably (less than 1 GiB and a quarter of its free space), else to the default
temporary directory.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

SHM = Path("/dev/shm")
SHM_MAX_BYTES = 1 << 30


def scratch_dir(nbytes: int, prefix: str = "ascend-sim-io-") -> tempfile.TemporaryDirectory:
    """A TemporaryDirectory for ``nbytes`` of emulator I/O (on /dev/shm when it fits)."""
    try:
        st = os.statvfs(SHM)
        if nbytes < SHM_MAX_BYTES and os.access(SHM, os.W_OK) and 4 * nbytes < st.f_bavail * st.f_frsize:
            return tempfile.TemporaryDirectory(prefix=prefix, dir=SHM)
    except OSError:
        pass
    return tempfile.TemporaryDirectory(prefix=prefix)


def write_array(path: Path, data) -> None:
    """Write a numpy array's bytes (C order) without an intermediate copy when it is contiguous."""
    import numpy as np

    np.ascontiguousarray(data).tofile(path)
