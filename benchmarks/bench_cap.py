"""`ascend-lower KERNEL --validate sim --cap N` for every gallery task: wall time per task, warm (the run is
made once to fill the task and emulator caches, then timed), the shapes --cap chose, and max / median.

    python benchmarks/bench_cap.py [--cap 1000000] [--only CATEGORY/NAME ...] [--cold]

Prints one line per task and a summary; exits 1 if any task fails or takes longer than --limit seconds.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(adsl: Path, cap: int, out: Path) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "npu_harness.cli", str(adsl), "-o", str(out), "--validate", "sim",
                          "--cap", str(cap)], capture_output=True, text=True, cwd=ROOT, check=False, timeout=1800)
    return time.perf_counter() - t0, res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--cap", type=int, default=1_000_000)
    p.add_argument("--limit", type=float, default=60.0, help="seconds a warm run may take")
    p.add_argument("--only", nargs="*", help="category/name of the tasks to run (default: every gallery kernel)")
    p.add_argument("--cold", action="store_true", help="time the first run (no warm-up)")
    args = p.parse_args(argv)
    kernels = sorted((ROOT / "examples").glob("*/*.adsl"))
    if args.only:
        kernels = [k for k in kernels if f"{k.parent.name}/{k.stem}" in args.only]
    times, bad = [], []
    with tempfile.TemporaryDirectory(prefix="bench-cap-") as tmp:
        for k in kernels:
            name = f"{k.parent.name}/{k.stem}"
            if not args.cold:
                run(k, args.cap, Path(tmp) / "warm")
            seconds, res = run(k, args.cap, Path(tmp) / "o")
            lines = res.stdout.strip().splitlines()
            scaled = next((ln.split(": ", 1)[1] for ln in lines if ln.startswith(f"--cap {args.cap}: ")), "")
            shapes = next((ln.removeprefix("task shapes: ") for ln in lines if ln.startswith("task shapes: ")), "")
            status = lines[-1] if lines else res.stderr.strip().splitlines()[-1]
            ok = res.returncode == 0 and seconds <= args.limit
            times.append(seconds)
            if not ok:
                bad.append(name)
            print(f"{name:42s} {seconds:6.1f} s  {'ok ' if ok else 'BAD'}  {status}")
            if scaled or shapes:
                print(f"{'':42s} {scaled}; {shapes}")
    print(f"\n{len(times)} tasks, --cap {args.cap}, {'cold' if args.cold else 'warm'}: max {max(times):.1f} s, "
          f"median {statistics.median(times):.1f} s, mean {statistics.mean(times):.1f} s; "
          f"{len(bad)} failed or over {args.limit:.0f} s{': ' + ', '.join(bad) if bad else ''}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
