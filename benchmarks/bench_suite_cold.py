"""Where the CPU of a cold test suite goes: every g++ call, timed and grouped.

    python benchmarks/bench_suite_cold.py [--cache DIR] [--top 25] [-- PYTEST ARGS...]
    python benchmarks/bench_suite_cold.py --summarize LOG [--top 25]

Runs ``python -m pytest -q -n 2 tests`` (or the given pytest arguments) with an empty cache directory
(``ASCEND_DSL_CACHE``; default ``build/cold-cache`` in the repository, emptied first) and the C++ compiler
wrapped (``ASCEND_SIM_CXX``: a shell script that runs g++ and appends its wall time, its CPU time with
its children (cc1plus, as, ld), the current test (``PYTEST_CURRENT_TEST``) and the arguments to
``<cache>/gxx.log``). Prints the suite's wall and CPU time (user + sys of the whole process tree), the task
runs it cached (``tasks/`` entries: each is one task-worker run), and the compiles by kind (kernel program
against the prebuilt runtime, prebuilt runtime object, precompiled header, tiling probe, shared library,
header-only program, ...) and by test file, by CPU seconds. On a shared machine compare CPU seconds, not
wall time.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WRAPPER = r"""#!/bin/bash
t0=$(date +%s.%N)
"${BENCH_REAL_CXX:-g++}" "$@"
rc=$?
t1=$(date +%s.%N)
tf=$(mktemp)
{ times; } > "$tf"
ct=$(tail -1 "$tf"); rm -f "$tf"
printf '%s\t%s\t%s\t%s\t%s\n' "$(echo "$t1 - $t0" | bc)" "$ct" "$rc" "${PYTEST_CURRENT_TEST:-none}" "$*" >> "$BENCH_GXX_LOG"
exit $rc
"""


def _seconds(text: str) -> float:
    m = re.fullmatch(r"(\d+)m([\d.]+)s", text)
    return int(m[1]) * 60 + float(m[2]) if m else 0.0


def kind_of(args: str) -> str:
    padded = f" {args} "
    if "--version" in padded or "-print-file-name" in padded:
        return "compiler probe"
    if " c++-header " in padded:
        return "precompiled header"
    if " -c " in padded and "runtime.cpp" in padded:
        return "prebuilt runtime.o"
    if "-fsyntax-only" in padded:
        return "syntax check"
    if " -shared " in padded:
        return "shared library"
    if "_probe.cpp" in padded:
        return "tiling probe"
    if "ASCEND_SIM_PREBUILT_RUNTIME" in padded:
        return "program (prebuilt runtime)"
    return "program (header-only)"


def summarize(log: Path, top: int) -> None:
    rows = []
    for line in log.read_text(errors="replace").splitlines():
        parts = line.split("\t")
        if len(parts) < 5:
            continue
        wall = float(parts[0] or 0)
        user, _, sys_ = parts[1].partition(" ")
        test = parts[3]
        rows.append((wall, _seconds(user) + _seconds(sys_), kind_of(parts[4]), test.split("::")[0]))
    print(f"g++ calls: {len(rows)}, CPU {sum(r[1] for r in rows):.1f} s, wall {sum(r[0] for r in rows):.1f} s")
    for title, index in (("kind", 2), ("test file", 3)):
        groups: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0])
        for r in rows:
            g = groups[r[index]]
            g[0] += 1
            g[1] += r[1]
            g[2] += r[0]
        print(f"\nby {title} (CPU s, wall s, calls):")
        for name, (n, cpu, wall) in sorted(groups.items(), key=lambda kv: -kv[1][1])[:top]:
            print(f"  {cpu:8.1f} {wall:8.1f} {n:6d}  {name}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=ROOT / "build" / "cold-cache",
                    help="empty cache directory to use (emptied first)")
    ap.add_argument("--summarize", type=Path, help="only summarize an existing gxx.log")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("pytest_args", nargs="*", help="pytest arguments (default: -q -n 2 tests)")
    args = ap.parse_args(argv)
    if args.summarize:
        summarize(args.summarize, args.top)
        return 0
    if shutil.which("bc") is None:
        print("error: the wrapper needs `bc`", file=sys.stderr)
        return 2
    cache = args.cache.resolve()
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    wrapper = cache / "gxx-wrap.sh"
    wrapper.write_text(WRAPPER)
    wrapper.chmod(0o755)
    log = cache / "gxx.log"
    env = dict(os.environ, ASCEND_DSL_CACHE=str(cache), ASCEND_SIM_CXX=str(wrapper), BENCH_GXX_LOG=str(log),
               BENCH_REAL_CXX=os.environ.get("ASCEND_SIM_CXX", "g++"))
    cmd = [sys.executable, "-m", "pytest", *(args.pytest_args or ["-q", "-n", "2", "tests"])]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=ROOT, env=env, check=False)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    user, sys_ = r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime
    tasks = len(list((cache / "tasks").glob("*.npz"))) if (cache / "tasks").is_dir() else 0
    print(f"\npytest exit {res.returncode}: wall {wall:.0f} s, CPU {user + sys_:.0f} s (user {user:.0f}, sys {sys_:.0f}); "
          f"load average at end {os.getloadavg()[0]:.1f}")
    print(f"task runs cached: {tasks}")
    if log.is_file():
        summarize(log, args.top)
    return res.returncode


if __name__ == "__main__":
    sys.exit(main())
