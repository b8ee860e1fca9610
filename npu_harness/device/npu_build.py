"""Build an emitted project for a real NPU with CANN: its own CMakeLists.txt in RUN_MODE=npu
(ascendc_library + libascendcl), giving the kernel library, the host program and the torch binding's
library. Builds are cached by content under $ASCEND_DSL_CACHE/npu (default ~/.cache/ascend-dsl/npu),
and run with a timeout and a memory limit."""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ascend_dsl.diagnostics import DslError
from lowering import EmittedProject, PassContext

from ..disk_cache import cache_base, note_write, touch
from ..subprocess_limits import run_limited

BUILD_TIMEOUT_S = 1200.0
BUILD_MEMORY_BYTES = 16 << 30


@dataclass(frozen=True)
class NpuBuild:
    torch_library: Path
    host_program: Path


def cache_dir() -> Path:
    return cache_base() / "npu"


def _key(project: EmittedProject, soc: str, cann: Path) -> str:
    h = hashlib.sha256()
    for name in sorted(project.files):
        h.update(name.encode() + b"\0" + project.files[name].encode() + b"\0")
    h.update(f"{soc}\0{cann.resolve()}".encode())
    return h.hexdigest()[:24]


def _errors(text: str) -> str:
    """The compiler's error lines (MKB treats lines with [ERROR] / error: as the feedback, benchmarks.md 1.5)."""
    lines = [ln for ln in text.splitlines() if "[ERROR]" in ln or "error:" in ln or "Error" in ln]
    return "\n".join((lines or text.strip().splitlines())[-60:])


def build(project: EmittedProject, ctx: PassContext, cann: Path) -> NpuBuild:
    from ..validate_launches import require_one_launch

    require_one_launch(project, ctx, "a device build")
    soc = ctx.target.soc_version
    root = cache_dir() / _key(project, soc, cann)
    name = project.name
    result = NpuBuild(root / "build" / f"lib{name}_torch.so", root / "build" / f"{name}_main")
    if result.torch_library.is_file() and result.host_program.is_file():
        touch(root)
        return result
    shutil.rmtree(root, ignore_errors=True)
    src = root / "src"
    for fname, text in project.files.items():
        path = src / fname
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "ASCEND_CUSTOM_OPP_PATH"}  # it perturbs builds (MKB)
    steps = [["cmake", "-S", str(src), "-B", str(root / "build"), f"-DSOC_VERSION={soc}", "-DRUN_MODE=npu",
              f"-DASCEND_CANN_PACKAGE_PATH={cann}", "-DCMAKE_BUILD_TYPE=Release"],
             ["cmake", "--build", str(root / "build"), "-j", str(max(os.cpu_count() or 1, 1))]]
    for cmd in steps:
        res = run_limited(cmd, timeout=BUILD_TIMEOUT_S, memory_bytes=BUILD_MEMORY_BYTES, env=env)
        if res.timed_out or res.returncode != 0:
            why = f"timed out after {BUILD_TIMEOUT_S:.0f} s" if res.timed_out else f"exit {res.returncode}"
            raise DslError.at("NPU-COMPILE", f"building {name} with CANN failed ({' '.join(cmd[:2])}: {why}):\n"
                              f"{_errors(res.stdout + res.stderr)}", None)
    if not result.torch_library.is_file():
        raise DslError.at("NPU-COMPILE", f"the CANN build of {name} produced no {result.torch_library.name}", None)
    note_write()
    return result
