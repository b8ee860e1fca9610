"""Emulator builds of an emitted project's host side, through the emulator's compiler cache
(npu_harness/sim/compiler.py): one shared library holding the kernel with its launch stub
(`emulator/aclrtlaunch_<entry>.cpp`), the emulated ACL runtime (npu_harness/sim/acl/acl_runtime.cpp)
and the torch binding's C entry points (`<k>_torch.cpp`), as CANN's kernel library + libascendcl +
the binding are on an NPU; and the unchanged host program (`<k>_main.cpp`) linked against it."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ascend_dsl.diagnostics import DslError
from lowering import EmittedProject, PassContext
from lowering.emit.host import emulator_defines

from ..sim.compiler import CompileError, compile_program

ACL_RUNTIME = Path(__file__).resolve().parent.parent / "sim" / "acl" / "acl_runtime.cpp"
COMPILE_TIMEOUT_S = 300.0


def inline_include(text: str, include: str, content: str, label: str) -> str:
    """`text` with its `#include "<include>"` line replaced by `content` under #line directives (what the
    preprocessor would read), so the compiler cache, which hashes sources, sees the included file."""
    out = []
    for i, line in enumerate(text.splitlines(), start=1):
        if line.strip() == f'#include "{include}"':
            out += [f'#line 1 "{include}"', content.rstrip("\n"), f'#line {i + 1} "{label}"']
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def _is_mix(project: EmittedProject) -> bool:
    return project.manifest.get("kernel_type") == "MIX_AIC_1_2"


def write_sources(project: EmittedProject, src_dir: Path) -> Path:
    """The project's files under `src_dir`, plus the launch stub with the kernel inlined; returns the stub."""
    for fname, text in project.files.items():
        path = src_dir / fname
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    entry = project.manifest["entry"]
    stub_name = f"emulator/aclrtlaunch_{entry}.cpp"
    kernel = f"{project.name}_kernel.cpp"
    stub = src_dir / "emulator" / f"aclrtlaunch_{entry}_inlined.cpp"
    stub.write_text(inline_include(project.files[stub_name], kernel, project.files[kernel], stub_name))
    return stub


def _compile(sources: list[Path], project: EmittedProject, ctx: PassContext, src_dir: Path, **kw) -> Path:
    try:
        return compile_program(sources, defines=emulator_defines(ctx.target, _is_mix(project)),
                               extra_include_dirs=[src_dir, src_dir / "emulator"], timeout=COMPILE_TIMEOUT_S, **kw)
    except CompileError as e:
        raise DslError.at("SIM-COMPILE", f"the emitted host code does not compile against the emulator's ACL "
                          f"runtime:\n{e.stderr.strip()[-4000:]}", None) from None


def build_library(project: EmittedProject, ctx: PassContext) -> Path:
    """The emulator kernel library (kernel + launch stub + ACL runtime + torch entry points), cached."""
    with tempfile.TemporaryDirectory(prefix="ascend-acl-") as tmp:
        src = Path(tmp)
        stub = write_sources(project, src)
        return _compile([stub, src / f"{project.name}_torch.cpp", ACL_RUNTIME], project, ctx, src, shared=True)


def build_host_program(project: EmittedProject, ctx: PassContext, library: Path) -> Path:
    """The emitted host program, unchanged, linked against `library`, cached."""
    with tempfile.TemporaryDirectory(prefix="ascend-acl-") as tmp:
        src = Path(tmp)
        write_sources(project, src)
        return _compile([src / f"{project.name}_main.cpp"], project, ctx, src, link=[library])
