"""The on-disk caches' size bound (npu_harness/disk_cache.py): least recently used first, fresh entries kept,
pruning rate-limited, and the emulator's binary cache marks hits as uses."""

import os
import time
from pathlib import Path

import pytest

from npu_harness import disk_cache
from npu_harness.disk_cache import MIN_IDLE_S, PRUNE_INTERVAL_S, max_bytes, note_write, prune

KB = 1024


def _entry(path: Path, size: int, age_s: float, now: float) -> Path:
    """A cache entry of `size` bytes last used `age_s` seconds before `now` (a directory with one file under
    sim/, a file under tasks/)."""
    if path.parent.name == "tasks":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(size))
        target = path
    else:
        path.mkdir(parents=True)
        (path / "prog").write_bytes(os.urandom(size))
        target = path
    os.utime(target, (now - age_s, now - age_s))
    return path


def test_prune_removes_least_recently_used_first_down_to_the_low_water_mark(tmp_path):
    now = time.time()
    old = [_entry(tmp_path / "sim" / f"old{i}", 64 * KB, 10_000 + i * 100, now) for i in range(4)]
    task = _entry(tmp_path / "tasks" / "t.npz", 64 * KB, 5_000, now)
    recent = _entry(tmp_path / "sim" / "recent", 64 * KB, 2_000, now)
    # six entries of 64-68 KB (a directory takes a block): a bound of 300 KB prunes to <= 240 KB, so the three
    # least recently used go, whichever area they are in
    report = prune(tmp_path, 300 * KB, now=now)
    assert report.removed == 3
    assert [p.exists() for p in old] == [True, False, False, False]
    assert task.exists() and recent.exists()
    assert report.after <= 240 * KB < report.before


def test_prune_does_nothing_under_the_bound(tmp_path):
    now = time.time()
    entries = [_entry(tmp_path / "sim" / f"e{i}", 16 * KB, 10_000, now) for i in range(3)]
    assert prune(tmp_path, 1 << 20, now=now).removed == 0
    assert all(p.exists() for p in entries)


def test_entries_used_recently_are_kept_even_over_the_bound(tmp_path):
    now = time.time()
    stale = _entry(tmp_path / "sim" / "stale", 64 * KB, MIN_IDLE_S + 60, now)
    fresh = [_entry(tmp_path / "sim" / f"fresh{i}", 64 * KB, MIN_IDLE_S / 2, now) for i in range(3)]
    report = prune(tmp_path, 64 * KB, now=now)
    assert not stale.exists()
    assert all(p.exists() for p in fresh)
    assert report.removed == 1 and report.after > 64 * KB  # the bound is soft while the working set is larger


def test_prebuilt_runtimes_are_entries_of_their_own(tmp_path):
    now = time.time()
    old_rt = _entry(tmp_path / "sim" / "runtime" / "oldkey", 64 * KB, 20_000, now)
    new_rt = _entry(tmp_path / "sim" / "runtime" / "newkey", 64 * KB, 1_000, now)
    os.utime(tmp_path / "sim" / "runtime", (now, now))
    prune(tmp_path, 100 * KB, now=now)
    assert not old_rt.exists() and new_rt.exists() and (tmp_path / "sim" / "runtime").is_dir()


def test_assisted_decisions_are_not_pruned(tmp_path):
    now = time.time()
    decision = tmp_path / "assist" / "record.json"
    decision.parent.mkdir(parents=True)
    decision.write_bytes(os.urandom(64 * KB))
    os.utime(decision, (now - 50_000, now - 50_000))
    _entry(tmp_path / "sim" / "e", 64 * KB, 10_000, now)
    prune(tmp_path, 1 * KB, now=now)
    assert decision.exists()


def test_note_write_prunes_at_most_once_per_interval(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_DSL_CACHE_MAX_GB", str(100 * KB / 2**30))
    now = time.time()
    _entry(tmp_path / "sim" / "a", 64 * KB, 10_000, now)
    _entry(tmp_path / "sim" / "b", 64 * KB, 9_000, now)
    first = note_write(tmp_path)
    assert first is not None and first.removed == 1
    _entry(tmp_path / "sim" / "c", 64 * KB, 8_000, now)
    assert note_write(tmp_path) is None  # within PRUNE_INTERVAL_S of the last prune
    stamp = tmp_path / ".prune-stamp"
    os.utime(stamp, (now - PRUNE_INTERVAL_S - 1, now - PRUNE_INTERVAL_S - 1))
    again = note_write(tmp_path)
    assert again is not None and again.removed == 1


@pytest.mark.parametrize("raw, expected", [("", int(10 * 2**30)), ("2", 2 * 2**30), ("0.5", 2**29), ("0", None)])
def test_the_bound_comes_from_the_environment(monkeypatch, raw, expected):
    monkeypatch.setenv("ASCEND_DSL_CACHE_MAX_GB", raw)
    assert max_bytes() == expected


@pytest.mark.parametrize("raw", ["ten", "-1", "nan"])
def test_a_malformed_bound_is_reported_and_the_default_kept(monkeypatch, capsys, raw):
    monkeypatch.setenv("ASCEND_DSL_CACHE_MAX_GB", raw)
    assert max_bytes() == int(disk_cache.DEFAULT_MAX_GB * 2**30)
    assert "ASCEND_DSL_CACHE_MAX_GB" in capsys.readouterr().err


def test_a_binary_cache_hit_marks_the_entry_used(tmp_path, monkeypatch):
    from npu_harness.sim.compiler import compile_program

    monkeypatch.setenv("ASCEND_DSL_CACHE", str(tmp_path))
    src = tmp_path / "main.cpp"
    src.write_text("int main() { return 0; }\n")
    binary = compile_program([src], defines={}, prebuilt=False, optimize="-O0")
    entry = binary.parent
    assert entry.parent == tmp_path / "sim"
    os.utime(entry, (1_000_000, 1_000_000))
    assert compile_program([src], defines={}, prebuilt=False, optimize="-O0") == binary
    assert entry.stat().st_mtime > time.time() - 60
