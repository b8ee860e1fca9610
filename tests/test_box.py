"""Box loops: reductions over a chosen, non-last dim of a tensor (`sum(load(x[t]), axis=1)`, x: [A, R, C])."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch
from dsl_snippets import first_tile, tile_error, tile_kernel

from ascend_dsl import DslError, interpreter, ir, load_file
from lowering import lower
from npu_harness.validate import load_task_for, validate_sim

REPO = Path(__file__).resolve().parent.parent

HEAD = '''@kernel
def k(x: Tensor[f32, "A, R, C"], b: Tensor[f32, "A, C"], y: Tensor[f32, "A, C"]):
    for blk in split(A * C, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
'''

HEAD0 = '''@kernel
def k(x: Tensor[f32, "A, R, C"], y: Tensor[f32, "R, C"]):
    for blk in split(R * C, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
'''


def _k(body: str, head: str = HEAD) -> ir.Kernel:
    return tile_kernel(head, body, "box.adsl")


def _err(body: str, head: str = HEAD) -> DslError:
    return tile_error(head, body, "box.adsl")


_tile = first_tile


def test_box_layouts_and_reduced_axis():
    k = _k("xb = load(x[t])\ns = sum(xb * xb, axis=1)\nstore(y[t], s + load(b[t]))")
    types = {st.name: st.value.type for st in _tile(k).body if isinstance(st, ir.Assign)}
    assert types["xb"].layout is ir.Layout.BOX and types["s"].layout is ir.Layout.FLAT
    assert _tile(k).shape == ir.BoxTiles(1, "R")
    k0 = _k("store(y[t], max(load(x[t]), axis=0))", HEAD0)
    assert _tile(k0).shape == ir.BoxTiles(0, "A")
    assert _tile(_k("store(y[t], sum(load(x[t]), axis=-2))")).shape == ir.BoxTiles(1, "R")  # negative axes as in PyTorch


def test_interpreter_box_reductions_match_torch():
    x, b = torch.randn(3, 37, 11), torch.randn(3, 11)
    y = torch.empty(3, 11)
    k = _k("xb = load(x[t])\nstore(y[t], mean(xb, axis=1) + sum(xb * xb, axis=1) - max(xb, axis=1) + load(b[t]))")
    interpreter.run(k, {"x": x, "b": b, "y": y}, num_cores=4, tile=100)
    torch.testing.assert_close(y, x.mean(1) + (x * x).sum(1) - x.amax(1) + b)
    y0 = torch.empty(37, 11)
    interpreter.run(_k("store(y[t], prod(load(x[t]), axis=0))", HEAD0), {"x": x, "y": y0}, num_cores=3, tile=7)
    torch.testing.assert_close(y0, x.prod(0))


@pytest.mark.parametrize("body,code,msg", [
    ("store(y[t], sum(load(x[t]), axis=2))", "INDEX", "the box's extra axis is 1 (R)"),
    ("store(y[t], sum(load(x[t]), axis=0))", "INDEX", "reduces axis 0"),
    ("store(y[t], load(x[t]) * 2.0)", "TYPE", "storing an unreduced box into a flat tile"),
    ("store(y[t], sum(load(x[t, :]), axis=1))", "INDEX", "index tensors with the tile variable alone"),
    ("store(y[t], cumsum(load(x[t]), axis=1))", "TYPE", "needs whole rows"),
])
def test_box_errors_are_located(body, code, msg):
    e = _err(body)
    d = e.diagnostics[0]
    assert d.code == code and msg in d.message, e.render()
    assert d.span.file == "box.adsl" and d.span.line >= 5 and d.hint


def test_tensor_whose_dims_do_not_match_the_split():
    head = HEAD.replace('b: Tensor[f32, "A, C"]', 'b: Tensor[f32, "C, A"]')
    e = _err("store(y[t], sum(load(x[t]), axis=1) + load(b[t]))", head)
    assert e.codes == ["INDEX"] and "needs a tensor ['A', 'C']" in e.diagnostics[0].message
    assert "the input's dims without the reduced one" in e.diagnostics[0].hint


def test_two_reduced_axes_are_rejected():
    head = HEAD.replace('b: Tensor[f32, "A, C"]', 'b: Tensor[f32, "S, A, C"]')
    e = _err("store(y[t], sum(load(x[t]), axis=1))", head)
    assert e.codes == ["INDEX"] and "must share the reduced axis" in e.diagnostics[0].message


def test_box_tiles_are_sized_at_run_time_and_take_no_accumulator():
    assert _err("store(y[t], sum(load(x[t]), axis=1))", HEAD.replace("size=auto", "size=256")).codes == ["ARGS"]
    head = HEAD.replace("    for blk", "    total = 0.0\n    for blk")
    e = _err("total += sum(load(b[t]))\nstore(y[t], sum(load(x[t]), axis=1))", head)
    assert e.codes == ["UNSUPPORTED"] and "accumulators" in e.diagnostics[0].message


def test_box_kernel_with_kernel_scope_work_is_rejected_by_lowering():
    head = HEAD.replace('b: Tensor[f32, "A, C"]', 'b: Tensor[f32, "A, C"], s: Tensor[f32, "1"]').replace(
        "    for blk", "    scale = load(s[0])\n    for blk")
    with pytest.raises(DslError) as e:
        lower(_k("store(y[t], sum(load(x[t]), axis=1) * scale + load(b[t]))", head))
    assert e.value.codes == ["UNSUPPORTED"] and "split loop only" in e.value.diagnostics[0].message


def test_310p_rejects_box_loops_with_a_located_error():
    with pytest.raises(DslError) as e:
        lower(_k("store(y[t], sum(load(x[t]), axis=1))"), "ascend310p")
    d = e.value.diagnostics[0]
    assert d.code == "UNSUPPORTED" and "DataCopyPad" in d.message and d.span.line == 4


def test_emitted_box_kernel_structure():
    k = _k("xb = load(x[t])\ns = sum(xb * xb, axis=1)\nstore(y[t], mean(xb, axis=1) + s - max(xb, axis=1))")
    project, _ = lower(k)
    cpp = project.files["k_kernel.cpp"]
    # one strided DataCopyPad per chunk: rows M_ elements apart in GM land pitch elements apart in UB
    assert "DataCopyPad(xLocal, xGm[base + q0 * M_]," in cpp
    assert "static_cast<uint32_t>((M_ - len) * sizeof(float))" in cpp
    # the box is read again after its first reduction: that tree goes through the scratch box
    assert "Add(tmp0, tmp0, tmp0[(n - h) * pitch], h * pitch);" in cpp  # xb * xb dies here: in place
    assert "Add(boxTmp_f32, xLocal, xLocal[n * pitch], n * pitch);" in cpp  # mean: xb lives on
    assert "Max(xLocal, xLocal, xLocal[(n - h) * pitch], h * pitch);" in cpp  # max: its last use, in place
    assert "Duplicate(tmp3, (-1.0f / 0.0f), static_cast<int32_t>(len));" in cpp  # max starts at -inf
    assert "1.0f / static_cast<float>(rowLen_)" in cpp  # mean
    assert project.manifest["tile_unit"] == "positions"
    assert "chunkRows" in project.files["k_tiling.h"]


def test_box_loop_without_a_box_load_still_lowers():
    project, _ = lower(_k("store(y[t], load(b[t]) * 2.0)"))
    assert "DataCopyPad(" not in project.files["k_kernel.cpp"].split("class KernelK")[1]  # nothing strided to read


def test_golden_box_kernel(golden):
    adsl = REPO / "examples/reduce/sum_dim1.adsl"
    kernel = load_file(adsl)[0].instantiate({"T": "f16"})
    project, _ = lower(kernel, "ascend910b1", adsl.name)
    for fname in (f"{kernel.name}_kernel.cpp", f"{kernel.name}_tiling.h"):
        golden.check(f"{kernel.name}_f16/{fname}", project.files[fname])


def _sim(adsl: Path, files_patch, overrides: dict, dtypes: dict | None = None):
    kernel = load_file(adsl)[0].instantiate(dtypes or {})
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    fname = f"{kernel.name}_kernel.cpp"
    patched = replace(project, files={**project.files, fname: files_patch(project.files[fname])})
    run = load_task_for(kernel, adsl.with_suffix(".py"), overrides=overrides)
    return validate_sim(kernel, ctx.lowered, patched, ctx, run)


def test_box_kernel_validates_with_live_box_and_per_position_input(tmp_path):
    """Several reductions of one box (scratch tree), a per-position input and a ragged shape, in the emulator."""
    (tmp_path / "multi.adsl").write_text(HEAD.replace("def k", "def multi") + "".join(
        f"            {line}\n" for line in [
            "xb = load(x[t])", "m = max(xb, axis=1)",
            "store(y[t], mean(xb, axis=1) + sum(xb * xb, axis=1) * 0.5 - m + load(b[t]))"]))
    (tmp_path / "multi.py").write_text(
        "import torch\n\n\nclass Model(torch.nn.Module):\n"
        "    def forward(self, x, b):\n        return x.mean(1) + 0.5 * (x * x).sum(1) - x.amax(1) + b\n\n\n"
        "A = 3\nR = 37\nC = 1001\n\n\ndef get_inputs():\n    return [torch.randn(A, R, C), torch.randn(A, C)]\n\n\n"
        "def get_init_inputs():\n    return []\n")
    res = _sim(tmp_path / "multi.adsl", lambda text: text, {})
    assert res.ok, res.detail


def test_box_select_scalar_parameter_and_symbol_over_dim_0(tmp_path):
    """Comparisons and select on a box (a mask box), a scalar parameter and a shape symbol read as a value."""
    (tmp_path / "relu_mean0.adsl").write_text(
        "@kernel\n"
        'def relu_mean0(x: Tensor[f32, "A, R, C"], y: Tensor[f32, "R, C"], thr: f32 = 0.25):\n'
        "    for blk in split(R * C, cores=AIV):\n"
        "        for t in tile(blk, size=auto, buffers=2):\n"
        "            xb = load(x[t])\n"
        "            store(y[t], sum(select(xb > thr, xb, 0.0), axis=0) / A)\n")
    (tmp_path / "relu_mean0.py").write_text(
        "import torch\n\n\nclass Model(torch.nn.Module):\n"
        "    def forward(self, x):\n        return torch.where(x > 0.25, x, 0.0).mean(0)\n\n\n"
        "A = 7\nR = 5\nC = 301\n\n\ndef get_inputs():\n    return [torch.randn(A, R, C)]\n\n\n"
        "def get_init_inputs():\n    return []\n")
    res = _sim(tmp_path / "relu_mean0.adsl", lambda text: text, {})
    assert res.ok, res.detail


def test_planted_bug_short_row_copy_leaves_garbage_that_reaches_gm():
    """If a column of the box were never written (here: each strided row copy one element short), its garbage
    would flow through the tree into the stored result: the emulator reports it instead of passing."""
    old = "static_cast<uint32_t>(len * sizeof(float))"

    def patch(text: str) -> str:
        assert old in text
        return text.replace(old, "static_cast<uint32_t>((len - 1) * sizeof(float))")

    res = _sim(REPO / "examples/reduce/sum_dim1.adsl", patch, {"batch_size": 2, "dim1": 5, "dim2": 37})
    assert not res.ok and "UB-UNINIT" in {e.code for e in res.sim_errors}


def _gm2ub(dim2: int) -> dict:
    res = _sim(REPO / "examples/reduce/sum_dim1.adsl", lambda text: text, {"batch_size": 1, "dim1": 5, "dim2": dim2})
    assert res.ok and res.report is not None, res.detail
    gm2ub = [b["gm2ub"] for b in res.counters["blocks"] if b.get("gm2ub", {}).get("bytes")]
    assert len(gm2ub) == 1  # one core
    return gm2ub[0]


def test_strided_copies_are_counted_burst_by_burst():
    """Each chunk is one DataCopyPad transfer whose bursts are the rows of the reduced axis (len elements each):
    the cost model charges every burst at its size, and every transfer its latency."""
    # 37 positions (148 B rows, padded to 160 B in UB); the 5 rows in two chunks (3 + 2) so copies overlap compute
    assert _gm2ub(37) == {"bytes": 5 * 37 * 4, "transfers": 2, "bursts": 5, "hist": [[256, 5, 740]]}
    # 40 positions: whole rows of the reduced axis with no padding, so each chunk is one contiguous burst
    assert _gm2ub(40) == {"bytes": 5 * 40 * 4, "transfers": 2, "bursts": 2, "hist": [[512, 2, 800]]}


def _split_axis_task(tmp_path: Path) -> Path:
    """Two rows of 64 positions (A = 2) and a long reduced axis (R = 301): most cores would idle without the split
    of the reduced axis over cores; 301 rows leave a shorter last part."""
    (tmp_path / "four.adsl").write_text(HEAD.replace("def k", "def four").replace(", b: Tensor[f32, \"A, C\"]", "") +
                                        "".join(f"            {line}\n" for line in [
                                            "xb = load(x[t])",
                                            "store(y[t], sum(xb, axis=1) + max(xb, axis=1) - min(xb * 0.5, axis=1)"
                                            " + mean(xb, axis=1))"]))
    (tmp_path / "four.py").write_text(
        "import torch\n\n\nclass Model(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x.sum(1) + x.amax(1) - (x * 0.5).amin(1) + x.mean(1)\n\n\n"
        "A = 2\nR = 301\nC = 64\n\n\ndef get_inputs():\n    return [torch.randn(A, R, C)]\n\n\n"
        "def get_init_inputs():\n    return []\n")
    return tmp_path / "four.adsl"


def test_reduced_axis_split_over_cores_combines_every_part(tmp_path):
    """2 rows of positions on 48 cores: each row's reduced axis is split over 4 cores (16 rows per part at least,
    4096 elements per core at least), whose partials the row's first core folds after a SyncAll."""
    adsl = _split_axis_task(tmp_path)
    res = _sim(adsl, lambda text: text, {})
    assert res.ok, res.detail
    assert len(res.counters["blocks"]) == 8  # 2 rows x 4 parts (301 rows: 76, 76, 76, 73)
    project, _ = lower(load_file(adsl)[0].instantiate({}))
    cpp = project.files["four_kernel.cpp"]
    assert cpp.count("SyncAll();") == 1 and "Max(tmp1, tmp1, part, len);" in cpp
    assert project.manifest["workspace_bytes_per_core"] == "(static_cast<size_t>(tiling.tileLength) * 16)"


