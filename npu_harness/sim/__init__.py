"""CPU emulation of the AscendC API subset (header in ``include/``) and its build/run helpers."""

from __future__ import annotations

from .compiler import INCLUDE_DIR, CompileError, RunResult, SimError, compile_program, parse_report, run_program

__all__ = ["INCLUDE_DIR", "CompileError", "RunResult", "SimError", "compile_program", "parse_report", "run_program"]
