"""Mmad with m = 1 is GEMV mode (ascend_sim/cube.h): A is read from L0A as a plain vector, as the hardware
does (Mmad.md; atlas_ascendc_10_10019). A convolution tile of one output channel must therefore not hand
Mmad m = 1 over Zz fractals: tests/test_conv.py checks that the kernel computes two rows instead."""

from __future__ import annotations

from pathlib import Path

from npu_harness.sim.compiler import compile_program, run_program

SRC = Path(__file__).resolve().parent / "kernels" / "cube_gemv.cpp"


def test_mmad_with_one_row_reads_a_as_a_vector():
    res = run_program(compile_program([SRC], defines={}), ["gemv"], timeout=60)
    assert res.returncode == 0 and not res.errors, res.stdout + res.stderr
