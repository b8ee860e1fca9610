"""Baseline kernel times for fast_p: the cost-model estimate of each task's hand-written gallery kernel.

    python -m kernelgen.baseline TASK_DIR [-o baselines.json] [--target ascend910b1]

A task `<category>/<name>.py` with a sibling `<name>.adsl` (the gallery layout) gets that kernel's
estimated time on the task's own shapes, validated in the emulator first; tasks without one get
no baseline. `ascend-eval --baseline baselines.json` then reports fast_p as "the generated kernel
is correct and estimated at least p times as fast as the gallery kernel". Estimates, not timings.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ascend_dsl.diagnostics import DslError

from .tasks import discover


def gallery_baselines(root: str | Path, target: str = "ascend910b1") -> dict[str, float]:
    from npu_harness.gallery import Example, validate

    out: dict[str, float] = {}
    for task in discover(root):
        adsl = task.path.with_suffix(".adsl")
        if not adsl.exists():
            continue
        result = validate(Example(task.category, task.name, adsl, task.path), {}, {}, target)
        if result.ok and result.estimate_us:
            out[task.id] = round(result.estimate_us, 3)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kernelgen.baseline", description=__doc__.splitlines()[0])
    p.add_argument("tasks", type=Path)
    p.add_argument("-o", "--out", type=Path)
    p.add_argument("--target", default="ascend910b1")
    args = p.parse_args(argv)
    try:
        data = gallery_baselines(args.tasks, args.target)
    except DslError as e:
        print(e.render(), file=sys.stderr)
        return 2
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if args.out:
        args.out.write_text(text)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
