"""Whole-row vector scans whose row fills the L x P matrix (n = 64 P: rows of 512, 4096, ...) transpose it straight
from the row (lowering/vector_scan.py, session 36): f32 rows without the copy into the scratch, 16-bit rows by a
16-bit Gather (2-byte offsets) and a Cast of the matrix, and 16-bit results cast from the scanned matrix before a
16-bit Gather back; a square matrix (P = L, rows of 3,585-4,096) takes the forward table for the way back.
Validated in the emulator against torch in both directions, inclusive and exclusive, sums and
products, at a segment count that takes the log-step offsets (P = 8) and one that takes the two-level ones (P = 64);
rows that do not fill the matrix keep the padded f32 path (test_scan_vector_offsets.py); planted bugs caught."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ascend_dsl import load_file
from lowering import lower
from npu_harness.validate import load_task_for, validate_sim

REPO = Path(__file__).resolve().parent.parent


def _run(name: str, dt: str, row: int, tmp_path, patch=None):
    adsl = REPO / "examples" / "math" / f"{name}.adsl"
    kernel = load_file(adsl)[0].instantiate({"T": dt})
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    f = f"{name}_kernel.cpp"
    assert "the row fills the matrix" in project.files[f]
    if patch:
        patched = patch(project.files[f])
        assert patched != project.files[f]
        project = replace(project, files={**project.files, f: patched})
    run = load_task_for(kernel, REPO / f"examples/math/{name}.py", overrides={"batch_size": 5, "dim": row})
    return validate_sim(kernel, ctx.lowered, project, ctx, run, work_dir=tmp_path)


def _vec(res, key: str) -> int:
    return sum(b["vec"].get(key, (0, 0))[1] for b in res.counters["blocks"])


@pytest.mark.parametrize("row", [512, 4096])
@pytest.mark.parametrize("name,dt", [("cumsum", "f16"), ("reverse_cumsum", "f16"), ("exclusive_cumsum", "f16"),
                                     ("cumprod", "f16"), ("masked_cumsum", "f16"), ("cumsum", "f32"),
                                     ("reverse_cumsum", "f32"), ("exclusive_cumsum", "f32"), ("cumprod", "f32")])
def test_full_rows_are_transposed_straight_from_the_row(name, dt, row, tmp_path):
    res = _run(name, dt, row, tmp_path)
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])
    if dt == "f16":  # the row's two transposes move 16-bit elements: n / 128 repeats each, per row
        assert _vec(res, "Gather.b16") == 5 * 2 * row // 128
    else:  # no copy of the row into the scratch (Muls by 1): only the tables' Muls remain
        assert _vec(res, "Muls.b32") < 5 * row // 64


@pytest.mark.parametrize("name", ["cumsum", "reverse_cumsum"])
def test_rows_short_of_the_matrix_keep_the_padded_path(name, tmp_path):
    res = _run(name, "f16", 4001, tmp_path)
    assert res.ok, res.summary()
    assert _vec(res, "Gather.b16") == 5 * ((4001 + 127) // 128)  # only the way back is 16-bit


@pytest.mark.slow
@pytest.mark.parametrize("name,row,bad", [
    # the forward table in 4-byte offsets for a 16-bit row: every other element
    ("cumsum", 4096, lambda c: c.replace("== 64 * P ? 2 : 4;", "== 64 * P ? 4 : 4;")),
    # the way back in 4-byte offsets for a 16-bit result (its own table: P = 8 is not square)
    ("cumsum", 512, lambda c: c.replace("const int32_t V = 2;", "const int32_t V = 4;")),
    # an exclusive scan cast from the matrix itself instead of one row up (inclusive results)
    ("exclusive_cumsum", 4096, lambda c: c.replace("Cast(oh, scanTmp_fwd, ", "Cast(oh, scanTmp_fwd[P], ")),
    # a reverse scan's direct transpose read forward (its table's reversal dropped)
    ("reverse_cumsum", 4096, lambda c: c.replace("Muls(col, col, -64 * U, S);", "Muls(col, col, 64 * U, S);")),
], ids=["in-unit", "out-unit", "exclusive-row", "reverse"])
def test_planted_direct_gather_bugs_are_caught(name, row, bad, tmp_path):
    res = _run(name, "f16", row, tmp_path, patch=bad)
    assert not res.ok, res.summary()


@pytest.mark.slow
@pytest.mark.parametrize("dt", ["f16", "f32"])
def test_planted_square_table_bug_is_caught(dt, tmp_path):
    """Rows of 512 (P = 8, not square): taking `fwd` for the way back there scrambles the row."""
    res = _run("reverse_cumsum", dt, 512, tmp_path, patch=lambda c: c.replace(" ? fwd : ", " || true ? fwd : "))
    assert not res.ok, res.summary()


@pytest.mark.parametrize("flags", ["", ", reverse=True, exclusive=True"])
def test_bf16_rows_take_the_16_bit_transposes(flags):
    """bf16 rows (no gallery kernel has them): the interpreter against the emulator (the fuzzer's runner), rows that fill
    the matrix (4096: square, the forward table back) and one that does not (1000), the result rounded to nearest."""
    from npu_harness.fuzz.minimize import job_of
    from npu_harness.fuzz.program import Loop, Program, Stmt
    from npu_harness.fuzz.runner import run_jobs

    body = (Stmt("v = load(x[r, :])", None, "v"), Stmt(f"store(y[r, :], cumsum(v, axis=1{flags}))"))
    loop = Loop("for blk in split(B, cores=AIV):", "for r in tile(blk, size=auto, buffers=2):", body)
    progs = [Program("k", "@kernel(T=[bf16])", ('x: Tensor[T, "B, D"]', 'y: Tensor[T, "B, D"]'), (loop,),
                     {"B": 5, "D": d}, 7, "ascend910b1", 48, "scans") for d in (4096, 1000)]
    assert all("t.ReinterpretCast<bfloat16_t>()" in lower_text(p) for p in progs)  # 16-bit Gathers
    outcomes = run_jobs([job_of(p) for p in progs])
    assert [o.status for o in outcomes] == ["pass", "pass"], [o.detail[:800] for o in outcomes]


def lower_text(p) -> str:
    from ascend_dsl import parse_text

    kernel = parse_text(p.text(), "k.adsl")[0].instantiate({"T": "bf16"})
    project, _ = lower(kernel, "ascend910b1", "k.adsl")
    return project.files["k_kernel.cpp"]
