"""Many emitted kernels in one emulator binary: one g++ run (the emulator header is parsed once) instead of one
per kernel.

Each project's tiling header, kernel and emulator driver go into a namespace of their own (`fz_<i>`; the
kernels are renamed apart before lowering, so their `extern "C"` entries differ), the driver's `main`
becomes `Main`, and one `main` dispatches on its first argument: `prog <i> IO_DIR CORE_NUM <symbols>
<scalars>` runs kernel i exactly as its own driver would. `#line` directives keep the emulator's reports
naming `<kernel>_kernel.cpp:LINE`. Kernels built for different emulator defines (target, vector or MIX)
go into different binaries.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lowering import EmittedProject
from lowering.emit import KernelView

from ..sim.compiler import compile_program
from ..sim.driver import driver_source

_INCLUDE = re.compile(r'^\s*#\s*(include|pragma once)\b.*$')
HEADERS = ("<cstdio>", "<cstdlib>", "<cstring>", "<string>", "<cstdint>", "<cmath>", '"kernel_operator.h"')
MIX_HEADERS = ('"lib/matmul_intf.h"', '"kernel_tiling/kernel_tiling.h"')


@dataclass(frozen=True)
class Unit:
    """One lowered kernel for a batch: its project and the view it was emitted from (project.view)."""

    project: EmittedProject
    view: KernelView


def _body(text: str, file: str) -> list[str]:
    """`text` without its #include / #pragma once lines, under a #line directive naming `file`."""
    out = [f'#line 1 "{file}"']
    for line in text.splitlines():
        out.append("" if _INCLUDE.match(line) else line)  # blank lines keep the line numbers
    return out


def batch_source(units: list[Unit]) -> str:
    mix = any(u.view.mix for u in units)
    lines = [f"#include {h}" for h in HEADERS + (MIX_HEADERS if mix else ())]
    for i, u in enumerate(units):
        name = u.project.name
        driver = driver_source(u.view).replace("int main(int argc, char** argv)", "int Main(int argc, char** argv)")
        lines += [f"namespace fz_{i} {{"]
        lines += _body(u.project.files[f"{name}_tiling.h"], f"{name}_tiling.h")
        lines += _body(u.project.files[f"{name}_kernel.cpp"], f"{name}_kernel.cpp")
        lines += _body(driver, f"{name}_sim_driver.cpp")
        lines += [f"}}  // namespace fz_{i}"]
    lines += ["int main(int argc, char** argv)", "{",
              "    const int which = argc > 1 ? std::atoi(argv[1]) : -1;",
              "    switch (which) {"]
    lines += [f"    case {i}: return fz_{i}::Main(argc - 1, argv + 1);" for i in range(len(units))]
    lines += ["    default: std::fprintf(stderr, \"usage: %s KERNEL_INDEX IO_DIR CORE_NUM ...\\n\", argv[0]); return 2;",
              "    }", "}"]
    return "\n".join(lines) + "\n"


#: The batches run small shapes for well under a second each, so compiling dominates: -O0 takes a third of the
#: CPU of -O2 (batches of 24 programs: compile + run 6.5 s of CPU at -O0, 11 s at -O1, 18 s at -O2; the runs
#: themselves 1-2 s at every level).
OPTIMIZE = "-O0"


def build(units: list[Unit], defines: dict, timeout: float = 900) -> Path:
    """Compile the units into one binary (cached by content, like every emulator build); CompileError on failure."""
    with tempfile.TemporaryDirectory(prefix="ascend-fuzz-") as tmp:
        src = Path(tmp) / "fuzz_batch.cpp"
        src.write_text(batch_source(units))
        return compile_program([src], defines=defines, timeout=timeout, optimize=OPTIMIZE)
