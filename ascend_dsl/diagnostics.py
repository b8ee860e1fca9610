"""Located diagnostics, rendered rustc-style.

Every user-facing error of the toolchain is a `Diagnostic` with a stable code, a message, the
span it points at and an optional hint. `DslError` carries one or more of them (constraint checks
collect every error and raise once); `render()` turns them into::

    error[UB-CAPACITY]: tiles need 262144 B of Unified Buffer; ascend910b1 allows 188416 B
     --> examples/activation/gelu.adsl:14:9
       |
    14 |         xt = load(x[t])
       |         ^^^^^^^^^^^^^^^
       = hint: use size=auto or a smaller tile
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class ErrorCode(StrEnum):
    """Every diagnostic code (docs/language.md, "Errors"); a Diagnostic with another code is a bug."""

    # front end
    SYNTAX = "SYNTAX"  # the text does not parse (or is not valid Python around @kernel)
    UNDEFINED_NAME = "UNDEFINED-NAME"
    UNKNOWN_OP = "UNKNOWN-OP"
    UNKNOWN_DTYPE = "UNKNOWN-DTYPE"
    DUPLICATE_NAME = "DUPLICATE-NAME"
    TYPE = "TYPE"  # a value of the wrong kind or layout
    DTYPE_MISMATCH = "DTYPE-MISMATCH"
    ARGS = "ARGS"  # arguments of a call (or a command line)
    INDEX = "INDEX"  # how a tensor is indexed
    KERNEL_STRUCTURE = "KERNEL-STRUCTURE"  # loops and statements in the wrong place
    UNSUPPORTED = "UNSUPPORTED"  # valid DSL this compiler does not lower (yet)
    NO_KERNEL = "NO-KERNEL"
    IO = "IO"
    # hardware constraints (lowering)
    UB_CAPACITY = "UB-CAPACITY"
    TILE_ALIGN = "TILE-ALIGN"
    BUFFER_COUNT = "BUFFER-COUNT"
    CORE_COUNT = "CORE-COUNT"
    DTYPE_UNSUPPORTED = "DTYPE-UNSUPPORTED"
    POOL_PARAMS = "POOL-PARAMS"
    CUBE_FRACTAL = "CUBE-FRACTAL"
    L0A_CAPACITY = "L0A-CAPACITY"
    L0B_CAPACITY = "L0B-CAPACITY"
    L0C_CAPACITY = "L0C-CAPACITY"
    L1_CAPACITY = "L1-CAPACITY"
    MIX_UNSUPPORTED = "MIX-UNSUPPORTED"
    TARGET = "TARGET"  # an unknown target name
    INTERNAL = "INTERNAL"  # a compiler bug
    # validation and generation
    BINDING = "BINDING"  # a task's tensors do not fit the kernel's parameters
    SHAPE = "SHAPE"
    TILING = "TILING"
    TASK_ERROR = "TASK-ERROR"
    TASK_TIMEOUT = "TASK-TIMEOUT"
    CAP = "CAP"  # --cap cannot scale the task under the cap
    DTYPE = "DTYPE"  # a task's data cannot convert to the kernel's dtypes
    MEMORY_LIMIT = "MEMORY-LIMIT"  # a task, emulator run or lowering exceeded the memory limit
    # kernel calls (torch op), exports and NPU runs
    CALL = "CALL"  # a kernel called with arguments it does not take
    CALL_DEVICE = "CALL-DEVICE"
    CALL_DTYPE = "CALL-DTYPE"
    CALL_RUNNER = "CALL-RUNNER"
    CALL_SHAPE = "CALL-SHAPE"
    CALL_TARGET = "CALL-TARGET"
    EXPORT = "EXPORT"
    NPU_COMPILE = "NPU-COMPILE"
    NPU_ERROR = "NPU-ERROR"
    NPU_TIMEOUT = "NPU-TIMEOUT"
    SIM_COMPILE = "SIM-COMPILE"
    SANDBOX = "SANDBOX"  # model-written code is run sandboxed only, and no sandbox can be made
    IO_DIR = "IO-DIR"  # $ASCEND_SIM_IO_DIR (the emulator's scratch files) is not a directory
    FORBIDDEN = "FORBIDDEN"  # LLM output that imports or calls what a kernel cannot
    WRONG_LANGUAGE = "WRONG-LANGUAGE"
    GEN_NO_CODE = "GEN-NO-CODE"


_SOURCES: dict[str, str] = {}


def register_source(file: str, text: str) -> None:
    """Remember the text of a file so diagnostics can quote it (also for in-memory sources)."""
    _SOURCES[file] = text


def source_line(file: str, line: int) -> str | None:
    text = _SOURCES.get(file)
    if text is None:
        try:
            text = Path(file).read_text()
        except OSError:
            return None
        _SOURCES[file] = text
    lines = text.splitlines()
    return lines[line - 1] if 1 <= line <= len(lines) else None


@dataclass(frozen=True)
class Span:
    """A source range; lines and columns are 1-based and absolute in `file`."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


UNKNOWN_SPAN = Span("<unknown>", 0, 0, 0, 0)


@dataclass(frozen=True)
class Diagnostic:
    code: ErrorCode
    message: str
    span: Span | None = None
    hint: str | None = None
    notes: tuple[str, ...] = ()
    severity: str = "error"

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", ErrorCode(self.code))  # a string code must be one of ErrorCode

    def render(self) -> str:
        out = [f"{self.severity}[{self.code}]: {self.message}"]
        if self.span is not None and self.span.line > 0:
            out.append(f" --> {self.span}")
            text = source_line(self.span.file, self.span.line)
            if text is not None:
                num = str(self.span.line)
                pad = " " * len(num)
                start = max(self.span.col, 1)
                if self.span.end_line == self.span.line and self.span.end_col > start:
                    width = self.span.end_col - start
                else:
                    width = max(len(text.rstrip()) - start + 1, 1)
                out += [f"{pad} |", f"{num} | {text.rstrip()}", f"{pad} | {' ' * (start - 1)}{'^' * width}"]
                out.extend(f"{pad} = note: {n}" for n in self.notes)
                if self.hint:
                    out.append(f"{pad} = hint: {self.hint}")
                return "\n".join(out)
        out.extend(f"   = note: {n}" for n in self.notes)
        if self.hint:
            out.append(f"   = hint: {self.hint}")
        return "\n".join(out)


@dataclass
class DslError(Exception):
    """One or more user errors. Raised `from None` so no compiler frames reach the user."""

    diagnostics: tuple[Diagnostic, ...] = field(default_factory=tuple)

    def __init__(self, *diagnostics: Diagnostic):
        super().__init__()
        self.diagnostics = tuple(diagnostics)

    @classmethod
    def at(cls, code: ErrorCode | str, message: str, span: Span | None, hint: str | None = None) -> DslError:
        return cls(Diagnostic(code, message, span, hint))

    @property
    def codes(self) -> list[str]:
        return [d.code for d in self.diagnostics]

    def render(self) -> str:
        return "\n\n".join(d.render() for d in self.diagnostics)

    def __str__(self) -> str:
        return self.render()


class DiagnosticSink:
    """Collects diagnostics; `raise_if_any()` raises them together (checks report every error, each once: a
    rewrite into several instructions may trip one check several times at one span)."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def error(self, code: ErrorCode | str, message: str, span: Span | None, hint: str | None = None, notes=()) -> None:
        d = Diagnostic(code, message, span, hint, tuple(notes))
        if d not in self.items:
            self.items.append(d)

    def raise_if_any(self) -> None:
        if self.items:
            raise DslError(*self.items)
