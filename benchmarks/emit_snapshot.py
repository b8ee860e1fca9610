"""Hash every file the compiler emits, for refactors that must not change the output.

Lowers every gallery kernel (`examples/*/*.adsl`) and the extra kernels of `benchmarks/snapshot_kernels/`,
every dtype variant, on ascend910b1 and ascend310p, and hashes each emitted file (kernel, tiling header,
host main, CMakeLists, manifest) and the emulator driver. A kernel a target rejects (cube kernels on 310P)
records its rendered diagnostics instead, so error texts and locations are pinned too.

    python benchmarks/emit_snapshot.py --write snap.json    # record the current tree
    python benchmarks/emit_snapshot.py --check snap.json    # compare with a record; lists what differs
    python benchmarks/emit_snapshot.py --against main       # record git ref `main` (a temporary export) and compare
    python benchmarks/emit_snapshot.py --dump DIR           # write the files themselves, to diff two trees

Prints the number of kernels, variants and files; exits 1 when a check finds differences.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ("ascend910b1", "ascend310p")
EXTRA = "benchmarks/snapshot_kernels"


def _sources() -> list[Path]:
    """Kernel files, relative to the repo root (spans and `// file:LINE` comments name them so)."""
    files = sorted(Path("examples").glob("*/*.adsl")) + sorted(Path(EXTRA).glob("*.adsl"))
    return files + sorted(Path("tests/data").glob("*.adsl"))


def _driver(project, ctx) -> str:
    """The emulator driver with the kernel inlined, as `ascend-sim` builds it; a kernel of several launches (its
    project has no view of its own) gives each launch's driver in launch order."""
    from npu_harness import validate

    if getattr(project, "launches", ()):
        return "".join(_driver(sub, ctx) for sub in project.launches)
    if len(inspect.signature(validate.combined_driver).parameters) == 1:  # the project carries its view
        return validate.combined_driver(project)
    from lowering.emit import build_view  # before the emitted project carried its view

    return validate.combined_driver(project, build_view(ctx.lowered, ctx))


def emitted_files() -> dict[str, str]:
    """Key `<file>[dtypes]@target/<emitted file>` -> text, for every kernel, dtype variant and target."""
    from ascend_dsl import load_file
    from ascend_dsl.diagnostics import DslError
    from lowering import lower

    out: dict[str, str] = {}
    for path in _sources():
        for src in load_file(path):
            for dtypes in src.dtype_variants:
                tag = ",".join(f"{k}={v}" for k, v in dtypes.items())
                for target in TARGETS:
                    key = f"{path}:{src.name}[{tag}]@{target}"
                    try:
                        project, ctx = lower(src.instantiate(dtypes), target, path.name)
                    except DslError as e:
                        out[f"{key}/error"] = e.render()
                        continue
                    for fname, text in sorted(project.files.items()):
                        out[f"{key}/{fname}"] = text
                    out[f"{key}/sim_driver.cpp"] = _driver(project, ctx)
    return out


def snapshot() -> dict[str, str]:
    return {k: hashlib.sha256(v.encode()).hexdigest()[:20] for k, v in emitted_files().items()}


def _record_ref(ref: str) -> dict[str, str]:
    """The snapshot of git ref `ref`: its tree exported to a temporary directory, run with this interpreter."""
    with tempfile.TemporaryDirectory(prefix="emit-snapshot-") as tmp:
        archive = subprocess.run(["git", "archive", ref], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        shutil.copytree(ROOT / EXTRA, Path(tmp) / EXTRA, dirs_exist_ok=True)  # the same inputs on both sides
        out = Path(tmp) / "snap.json"
        env = {**os.environ, "PYTHONPATH": tmp}
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--root", tmp, "--write", str(out)],
                       check=True, env=env, timeout=1800)
        return json.loads(out.read_text())


def compare(old: dict[str, str], new: dict[str, str]) -> list[str]:
    lines = []
    for k in sorted(old.keys() | new.keys()):
        if k not in new:
            lines.append(f"missing now: {k}")
        elif k not in old:
            lines.append(f"new:         {k}")
        elif old[k] != new[k]:
            lines.append(f"differs:     {k}")
    return lines


def _summary(snap: dict[str, str]) -> str:
    variants = {k.rsplit("/", 1)[0] for k in snap}
    kernels = {v.split("[", 1)[0] for v in variants}
    errors = sum(k.endswith("/error") for k in snap)
    return f"{len(kernels)} kernels, {len(variants)} kernel x dtype x target variants, {len(snap)} hashes ({errors} errors)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(ROOT), help=argparse.SUPPRESS)
    ap.add_argument("--write", type=Path, help="record the snapshot of this tree")
    ap.add_argument("--check", type=Path, help="compare this tree with a recorded snapshot")
    ap.add_argument("--against", metavar="REF", help="compare this tree with git ref REF (e.g. main)")
    ap.add_argument("--dump", type=Path, help="write every emitted file under DIR")
    args = ap.parse_args(argv)
    os.chdir(args.root)
    if args.dump:
        for k, text in emitted_files().items():
            path = args.dump / k.replace(":", "/").replace("@", "/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return 0
    if args.against:
        old = _record_ref(args.against)
    elif args.check:
        old = json.loads(args.check.read_text())
    else:
        old = None
    new = snapshot()
    print(_summary(new))
    if args.write:
        args.write.write_text(json.dumps(new, indent=0, sort_keys=True) + "\n")
    if old is None:
        return 0
    diff = compare(old, new)
    print("\n".join(diff) if diff else f"identical to {args.against or args.check}")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
