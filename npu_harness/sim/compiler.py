"""Build and run programs against the AscendC CPU emulation header.

``compile_program`` compiles kernel + driver sources with g++ (C++20, -O2) against
``INCLUDE_DIR`` (our ``kernel_operator.h``), caching binaries by content hash.
``run_program`` runs a binary with a timeout and an address-space limit and parses the
emulator's fault report (``error[CODE]: message`` / `` --> FILE:LINE (block B)``) from stderr.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..disk_cache import cache_base, note_write, touch

__all__ = [
    "INCLUDE_DIR",
    "CompileError",
    "RunResult",
    "SimError",
    "Runtime",
    "cache_root",
    "compile_program",
    "prebuilt_runtime",
    "parse_report",
    "run_program",
    "split_counters",
]

INCLUDE_DIR: Path = Path(__file__).resolve().parent / "include"
#: The emulator's non-template runtime; compiled once per flag set and linked into every program
#: (see docs/emulator.md "Building").
RUNTIME_SOURCE: Path = Path(__file__).resolve().parent / "runtime.cpp"

#: Flags every build uses (the cache key includes them).
BASE_FLAGS: tuple[str, ...] = ("-std=c++20", "-O2", "-fvect-cost-model=dynamic", "-fno-strict-aliasing", "-pthread")

_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".inc")
_CACHE_FORMAT = "ascend-dsl-sim-v3"
_PREBUILT_DEFINE = "-DASCEND_SIM_PREBUILT_RUNTIME=1"


class CompileError(Exception):
    """The compiler failed (or timed out). ``message`` holds its error lines, ``stderr`` all output."""

    def __init__(self, message: str, stderr: str) -> None:
        super().__init__(message)
        self.message = message
        self.stderr = stderr


@dataclass(frozen=True)
class SimError:
    """One entry of the emulator's fault report."""

    code: str
    message: str
    file: str
    line: int
    block: int | None
    #: further occurrences at the same (code, file, line) that the emulator suppressed
    suppressed: int = 0
    #: the block is the AIC of a MIX launch that runs it (`(AIC k)`: `block` is then k, the AI Core)
    aic: bool = False


@dataclass
class RunResult:
    returncode: int
    stdout: str
    stderr: str
    errors: list[SimError]
    timed_out: bool
    #: from the final ``sim: <blocks> blocks, <n> errors`` line (None if absent)
    blocks: int | None = None
    error_count: int | None = None
    codes: list[str] = field(default_factory=list)
    #: per-block performance counters from the ``sim-counters:`` line (None if absent); that line is
    #: removed from ``stderr``. Layout: docs/emulator.md "Counters".
    counters: dict | None = None


def cache_root(out_dir: Path | None = None) -> Path:
    """Where compiled binaries are cached: ``out_dir``, else ``$ASCEND_DSL_CACHE/sim``, else
    ``~/.cache/ascend-dsl/sim``."""
    if out_dir is not None:
        return Path(out_dir)
    return cache_base() / "sim"


OPT_ENV = "ASCEND_SIM_OPT"
_OPT_LEVELS = ("-O0", "-O1", "-O2", "-O3", "-Og", "-Os")


def default_optimize() -> str:
    """The optimization level of emulator programs: ``$ASCEND_SIM_OPT`` (one of -O0 -O1 -O2 -O3 -Og -Os),
    else -O2."""
    value = os.environ.get(OPT_ENV, "").strip() or "-O2"
    if value not in _OPT_LEVELS:
        raise CompileError(f"{OPT_ENV}={value!r} is not one of {' '.join(_OPT_LEVELS)}", "")
    return value


def _compiler() -> str:
    return os.environ.get("ASCEND_SIM_CXX", "g++")


@functools.lru_cache(maxsize=8)
def _compiler_version(cxx: str) -> str:
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CompileError(f"cannot run the C++ compiler {cxx!r}: {exc}", "") from exc
    return out.stdout.strip()