def test_planted_bug_parts_of_the_reduced_axis_left_uncombined(tmp_path):
    """If the first core of a row stored its own part without the others', the sums would miss rows."""
    old = "for (uint32_t c = 1; c < parts_; ++c) {"

    def patch(text: str) -> str:
        assert old in text
        return text.replace(old, "for (uint32_t c = 1; c < 1; ++c) {")

    assert not _sim(_split_axis_task(tmp_path), patch, {}).ok


def test_host_splits_the_reduced_axis_only_when_rows_of_positions_leave_cores_idle():
    """sum_dim1 f16: 16 rows of 256 positions on 48 cores take 3 parts of R each (whole rows, 1366 rows per part);
    256 rows of 4096 positions are enough rows (no split); no rows at all (A = 0) launch without a division by 0."""
    from npu_harness.tiling_probe import run_tiling

    adsl = REPO / "examples/reduce/sum_dim1.adsl"
    project, _ = lower(load_file(adsl)[0].instantiate({"T": "f16"}), "ascend910b1", adsl.name)
    fields = ("blockLength", "tileLength", "rParts", "partRows")

    def tiling(a: int, r: int, c: int) -> list[int]:
        t = run_tiling(project, "ascend910b1", {"A": a, "R": r, "C": c}, {}, 48, fields)
        return [t["blocks"], *(t[f] for f in fields)]

    assert tiling(16, 4096, 256) == [48, 256, 256, 3, 1366]
    assert tiling(256, 16, 4096)[3] == 1
    assert tiling(0, 4096, 256)[3] == 1
