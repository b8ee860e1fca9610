"""Scratch directories for the emulator's input / output files.

The emulator maps its inputs from files and writes its outputs into files (``sim::GmMapInput`` /
``GmMapOutput``); the files live only for one run (written, run, read back, removed), so they stay in
the page cache and are never written back to a disk. Where they go (first that has room, four times
``nbytes`` free):

1. ``$ASCEND_SIM_IO_DIR`` when set (a directory; error IO-DIR when it is not one);
2. the default temporary directory (``tempfile.gettempdir()``, ``$TMPDIR``);
3. ``/dev/shm`` for less than 1 GiB.

The temporary directory comes before ``/dev/shm`` because a page-cache file system with large folios
(ext4 since Linux 6.16, xfs) allocates a 16 MB file in a few large pages, tmpfs (``huge=never``, the
default) in 4096 pages of 4 KiB: a relu validation at 64 x 65536 f32 takes 29.5 instead of 43.9 ms of
CPU on ext4 (session 31, docs/emulator.md "Speed").
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

SHM = Path("/dev/shm")
SHM_MAX_BYTES = 1 << 30
IO_DIR_ENV = "ASCEND_SIM_IO_DIR"


def _has_room(d: Path, nbytes: int) -> bool:
    try:
        st = os.statvfs(d)
    except OSError:
        return False
    return os.access(d, os.W_OK) and 4 * nbytes < st.f_bavail * st.f_frsize


def io_base(nbytes: int) -> Path | None:
    """The directory that holds a scratch directory for ``nbytes`` of emulator I/O (None: the default
    temporary directory, which then has too little room: the run reports it)."""
    env = os.environ.get(IO_DIR_ENV)
    if env:
        d = Path(env)
        if not d.is_dir():
            from ascend_dsl.diagnostics import DslError

            raise DslError.at("IO-DIR", f"${IO_DIR_ENV} = {env} is not a directory", None,
                              f"unset {IO_DIR_ENV} or name an existing directory")
        return d
    tmp = Path(tempfile.gettempdir())
    if _has_room(tmp, nbytes):
        return tmp
    if nbytes < SHM_MAX_BYTES and _has_room(SHM, nbytes):
        return SHM
    return None


def scratch_dir(nbytes: int, prefix: str = "ascend-sim-io-") -> tempfile.TemporaryDirectory:
    """A TemporaryDirectory for ``nbytes`` of emulator I/O (see the module docstring for where)."""
    return tempfile.TemporaryDirectory(prefix=prefix, dir=io_base(nbytes))


def write_array(path: Path, data) -> None:
    """Write a numpy array's bytes (C order) without an intermediate copy when it is contiguous."""
    import numpy as np

    np.ascontiguousarray(data).tofile(path)