@functools.lru_cache(maxsize=8)
def _static_link_flags(cxx: str) -> tuple[str, ...]:
    """``("-static",)`` when the C and C++ static libraries are installed, else ``()``. A static emulator
    program starts in about half the time (no dynamic loading or relocation of libstdc++)."""
    for lib in ("libc.a", "libstdc++.a", "libm.a"):
        try:
            out = subprocess.run([cxx, f"-print-file-name={lib}"], capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return ()
        found = Path(out.stdout.strip())
        if not (found.is_absolute() and found.is_file()):
            return ()
    return ("-static",)


def _headers_under(directory: Path, recursive: bool) -> list[Path]:
    if not directory.is_dir():
        return []
    it = directory.rglob("*") if recursive else directory.glob("*")
    return sorted(p for p in it if p.is_file() and p.suffix in _HEADER_SUFFIXES)


def _define_flags(defines: Mapping[str, str | int]) -> list[str]:
    flags = []
    for key in sorted(defines):
        value = defines[key]
        if isinstance(value, bool):
            value = int(value)
        flags.append(f"-D{key}={value}")
    return flags


def _cache_key(
    sources: Sequence[Path], header_dirs: Iterable[tuple[Path, bool]], flags: Sequence[str], version: str
) -> str:
    h = hashlib.sha256()

    def feed(tag: str, data: bytes) -> None:
        h.update(tag.encode())
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)

    feed("format", _CACHE_FORMAT.encode())
    feed("compiler", version.encode())
    for flag in flags:
        feed("flag", flag.encode())
    for src in sources:
        feed("source", src.name.encode())
        feed("content", src.read_bytes())
    seen: set[Path] = set()
    for directory, recursive in header_dirs:
        for header in _headers_under(directory, recursive):
            if header in seen:
                continue
            seen.add(header)
            feed("header", str(header.relative_to(directory)).encode())
            feed("content", header.read_bytes())
    return h.hexdigest()


def _error_lines(stderr: str, limit: int = 30) -> str:
    lines = [ln for ln in stderr.splitlines() if "error" in ln or "Error" in ln]
    if not lines:
        lines = stderr.strip().splitlines()[-limit:]
    return "\n".join(lines[:limit])


