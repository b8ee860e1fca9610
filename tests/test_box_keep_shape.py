"""Box loops that keep the box's shape: a per-position value broadcast along the extra axis, and stored boxes
(softmax over dim 1, RMS norm over channels, L2-normalise over dim 1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from dsl_snippets import first_tile, tile_error, tile_kernel

from ascend_dsl import DslError, interpreter, ir, load_file, parse_text
from lowering import lower
from npu_harness.validate import load_task_for, validate_sim

REPO = Path(__file__).resolve().parent.parent

HEAD = '''@kernel
def k(x: Tensor[f32, "A, R, C"], b: Tensor[f32, "A, C"], y: Tensor[f32, "A, R, C"], m: Tensor[f32, "A, C"]):
    for blk in split(A * C, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
'''
SOFTMAX = "xb = load(x[t])\ne = exp(xb - max(xb, axis=1))\nstore(y[t], e / sum(e, axis=1))"


def _k(body: str) -> ir.Kernel:
    return tile_kernel(HEAD, body, "keep.adsl")


def test_box_with_a_per_position_value_is_a_box():
    k = _k("xb = load(x[t])\nr = rsqrt(mean(xb * xb, axis=1))\nv = xb * r\nw = load(b[t]) - xb\nstore(y[t], v + w)")
    types = {st.name: st.value.type.layout for st in first_tile(k).body if isinstance(st, ir.Assign)}
    assert types["r"] is ir.Layout.FLAT and types["v"] is ir.Layout.BOX and types["w"] is ir.Layout.BOX


def test_interpreter_keeps_the_shape_as_torch():
    x, b = torch.randn(3, 37, 11), torch.randn(3, 11)
    y, m = torch.empty(3, 37, 11), torch.empty(3, 11)
    k = _k(SOFTMAX + "\nstore(m[t], max(xb, axis=1) + load(b[t]))")
    interpreter.run(k, {"x": x, "b": b, "y": y, "m": m}, num_cores=4, tile=100)
    torch.testing.assert_close(y, torch.softmax(x, dim=1))
    torch.testing.assert_close(m, x.amax(1) + b)
    y1 = torch.empty(1, 37, 11)  # A == 1: the box rows are a view of the tensor itself
    interpreter.run(_k("xb = load(x[t])\nstore(y[t], xb * rsqrt(mean(xb * xb, axis=1) + 1e-5) - load(b[t]))"),
                    {"x": x[:1].clone(), "b": b[:1].clone(), "y": y1, "m": m[:1].clone()}, num_cores=3, tile=7)
    torch.testing.assert_close(y1, x[:1] * torch.rsqrt((x[:1] ** 2).mean(1, keepdim=True) + 1e-5) - b[:1, None])


@pytest.mark.parametrize("body,code,msg,line", [
    # a box into a tensor of another shape: a flat output, a tensor with another extra dim
    ("store(m[t], load(x[t]) * 2.0)", "TYPE", "storing an unreduced box into a flat tile of 'm'", 5),
    ("xb = load(x[t])\nstore(y[t], select(xb > max(xb, axis=1), xb, 0.0))", "UNSUPPORTED",
     "comparisons and select of a box need operands that are all boxes", 6),
])
def test_keep_shape_misuse_is_located(body, code, msg, line):
    e = tile_error(HEAD, body, "keep.adsl")
    d = e.diagnostics[0]
    assert d.code == code and msg in d.message, e.render()
    assert d.span.file == "keep.adsl" and d.span.line == line


def test_box_stored_into_a_tensor_of_the_wrong_shape():
    head = HEAD.replace('y: Tensor[f32, "A, R, C"]', 'y: Tensor[f32, "A, R, R"]')
    e = tile_error(head, "store(y[t], load(x[t]) * 2.0)", "keep.adsl")
    d = e.diagnostics[0]
    assert d.code == "INDEX" and "'y' has shape ['A', 'R', 'R']" in d.message and (d.span.line, d.span.col) == (5, 19)
    assert "['A', 'R', 'C'] (a box, reduced over axis 1)" in d.message
    # [A, C, R] makes the loop one over rows of R (the last dim): x[t] of the box tensor is then refused, located
    e = tile_error(HEAD.replace('y: Tensor[f32, "A, R, C"]', 'y: Tensor[f32, "A, C, R"]'),
                   "store(y[t], load(x[t]) * 2.0)", "keep.adsl")
    assert e.codes == ["INDEX"] and e.diagnostics[0].span.line == 5


def test_box_with_a_flat_tile_of_another_loop():
    src = '''@kernel
def k(x: Tensor[f32, "A, R, C"], b: Tensor[f32, "A, C"], z: Tensor[f32, "A, C"], y: Tensor[f32, "A, R, C"]):
    for blk in split(A * C, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            m = load(b[t])
            store(z[t], m)
    for blk2 in split(A * C, cores=AIV):
        for u in tile(blk2, size=auto, buffers=2):
            store(y[u], load(x[u]) * m)
            store(z[u], sum(load(x[u]) * load(b[t]), axis=1))
'''
    with pytest.raises(DslError) as e:
        parse_text(src, "keep.adsl")[0].instantiate()
    d = e.value.diagnostics[0]
    assert d.code == "UNDEFINED-NAME" and (d.span.line, d.span.col) == (9, 38), e.value.render()
    with pytest.raises(DslError) as e:  # the other loop's tile variable
        parse_text(src.replace("load(x[u]) * m)", "load(x[u]) * load(b[t]))"), "keep.adsl")[0].instantiate()
    d = e.value.diagnostics[0]
    assert d.code == "INDEX" and "tile variable alone: b[u]" in d.message and d.span.line == 9


def test_emitted_keep_shape_kernel():
    project, _ = lower(_k(SOFTMAX + "\nstore(m[t], load(b[t]) * 2.0)"))
    cpp, tiling = project.files["k_kernel.cpp"], project.files["k_tiling.h"]
    # the per-position max and sum, broadcast along the box: a repeat per row, the flat tile re-read (stride 0)
    assert "Sub(tmp1[r * pitch + c], xLocal[r * pitch + c], tmp0[c], " in cpp
    assert "Div(yLocal[r * pitch + c], tmp1[r * pitch + c], tmp2[c], " in cpp
    assert "BinaryRepeatParams(1, 1, 1, rowBlocks, rowBlocks, 0)" in cpp
    assert "    Div(yLocal[r * pitch], tmp1[r * pitch], tmp2, len);" in cpp  # rows over 255 blocks: one by one
    # the stored box: the strided copy mirroring the load (UB stride in blocks, GM stride in bytes)
    assert "DataCopyPad(yGm[base + q0 * M_], out," in cpp
    assert "static_cast<uint32_t>((M_ - len) * sizeof(float)), 0});" in cpp
    assert "constexpr bool kWholeAxis = true;" in tiling
    assert "at most R = " in project.view.tiling_error and "keep.adsl:4" in project.view.tiling_error
    plain, _ = lower(_k("store(m[t], sum(load(x[t]), axis=1))"))  # reductions alone stream the axis in chunks
    assert "constexpr bool kWholeAxis = false;" in plain.files["k_tiling.h"]


def _sim(adsl: Path, overrides: dict, dtypes: dict | None = None, patch=lambda text: text):
    from dataclasses import replace
    kernel = load_file(adsl)[0].instantiate(dtypes or {})
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    fname = f"{kernel.name}_kernel.cpp"
    project = replace(project, files={**project.files, fname: patch(project.files[fname])})
    return validate_sim(kernel, ctx.lowered, project, ctx, load_task_for(kernel, adsl.with_suffix(".py"),
                                                                          overrides=overrides))


def _task(tmp_path: Path) -> Path:
    """Softmax over dim 1 stored with a flat output and a loaded per-position input broadcast along the box."""
    body = SOFTMAX.replace("e / sum(e, axis=1)", "e / sum(e, axis=1) + load(b[t])") + "\nstore(m[t], max(xb, axis=1))"
    (tmp_path / "keep.adsl").write_text(HEAD.replace("def k", "def keep") + "".join(
        f"            {line}\n" for line in body.splitlines()))
    (tmp_path / "keep.py").write_text(
        "import torch\n\n\nclass Model(torch.nn.Module):\n"
        "    def forward(self, x, b):\n        return torch.softmax(x, dim=1) + b[:, None, :], x.amax(1)\n\n\n"
        "A = 3\nR = 37\nC = 101\n\n\ndef get_inputs():\n    return [torch.randn(A, R, C), torch.randn(A, C)]\n\n\n"
        "def get_init_inputs():\n    return []\n")
    return tmp_path / "keep.adsl"


@pytest.mark.slow
def test_keep_shape_validates_in_the_emulator(tmp_path):
    res = _sim(_task(tmp_path), {})
    assert res.ok, res.detail


@pytest.mark.slow
def test_planted_bug_a_box_row_never_written_reaches_gm(tmp_path):
    """If the broadcast skipped the box's last row (one repeat short), stale UB would be stored: the comparison fails."""
    def patch(text: str) -> str:
        old = "static_cast<uint8_t>(rows - r < 255 ? rows - r : 255), BinaryRepeatParams(1, 1, 1, rowBlocks, rowBlocks, 0));"
        i = text.index(old, text.index("    Div("))  # the division's
        return text[:i] + old.replace("rows - r : 255)", "rows - r - 1 : 255)") + text[i + len(old):]

    res = _sim(_task(tmp_path), {}, patch=patch)
    assert not res.ok and [c.name for c in res.comparisons if not c.ok] == ["y"], res.detail


@pytest.mark.slow
def test_long_extra_axis_is_a_tiling_error_that_says_what_fits(tmp_path):
    r = subprocess.run([sys.executable, "-m", "npu_harness.cli", str(REPO / "examples/activation/softmax_dim1.adsl"),
                        "-o", str(tmp_path / "o"), "--validate", "tiling", "--set", "dim1=5000", "--set", "dim2=64"],
                       check=False, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "softmax_dim1.adsl:8: the loop keeps the box's shape" in r.stdout
    assert "at most R = 976 fits" in r.stdout
