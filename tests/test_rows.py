"""Row tiles (2-D tensors split by rows) and reductions along the last axis: front end, lowering,
emitted code, and the emulator checks that guard them."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from dsl_snippets import first_tile, tile_error, tile_kernel

from ascend_dsl import DslError, interpreter, ir
from lowering import lower
from npu_harness.validate import load_task_for, validate_sim

REPO = Path(__file__).resolve().parent.parent

HEAD = '''@kernel
def k(x: Tensor[f32, "B, D"], w: Tensor[f32, "D"], s: Tensor[f32, "B"], y: Tensor[f32, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


def _k(body: str, head: str = HEAD) -> ir.Kernel:
    return tile_kernel(head, body, "rows.adsl")


def _err(body: str, head: str = HEAD) -> DslError:
    return tile_error(head, body, "rows.adsl")


_tile = first_tile


def test_layouts_of_loads_reductions_and_broadcasts():
    k = _k("xt = load(x[r, :])\nm = max(xt, axis=1)\nv = load(w[:])\nu = load(s[r])\n"
           "store(y[r, :], (xt - m) * v + u)")
    types = {st.name: st.value.type for st in _tile(k).body if isinstance(st, ir.Assign)}
    assert types["xt"].layout is ir.Layout.ROWS and types["m"].layout is ir.Layout.COL
    assert types["v"].layout is ir.Layout.ROW and types["u"].layout is ir.Layout.COL
    assert _tile(k).shape == ir.RowTiles(("B",), ("D",))
    assert k.inputs == (k.param("x"), k.param("w"), k.param("s")) and k.outputs == (k.param("y"),)


def test_interpreter_rows_match_torch():
    k = _k("xt = load(x[r, :])\ne = exp(xt - max(xt, axis=1))\nstore(y[r, :], e / sum(e, axis=1) * load(w[:]))")
    x, w = torch.randn(13, 37), torch.randn(37)
    y = torch.empty(13, 37)
    interpreter.run(k, {"x": x, "w": w, "s": torch.zeros(13), "y": y}, num_cores=3, tile=100)
    torch.testing.assert_close(y, torch.softmax(x, dim=-1) * w)


@pytest.mark.parametrize("body,code,msg", [
    ("xt = load(x[r])\nstore(y[r, :], xt)", "INDEX", "index the 2-D tensor 'x' by whole rows"),
    ("xt = load(w[r])\nstore(y[r, :], xt)", "INDEX", "needs a tensor over the rows (B)"),
    ("xt = load(s[:])\nstore(y[r, :], xt)", "INDEX", "needs a tensor over the row length (D)"),
    ("xt = load(x[r, :])\nstore(w[:], xt)", "INDEX", "cannot be stored"),
    ("xt = load(x[r, :])\nstore(s[r], xt)", "TYPE", "storing whole rows into one value per row"),
    ("u = load(s[r])\nstore(y[r, :], sum(u, axis=1))", "TYPE", "needs whole rows"),
    ("xt = load(x[r, :])\nstore(y[r, :], xt - sum(xt, axis=0))", "UNSUPPORTED", "last axis"),
    ("xt = load(x[r, :])\nstore(y[r, :], xt - sum(xt))", "ARGS", "needs axis=1"),
    ("xt = load(x[r, :])\nstore(y[r, :], xt + load(s[r]) * load(w[:]))", "UNSUPPORTED", "only combine with whole rows"),
])
def test_row_errors_are_located(body, code, msg):
    e = _err(body)
    d = e.diagnostics[0]
    assert d.code == code and msg in d.message, e.render()
    assert d.span.file == "rows.adsl" and d.span.line >= 5


def test_two_row_lengths_are_rejected():
    head = HEAD.replace('y: Tensor[f32, "B, D"]', 'y: Tensor[f32, "B, E"]')
    assert _err("xt = load(x[r, :])\nstore(y[r, :], xt)", head).codes == ["INDEX"]


def test_per_row_compare_is_reported_by_lowering():
    k = _k("u = load(s[r])\nxt = load(x[r, :])\nstore(y[r, :], xt * select(u > 0.0, u, 0.0))")
    with pytest.raises(DslError) as e:
        lower(k)
    assert e.value.codes == ["UNSUPPORTED"] and "per-row values" in e.value.diagnostics[0].message


def test_emitted_row_kernel_structure():
    k = _k("xt = load(x[r, :])\nc = xt - mean(xt, axis=1)\nstore(y[r, :], c * load(w[:]) - 1.0 / load(s[r]))")
    project, _ = lower(k)
    cpp = project.files["k_kernel.cpp"]
    assert "CopyRowsGmToUb(xLocal, xGm[offset * rowLen_], count, rowLen_, rowPitch_);" in cpp  # one DataCopyPad for all rows
    # row i's mean straight into element i of the per-row values (the count form's dst: element alignment)
    assert "ReduceSum(tmp0[i], xLocal[i * rowPitch_], reduceTmp_f32, static_cast<int32_t>(rowLen_));" in cpp
    assert "SetValue" not in cpp.split("void Compute")[1].split("void CopyOut")[0]  # no scalar step per row
    assert "Mul(" in cpp and ", wLocal, rowLen_);" in cpp  # row vector broadcast per row
    assert project.manifest["tile_unit"] == "rows"
    assert "ubBytes" in project.files["k_tiling.h"]


@pytest.mark.parametrize("example", ["normalization/layer_norm", "activation/softmax"])
def test_golden_row_kernels(example, golden):
    from ascend_dsl import load_file

    adsl = REPO / "examples" / f"{example}.adsl"
    kernel = load_file(adsl)[0].instantiate()
    project, _ = lower(kernel, "ascend910b1", adsl.name)
    for fname in (f"{kernel.name}_kernel.cpp", f"{kernel.name}_tiling.h"):
        golden.check(f"{kernel.name}/{fname}", project.files[fname])


def test_row_too_long_for_ub_fails_at_tiling(tmp_path):
    # A per-row gather needs its whole row in UB: no chunked mode (softmax and friends, scans run chunked:
    # test_chunks.py).
    r = subprocess.run([sys.executable, "-m", "npu_harness.cli", str(REPO / "examples/loss/cross_entropy.adsl"), "-o",
                        str(tmp_path / "o"), "--validate", "sim", "--set", "batch_size=2", "--set",
                        "num_classes=100000"], check=False, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert r.returncode == 1
    assert "error[TILING]" in r.stderr and "sim: FAIL" in r.stdout
    assert "cannot run in column chunks: 'gather' needs the whole row in UB" in r.stderr


def test_planted_bug_reduce_scratch_too_small():
    from ascend_dsl import load_file

    adsl = REPO / "examples/reduce/max_dim.adsl"
    kernel = load_file(adsl)[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    fname = "max_dim_kernel.cpp"
    old = "pipe.InitBuffer(reduceTmp_f32Buf, rowPitch_ * sizeof(float));"
    assert old in project.files[fname]
    patched = replace(project, files={**project.files, fname: project.files[fname].replace(
        old, "pipe.InitBuffer(reduceTmp_f32Buf, 32);")})
    run = load_task_for(kernel, adsl.with_suffix(".py"), overrides={"batch_size": 2, "dim1": 2, "dim2": 3000})
    res = validate_sim(kernel, ctx.lowered, patched, ctx, run)
    # rows of 3000 floats fold their halves into the row scratch first (emit/row_fold.py): the first Max writes past
    # it (the count form's own minimum, REDUCE-TMP, is tested in tests/sim/test_vecapi.py)
    assert not res.ok and "UB-OOB" in {e.code for e in res.sim_errors}


def test_cap_scales_benchmark_sizes_down_and_reports_them(tmp_path):
    """Rows of 393,216 floats lower fine (D is a runtime value); --cap validates on a scaled-down shape."""
    r = subprocess.run([sys.executable, "-m", "npu_harness.cli", str(REPO / "examples/normalization/rms_norm.adsl"),
                        "-o", str(tmp_path / "o"), "--validate", "sim", "--set", "batch_size=64", "--set",
                        "dim=393216", "--cap", "8192"], check=False, capture_output=True, text=True, timeout=300,
                       cwd=REPO)
    assert r.returncode == 0, r.stdout + r.stderr
    shapes = next(line for line in r.stdout.splitlines() if line.startswith("task shapes: x "))
    b, d = (int(v) for v in shapes.split("[", 1)[1].split("]", 1)[0].split(", "))
    assert b * d <= 8192 and d < 393216, shapes
    assert f"sim: PASS (B={b}, D={d};" in r.stdout
    assert "rows of 393216 elements were scaled below the Unified Buffer" in r.stdout  # said, not silent
    assert "sim: PASS" in r.stdout