def _run_compiler(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        raise CompileError(f"compilation timed out after {timeout:g} s: {' '.join(cmd)}", err) from exc
    except OSError as exc:
        raise CompileError(f"cannot run the C++ compiler {cmd[0]!r}: {exc}", "") from exc
    if proc.returncode != 0:
        raise CompileError(_error_lines(proc.stderr), proc.stderr)
    return proc


@dataclass(frozen=True)
class Runtime:
    """The prebuilt runtime of one flag set: ``object`` (runtime.o) and ``pch_dir``, a directory holding
    a stub ``kernel_operator.h`` with its precompiled header ``kernel_operator.h.gch``."""

    object: Path
    pch_dir: Path


def prebuilt_runtime(flags: Sequence[str], *, out_dir: Path | None = None, timeout: float = 300) -> Runtime:
    """Build (once, cached by content) the runtime object and the precompiled emulator header for
    ``flags`` (BASE_FLAGS + defines + the prebuilt-runtime define). Safe against concurrent builds: the
    first process builds under a lock, the others wait and reuse it."""
    cxx = _compiler()
    version = _compiler_version(cxx)
    full = [*flags, _PREBUILT_DEFINE]
    key = _cache_key([RUNTIME_SOURCE], [(INCLUDE_DIR, True)], [*full, f"include={INCLUDE_DIR}"], version)
    rt_dir = cache_root(out_dir) / "runtime" / key
    obj, pch = rt_dir / "runtime.o", rt_dir / "kernel_operator.h.gch"
    if obj.is_file() and pch.is_file():
        touch(rt_dir)
        return Runtime(obj, rt_dir)
    rt_dir.mkdir(parents=True, exist_ok=True)
    with open(rt_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (obj.is_file() and pch.is_file()):
            stub = rt_dir / "kernel_operator.h"
            stub.write_text(f'// precompiled entry header (npu_harness/sim/compiler.py)\n#include "{INCLUDE_DIR}/kernel_operator.h"\n')
            tmp_o, tmp_pch = rt_dir / "runtime.o.tmp", rt_dir / "kernel_operator.h.gch.tmp"
            _run_compiler([cxx, *full, f"-I{INCLUDE_DIR}", "-c", str(RUNTIME_SOURCE), "-o", str(tmp_o)], timeout)
            _run_compiler([cxx, *full, f"-I{INCLUDE_DIR}", "-x", "c++-header", str(stub), "-o", str(tmp_pch)], timeout)
            os.replace(tmp_o, obj)
            os.replace(tmp_pch, pch)
    return Runtime(obj, rt_dir)


def compile_program(
    sources: list[Path],
    *,
    defines: dict[str, str | int],
    out_dir: Path | None = None,
    timeout: float = 120,
    extra_include_dirs: Sequence[Path] = (),
    extra_dirs_recursive: bool = True,
    prebuilt: bool | None = None,
    shared: bool = False,
    link: Sequence[Path] = (),
    optimize: str | None = None,
) -> Path:
    """Compile ``sources`` into one binary against the emulation header and return its path.

    By default (``prebuilt`` None: unless ``ASCEND_SIM_HEADER_ONLY=1``) the emulator's non-template
    runtime is linked from an object built once per flag set and the emulator header comes
    precompiled (``prebuilt_runtime``), so only what depends on the kernel is compiled: ``g++
    -std=c++20 -O2 ... -DASCEND_SIM_PREBUILT_RUNTIME=1 -I<pch dir> -include kernel_operator.h
    -I<INCLUDE_DIR> -I<dir of each source> -I<extra...> -D<k>=<v>... <sources> runtime.o -o <bin>``.
    ``prebuilt=False`` compiles the header-only way. ``optimize`` replaces -O2 (the differential fuzzer
    compiles its many short-running batches with -O0: a third of the CPU); None: ``$ASCEND_SIM_OPT`` if set
    (the test suite sets -O1: its kernels run small shapes), else -O2. The binary is cached under
    ``cache_root(out_dir)/<sha256>/prog``; the key covers the sources, every header under
    ``INCLUDE_DIR``, the source directories and ``extra_include_dirs``, the flags and the compiler
    version (headers in the source directories: top level only; in ``extra_include_dirs``: recursive
    unless ``extra_dirs_recursive`` is False). Programs link ``-static`` where the static C and C++
    libraries are installed (a faster start). Compilation writes a temporary
    file that is renamed into place (atomic). Raises ``CompileError`` on failure or timeout.

    ``shared=True`` builds a shared library (``-shared -fPIC -fno-gnu-unique``: each library keeps its
    own emulator state when several are loaded into one process) at ``<sha256>/lib.so``; ``link`` lists
    shared libraries (such paths) to link, found at run time through an rpath; their contents are in the key.
    Both compile header-only (``prebuilt`` defaults to False; True is an error): the prebuilt runtime
    object is not position-independent, and a copy linked into a program would interpose the runtime
    functions of the libraries it links.
    """
    srcs = [Path(s).resolve() for s in sources]
    if not srcs:
        raise CompileError("compile_program: no sources given", "")
    for src in srcs:
        if not src.is_file():
            raise CompileError(f"compile_program: source not found: {src}", "")
    if prebuilt is None:
        # The prebuilt runtime object is not position-independent, and a copy of it linked into a
        # program would interpose the runtime functions of the shared libraries it links.
        prebuilt = not (shared or link) and os.environ.get("ASCEND_SIM_HEADER_ONLY", "") not in ("1", "true", "yes")
    elif prebuilt and (shared or link):
        raise CompileError("compile_program: a shared library, or a program linking one, compiles header-only "
                           "(prebuilt=False)", "")
    optimize = default_optimize() if optimize is None else optimize
    extra = [Path(d).resolve() for d in extra_include_dirs]
    src_dirs: list[Path] = []
    for src in srcs:
        if src.parent not in src_dirs:
            src_dirs.append(src.parent)

    include_flags = [f"-I{INCLUDE_DIR}"] + [f"-I{d}" for d in src_dirs] + [f"-I{d}" for d in extra]
    flags = [*(optimize if f == "-O2" else f for f in BASE_FLAGS), *(("-shared", "-fPIC", "-fno-gnu-unique") if shared else ()),
             *_define_flags(defines)]
    libs = [Path(p).resolve() for p in link]
    cxx = _compiler()
    version = _compiler_version(cxx)
    link_flags = [] if shared or libs else list(_static_link_flags(cxx))
    header_dirs = [(INCLUDE_DIR, True), *((d, False) for d in src_dirs), *((d, extra_dirs_recursive) for d in extra)]
    # The key covers the *contents* of the include directories (hashed below), not their paths: a
    # kernel written to a fresh temporary directory on every validation still hits the cache.
    key_sources = [*srcs, *libs, RUNTIME_SOURCE] if prebuilt else [*srcs, *libs]
    key = _cache_key(key_sources, header_dirs, [*flags, *link_flags, f"-I{INCLUDE_DIR}", f"ndirs={len(src_dirs)},{len(extra)}",
                                                f"prebuilt={int(prebuilt)}"], version)

    target_dir = cache_root(out_dir) / key
    binary = target_dir / ("lib.so" if shared else "prog")
    if binary.is_file() and os.access(binary, os.X_OK):
        touch(target_dir)
        return binary

    runtime_objects: list[str] = []
    if prebuilt:
        rt = prebuilt_runtime(flags, out_dir=out_dir, timeout=max(timeout, 300))
        flags = [*flags, _PREBUILT_DEFINE]
        include_flags = [f"-I{rt.pch_dir}", "-include", "kernel_operator.h", *include_flags]
        runtime_objects = [str(rt.object)]
    target_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix="prog.", suffix=".tmp", dir=target_dir)
    os.close(fd)
    tmp = Path(tmp_name)
    cmd = [cxx, *flags, *include_flags, *(str(s) for s in srcs), *runtime_objects, *(str(lib) for lib in libs),
           *(f"-Wl,-rpath,{lib.parent}" for lib in libs), *link_flags, "-o", str(tmp)]
    try:
        proc = _run_compiler(cmd, timeout)
        (target_dir / "compile.log").write_text(" ".join(cmd) + "\n" + proc.stderr)
        os.replace(tmp, binary)
    finally:
        if tmp.exists():
            tmp.unlink()
    if out_dir is None:
        note_write()
    return binary


_ERROR_RE = re.compile(r"^error\[(?P<code>[A-Z0-9][A-Z0-9-]*)\]: (?P<msg>.*)$")
_LOC_RE = re.compile(r"^ --> (?P<file>.*?):(?P<line>\d+)(?: \((?P<kind>block|AIC) (?P<block>\d+)\))?\s*$")
_NOTE_RE = re.compile(
    r"^note: (?P<n>\d+) more errors like error\[(?P<code>[A-Z0-9-]+)\] at (?P<file>.*?):(?P<line>\d+) were suppressed$"
)
_SUMMARY_RE = re.compile(r"^sim: (?P<blocks>\d+) blocks, (?P<n>\d+) errors$")
_COUNTERS_PREFIX = "sim-counters: "


def split_counters(stderr: str) -> tuple[str, dict | None]:
    """Remove the ``sim-counters: {json}`` line(s) from ``stderr``; return (rest, last counters or None)."""
    if _COUNTERS_PREFIX not in stderr:
        return stderr, None
    kept, counters = [], None
    for line in stderr.splitlines(keepends=True):
        if line.startswith(_COUNTERS_PREFIX):
            try:
                counters = json.loads(line[len(_COUNTERS_PREFIX):])
            except json.JSONDecodeError:
                pass
        else:
            kept.append(line)
    return "".join(kept), counters


def parse_report(stderr: str) -> tuple[list[SimError], int | None, int | None]:
    """Parse the emulator's report: (errors, blocks, error_count) (the last two from the final
    ``sim:`` line, None if absent)."""
    lines = stderr.splitlines()
    errors: list[SimError] = []
    blocks: int | None = None
    count: int | None = None
    suppressed: dict[tuple[str, str, int], int] = {}
    i = 0
    while i < len(lines):
        m = _ERROR_RE.match(lines[i])
        if m:
            loc = _LOC_RE.match(lines[i + 1]) if i + 1 < len(lines) else None
            if loc:
                block = loc.group("block")
                errors.append(
                    SimError(
                        code=m.group("code"),
                        message=m.group("msg"),
                        file=loc.group("file"),
                        line=int(loc.group("line")),
                        block=int(block) if block is not None else None,
                        aic=loc.group("kind") == "AIC",
                    )
                )
                i += 2
                continue
            errors.append(SimError(code=m.group("code"), message=m.group("msg"), file="", line=0, block=None))
        else:
            n = _NOTE_RE.match(lines[i])
            if n:
                suppressed[(n.group("code"), n.group("file"), int(n.group("line")))] = int(n.group("n"))
            s = _SUMMARY_RE.match(lines[i])
            if s:
                blocks, count = int(s.group("blocks")), int(s.group("n"))
        i += 1
    if suppressed:
        errors = [
            SimError(e.code, e.message, e.file, e.line, e.block, suppressed.get((e.code, e.file, e.line), 0), e.aic)
            for e in errors
        ]
    return errors, blocks, count


@functools.cache
def _prlimit() -> str | None:
    return shutil.which("prlimit")


def limited_command(cmd: list[str], memory_limit_bytes: int) -> list[str] | None:
    """``cmd`` run through util-linux ``prlimit`` with RLIMIT_AS = ``memory_limit_bytes`` and no core file
    (prlimit sets the limits on itself and execs ``cmd``: same process), or None without prlimit (the caller
    then sets them in a ``preexec_fn``). Without a ``preexec_fn`` subprocess starts the child with vfork instead
    of fork: a fork copies the page tables of the validating process and makes its next writes fault, ~8 ms of
    CPU per run with 128 MB of arrays in the parent (session 31)."""
    exe = _prlimit()
    if exe is None or shutil.which(cmd[0]) is None:  # a missing program raises in Popen, as without prlimit
        return None
    return [exe, f"--as={memory_limit_bytes}", "--core=0", "--", *cmd]


def run_program(
    binary: Path,
    args: list[str],
    *,
    timeout: float = 60,
    memory_limit_bytes: int = 8 << 30,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    sandbox: Path | None = None,
) -> RunResult:
    """Run ``binary args...`` with a wall-clock timeout and RLIMIT_AS = ``memory_limit_bytes``.

    The emulator's own watchdog is set a little below ``timeout`` (ASCEND_SIM_TIME_LIMIT), so a launch
    that runs too long ends with ``error[TIME-LIMIT]`` in its report; the program also runs in its own
    process group, and if it outlives ``timeout`` the whole group is killed (SIGKILL) and ``timed_out``
    is set. ``env`` adds environment variables (ASCEND_SIM_THREADS, ASCEND_SIM_RACECHECK, ...). stderr
    is parsed into ``errors``. ``sandbox``: run it in npu_harness.sandbox with that directory as its only
    writable path (and its working directory), plus CPU-time and file-size limits (the caller first checks
    ``sandbox.unavailable()``).
    """
    from .. import sandbox as sb

    def _limit() -> None:  # runs in the child before exec
        if sandbox is not None:
            sb.limits(memory_limit_bytes)
            return
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit_bytes, memory_limit_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    child_env = dict(os.environ)
    child_env.setdefault("ASCEND_SIM_TIME_LIMIT", str(max(1, int(timeout - max(2.0, 0.05 * timeout)))))
    if env:
        child_env.update(env)
    cmd = [str(binary), *args]
    preexec = _limit
    if sandbox is not None:
        cmd, cwd = sb.command(cmd, sandbox), sandbox
    elif (limited := limited_command(cmd, memory_limit_bytes)) is not None:
        cmd, preexec = limited, None
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=str(cwd) if cwd is not None else None,
        preexec_fn=preexec,  # noqa: PLW1509 - only setrlimit; the callers do not run threads
        start_new_session=True,
        env=child_env,
    )
    timed_out = False
    try:
        out_b, err_b = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            out_b, err_b = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # a descendant escaped the group and holds the pipes
            proc.kill()
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
            proc.wait()
            out_b, err_b = b"", b""
    stdout = out_b.decode(errors="replace")
    stderr, counters = split_counters(err_b.decode(errors="replace"))
    errors, blocks, count = parse_report(stderr)
    if not any(e.code == "MEMORY-LIMIT" for e in errors):
        oom = "std::bad_alloc" in stderr or (proc.returncode == -signal.SIGKILL and not timed_out)
        if oom:  # the limit hit outside a block (no report of its own), or the OS killed the process
            errors.append(SimError("MEMORY-LIMIT", f"the emulator ran out of memory (its limit is {memory_limit_bytes / 2**30:.1f} GiB "
                                   "of address space; or the machine's memory is exhausted) and was stopped", "", 0, None))
    return RunResult(
        returncode=proc.returncode,
        stdout=stdout,
        stderr=stderr,
        errors=errors,
        timed_out=timed_out,
        blocks=blocks,
        error_count=count,
        codes=[e.code for e in errors],
        counters=counters,
    )
