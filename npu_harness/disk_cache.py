"""Where the on-disk caches live, and the bound on their size.

The compiled emulator binaries (`sim/`), the task runs (`tasks/`) and the NPU builds (`npu/`) are cached
under one base directory: `$ASCEND_DSL_CACHE`, else `~/.cache/ascend-dsl`. Every entry is content-addressed
and never goes stale, so without a bound the caches only grow (43 GB on one developer machine after a few
weeks). After a write, `note_write` prunes the least recently used entries once the caches together exceed
`$ASCEND_DSL_CACHE_MAX_GB` (default 10; `0` turns the bound off), down to 80% of it. Entries used in the
last `MIN_IDLE_S` seconds are never removed (another process may be about to run the binary it just looked
up), so the bound is soft while one run's working set is larger than it. A cache hit calls `touch` so that
"recently used" means used, not built. Pruning runs at most once a minute per base directory, under a
non-blocking file lock: parallel test workers do not walk the cache together."""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MAX_GB = 10.0
#: what pruning leaves, as a fraction of the bound (so the next writes do not prune again at once)
LOW_WATER = 0.8
#: entries used more recently than this are kept whatever the size
MIN_IDLE_S = 600.0
#: at most one prune per base directory in this many seconds
PRUNE_INTERVAL_S = 60.0
#: the cache areas that are bounded (the assisted-lowering decisions under `assist/` are small and not
#: reproducible without a model, so they are kept)
AREAS = ("sim", "tasks", "npu")
_STAMP = ".prune-stamp"


def cache_base() -> Path:
    """`$ASCEND_DSL_CACHE`, else `~/.cache/ascend-dsl`."""
    env = os.environ.get("ASCEND_DSL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "ascend-dsl"


def max_bytes() -> int | None:
    """The bound from `$ASCEND_DSL_CACHE_MAX_GB` (None: unbounded). A value that is not a number >= 0 is
    reported on stderr and the default is used: a typo must not turn the bound off."""
    raw = os.environ.get("ASCEND_DSL_CACHE_MAX_GB", "").strip()
    gb = DEFAULT_MAX_GB
    if raw:
        try:
            gb = float(raw)
            if not gb >= 0:
                raise ValueError(raw)
        except ValueError:
            print(f"warning: ASCEND_DSL_CACHE_MAX_GB={raw!r} is not a number of GB >= 0; using {DEFAULT_MAX_GB:g}",
                  file=sys.stderr)
            gb = DEFAULT_MAX_GB
    return None if gb == 0 else int(gb * 2**30)


def touch(path: Path) -> None:
    """Mark a cache entry used now (a hit)."""
    try:
        os.utime(path)
    except OSError:
        pass


@dataclass(frozen=True)
class Entry:
    path: Path
    size: int
    last_use: float


@dataclass(frozen=True)
class PruneReport:
    before: int
    after: int
    removed: int


def _disk_size(path: Path) -> int:
    """Bytes on disk under `path` (file or directory), without following links."""
    try:
        st = path.lstat()
    except OSError:
        return 0
    if not path.is_dir() or path.is_symlink():
        return st.st_blocks * 512
    total = st.st_blocks * 512
    for root, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return total


def entries(base: Path) -> list[Entry]:
    """Every removable entry under the bounded areas: each child of an area (a binary's key directory, a
    task's `.npz`), and each prebuilt runtime under `sim/runtime/`. Temporary files being written are
    entries too; the idle rule keeps them while they are fresh."""
    found: list[Entry] = []
    for area in AREAS:
        top = base / area
        if not top.is_dir():
            continue
        for child in top.iterdir():
            if area == "sim" and child.name == "runtime" and child.is_dir():
                candidates = list(child.iterdir())
            else:
                candidates = [child]
            for c in candidates:
                try:
                    last = c.lstat().st_mtime
                except OSError:
                    continue
                found.append(Entry(c, _disk_size(c), last))
    return found


def prune(base: Path, limit: int, *, now: float | None = None, min_idle: float = MIN_IDLE_S) -> PruneReport:
    """Remove the least recently used entries until the areas take at most LOW_WATER x `limit` bytes, never
    an entry used within `min_idle` seconds. Nothing happens below `limit`."""
    now = time.time() if now is None else now
    found = sorted(entries(base), key=lambda e: e.last_use)
    total = sum(e.size for e in found)
    before, removed = total, 0
    if total <= limit:
        return PruneReport(before, total, 0)
    target = int(limit * LOW_WATER)
    for e in found:
        if total <= target:
            break
        if now - e.last_use < min_idle:
            break  # sorted by last use: every later entry is fresher still
        if e.path.is_dir() and not e.path.is_symlink():
            shutil.rmtree(e.path, ignore_errors=True)
        else:
            e.path.unlink(missing_ok=True)
        total -= e.size
        removed += 1
    return PruneReport(before, total, removed)


def note_write(base: Path | None = None) -> PruneReport | None:
    """Call after adding an entry to a cache under `base` (default `cache_base()`): prunes when the bound
    is set and the last prune is over PRUNE_INTERVAL_S old, unless another process is pruning now."""
    limit = max_bytes()
    if limit is None:
        return None
    base = cache_base() if base is None else base
    stamp = base / _STAMP
    try:
        if time.time() - stamp.stat().st_mtime < PRUNE_INTERVAL_S:
            return None
    except OSError:
        pass
    try:
        base.mkdir(parents=True, exist_ok=True)
        with open(stamp, "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return None  # another process is pruning
            os.utime(stamp)
            return prune(base, limit)
    except OSError:
        return None
