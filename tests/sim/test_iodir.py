"""Where the emulator's scratch I/O files go (npu_harness/sim/iodir.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from ascend_dsl.diagnostics import DslError
from npu_harness.sim import iodir


def test_env_directory_is_used(tmp_path, monkeypatch):
    monkeypatch.setenv(iodir.IO_DIR_ENV, str(tmp_path))
    with iodir.scratch_dir(1 << 20) as d:
        assert Path(d).parent == tmp_path


def test_env_not_a_directory_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv(iodir.IO_DIR_ENV, str(tmp_path / "missing"))
    with pytest.raises(DslError) as e:
        iodir.scratch_dir(1 << 20)
    assert e.value.codes == ["IO-DIR"] and "missing" in str(e.value)


def test_temp_dir_first_then_shm_then_none(tmp_path, monkeypatch):
    monkeypatch.delenv(iodir.IO_DIR_ENV, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert iodir.io_base(1 << 20) == tmp_path  # room in the temporary directory
    room = {tmp_path: False, iodir.SHM: True}
    monkeypatch.setattr(iodir, "_has_room", lambda d, n: room[Path(d)])
    assert iodir.io_base(1 << 20) == iodir.SHM  # no room there: /dev/shm for small files
    assert iodir.io_base(iodir.SHM_MAX_BYTES) is None  # too large for /dev/shm: the default (reports its own error)


def test_has_room_needs_four_times_the_bytes(tmp_path):
    import os

    st = os.statvfs(tmp_path)
    free = st.f_bavail * st.f_frsize
    assert iodir._has_room(tmp_path, free // 8)
    assert not iodir._has_room(tmp_path, free // 4 + 1)
    assert not iodir._has_room(tmp_path / "missing", 1)
