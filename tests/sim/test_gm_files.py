"""GM from files (sim::GmMapInput / GmMapOutput): the output file holds the kernel's results and the 0xFF
poison, at exactly the launch's size, however the program ends (GmFree, a crash, the time limit, or a
return without GmFree), and never a previous run's bytes; the input file is never modified."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from npu_harness.sim.compiler import compile_program, run_program

KERNEL = Path(__file__).resolve().parent / "kernels" / "gm_files.cpp"
A2 = {"__NPU_ARCH__": 2201, "ASCEND_SIM_UB_BYTES": 196608, "ASCEND_SIM_HAS_DATACOPYPAD": 1, "ASCEND_SIM_MAX_BLOCKS": 48}
N = 1024


@pytest.fixture(scope="module")
def program() -> Path:
    return compile_program([KERNEL], defines=A2)


def _run(program: Path, io: Path, mode: str, stale: bytes | None, n: int = N, **env: str):
    x = np.arange(n, dtype=np.float32) - 300.0
    (io / "x.bin").write_bytes(x.tobytes())
    if stale is not None:
        (io / "y.bin").write_bytes(stale)
    res = run_program(program, [str(io), str(n), mode], timeout=30, env=env or None)
    return x, res


def _assert_output(io: Path, x: np.ndarray) -> None:
    n = x.size
    raw = (io / "y.bin").read_bytes()
    assert len(raw) == n * 4, len(raw)
    y = np.frombuffer(raw, dtype=np.float32)
    np.testing.assert_array_equal(y[: n // 2], x[: n // 2])
    assert raw[n * 2:] == b"\xff" * (n * 2), "the unwritten half is not the 0xFF poison"
    assert (io / "x.bin").read_bytes() == x.tobytes(), "the input file was modified"


@pytest.mark.parametrize("stale", [None, b"\x00" * (N * 4), b"\x11" * (N * 8)], ids=["new", "same-size", "longer"])
def test_output_file_after_gmfree(program: Path, tmp_path: Path, stale: bytes | None) -> None:
    # an existing output file (same size or longer) is overwritten in full: poison where the kernel wrote nothing
    x, res = _run(program, tmp_path, "ok", stale)
    assert res.returncode == 0 and res.errors == [], res.stderr
    _assert_output(tmp_path, x)


def test_large_output_file(program: Path, tmp_path: Path) -> None:
    # over 64 MiB: GmFree writes it piece by piece and releases each written piece
    n = 9 * (1 << 21)  # 72 MiB of f32
    x, res = _run(program, tmp_path, "ok", None, n=n)
    assert res.returncode == 0 and res.errors == [], res.stderr
    _assert_output(tmp_path, x)


def test_output_file_after_crash(program: Path, tmp_path: Path) -> None:
    x, res = _run(program, tmp_path, "crash", b"\x00" * (N * 4))
    assert res.returncode != 0 and [e.code for e in res.errors] == ["CRASH"], res.stderr
    _assert_output(tmp_path, x)


def test_output_file_after_time_limit(program: Path, tmp_path: Path) -> None:
    x, res = _run(program, tmp_path, "spin", b"\x00" * (N * 4), ASCEND_SIM_TIME_LIMIT="1")
    assert res.returncode == 1 and [e.code for e in res.errors] == ["TIME-LIMIT"], res.stderr
    _assert_output(tmp_path, x)


def test_output_file_without_gmfree(program: Path, tmp_path: Path) -> None:
    x, res = _run(program, tmp_path, "nofree", b"\x00" * (N * 4))
    assert res.returncode == 0 and res.errors == [], res.stderr
    _assert_output(tmp_path, x)


def test_missing_or_short_input_is_an_error(program: Path, tmp_path: Path) -> None:
    (tmp_path / "x.bin").write_bytes(b"\x00" * 16)
    res = run_program(program, [str(tmp_path), str(N), "ok"], timeout=30)
    assert res.returncode == 2 and [e.code for e in res.errors] == ["LAUNCH"], res.stderr
    assert "16 bytes" in res.errors[0].message
