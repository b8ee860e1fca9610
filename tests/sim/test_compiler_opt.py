"""The optimization level of emulator programs (compiler.default_optimize, $ASCEND_SIM_OPT)."""

from __future__ import annotations

import pytest

from npu_harness.sim.compiler import OPT_ENV, CompileError, compile_program, run_program

PROGRAM = "#include <cstdio>\nint main() { std::puts(\"hi\"); return 0; }\n"


def test_level_comes_from_the_environment_and_is_in_the_key(tmp_path, monkeypatch):
    src = tmp_path / "hi.cpp"
    src.write_text(PROGRAM)
    built = {}
    for level in ("-O1", "-O3"):
        monkeypatch.setenv(OPT_ENV, level)
        built[level] = compile_program([src], defines={}, prebuilt=False, out_dir=tmp_path / "cache")
        flags = (built[level].parent / "compile.log").read_text().split("\n")[0].split()
        assert level in flags and not {"-O0", "-O1", "-O2", "-O3"} - {level} & set(flags)
        assert run_program(built[level], []).stdout == "hi\n"
    assert built["-O1"] != built["-O3"]
    monkeypatch.setenv(OPT_ENV, "-O1")  # an explicit level wins over the environment
    explicit = compile_program([src], defines={}, prebuilt=False, out_dir=tmp_path / "cache", optimize="-O3")
    assert explicit == built["-O3"]


def test_bad_level_is_an_error_naming_the_variable(tmp_path, monkeypatch):
    src = tmp_path / "hi.cpp"
    src.write_text(PROGRAM)
    monkeypatch.setenv(OPT_ENV, "-O9")
    with pytest.raises(CompileError) as e:
        compile_program([src], defines={}, prebuilt=False, out_dir=tmp_path / "cache")
    assert "ASCEND_SIM_OPT='-O9'" in e.value.message and "-O1" in e.value.message
