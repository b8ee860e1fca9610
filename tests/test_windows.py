"""Scans along rows (cumsum / cumprod, reverse, exclusive), products per row, and pooling over
planes: front end, interpreter, constraint checks, lowering to scalar loops, host tiling."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from dsl_snippets import tile_error, tile_kernel

from ascend_dsl import DslError, interpreter, ir, load_file, parse_text
from lowering import lower
from lowering.passes.check_windows import check_pool_binding
from npu_harness.tiling_probe import run_tiling

REPO = Path(__file__).resolve().parent.parent

ROWS = '''@kernel
def k(x: Tensor[f32, "B, D"], m: Tensor[u8, "B, D"], y: Tensor[f32, "B, D"], n: i32 = 2):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''

PLANES = '''@kernel
def k(x: Tensor[f32, "N, C, H, W"], y: Tensor[f32, "N, C, OH, OW"], v: Tensor[f32, "B"], ks: i32 = 3, st: i32 = 2,
      pad: i32 = 1, alpha: f32 = 0.5):
    for blk in split(N * C, cores=AIV):
        for p in tile(blk, size=auto, buffers=2):
'''


def _k(body: str, head: str = ROWS, file: str = "win.adsl") -> ir.Kernel:
    return tile_kernel(head, body, file)


def _err(body: str, head: str = ROWS) -> DslError:
    return tile_error(head, body, "win.adsl")


def _marker(text: str, mark: str = "MARK") -> int:
    (line,) = [i for i, s in enumerate(text.splitlines(), 1) if f"# {mark}" in s]
    return line


# ----------------------------------------------------------------------------- scans and prod


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("call", ["cumsum", "cumprod"])
def test_scan_interpreter_matches_torch(call, reverse, exclusive):
    flags = (", reverse=True" if reverse else "") + (", exclusive=True" if exclusive else "")
    k = _k(f"store(y[r, :], {call}(load(x[r, :]), axis=1{flags}))")
    x = torch.rand(7, 29) + 0.5
    y = torch.empty_like(x)
    interpreter.run(k, {"x": x, "m": torch.zeros(7, 29, dtype=torch.uint8), "y": y}, num_cores=3, tile=64)
    xs = x.flip(1) if reverse else x
    ref = xs.cumsum(1) if call == "cumsum" else xs.cumprod(1)
    if exclusive:
        ref = torch.cat([torch.full_like(ref[:, :1], 0.0 if call == "cumsum" else 1.0), ref[:, :-1]], dim=1)
    torch.testing.assert_close(y, ref.flip(1) if reverse else ref)


def test_masked_scan_and_prod_in_the_interpreter():
    k = _k("xt = load(x[r, :])\nstore(y[r, :], cumsum(xt * cast(load(m[r, :]), f32), axis=1) + prod(xt, axis=1))")
    x, m = torch.rand(5, 11) + 0.5, torch.randint(0, 2, (5, 11), dtype=torch.uint8)
    y = torch.empty_like(x)
    interpreter.run(k, {"x": x, "m": m, "y": y})
    torch.testing.assert_close(y, (x * m).cumsum(1) + x.prod(1, keepdim=True))


@pytest.mark.parametrize("body,code,msg", [
    ("store(y[r, :], cumsum(load(x[r, :])))", "ARGS", "takes one value, axis="),
    ("store(y[r, :], cumsum(load(x[r, :]), axis=0))", "UNSUPPORTED", "last axis"),
    ("store(y[r, :], cumsum(load(x[r, :]), axis=1, reverse=1))", "ARGS", "True or False"),
    ("store(y[r, :], cumsum(load(x[r, :]), axis=1, inclusive=True))", "ARGS", "optionally reverse="),
    ("store(y[r, :], load(x[r, :]) * prod(load(x[r, :])))", "ARGS", "needs axis=1"),
    ("store(y[r, :], cumsum(cast(load(m[r, :]), i32), axis=1))", "DTYPE-UNSUPPORTED", "'cumsum' does not support i32"),
])
def test_scan_errors_are_located(body, code, msg):
    d = _err(body).diagnostics[0]
    assert d.code == code and msg in d.message, d.render()
    assert d.span.file == "win.adsl" and d.span.line == 5


def test_scan_on_a_flat_tile_is_a_type_error():
    head = '@kernel\ndef k(x: Tensor[f32, "N"], y: Tensor[f32, "N"]):\n    for blk in split(N, cores=AIV):\n' \
           '        for t in tile(blk, size=auto, buffers=2):\n'
    d = _err("store(y[t], cumsum(load(x[t]), axis=1))", head).diagnostics[0]
    assert d.code == "TYPE" and "whole rows" in d.message and "split the rows" in d.hint


def test_scans_lower_to_vector_instructions_and_prod_to_a_scalar_loop():
    k = _k("xt = load(x[r, :])\nkeep = cast(load(m[r, :]), f32)\n"
           "store(y[r, :], cumsum(xt * keep, axis=1, reverse=True, exclusive=True) * prod(xt, axis=1))")
    project, ctx = lower(k)
    cpp = project.files["k_kernel.cpp"]
    # the reverse scan's tables (built once, before the tile loop), the transposing gathers, the log-step scan
    assert "Adds(lane, lane, U * (64 * S - 1), 64);" in cpp and "Brcb(laneBlocks, lane, 8," in cpp  # whole rows
    assert "Adds(lane, lane, U * (128 * S - 1), 128);" in cpp  # the chunked variant: segments of 128
    assert "Brcb(colBlocks, col," in cpp
    assert "Gather(a, t, fwd, 0, 64 * P);" in cpp and "for (uint32_t step = 0; step < 11; ++step) {" in cpp
    assert "Gather(tmp1[i * rowPitch_], scanTmp_rev, back, 0, n);" in cpp  # exclusive: the row above (base 0)
    assert "comp = (u - acc) - y;" in cpp  # the segment offsets (Kahan)
    assert "BinaryRepeatParams(1, 1, 1, static_cast<uint8_t>(P / 8), static_cast<uint8_t>(P / 8), 0)" in cpp
    assert "acc *= static_cast<float>(xLocal.GetValue(i * rowPitch_ + j));" in cpp  # prod per row: the tail past the blocks
    names = {b.name: b for b in ctx.lowered.body[0].body[0].buffers_decl}
    # the product's f32 row (its halving tree of Mul), no ReduceSum scratch
    assert [n for n in names if n.startswith("reduce")] == ["reduceTmp_f32"], names
    assert names["scanTmp_rev"].layout is ir.Layout.SCAN and "scanTmp_fwd" not in names
    assert "Cast(" in cpp and "LocalTensor<half>" in cpp  # u8 -> f32 goes through f16 (A2 Cast has no u8 -> f32)


# ----------------------------------------------------------------------------- pooling


@pytest.mark.parametrize("op", ["max_pool", "avg_pool"])
@pytest.mark.parametrize("rank", [1, 2, 3])
def test_pool_interpreter_matches_torch(op, rank):
    spatial = ["L"] if rank == 1 else ["H", "W"] if rank == 2 else ["D", "H", "W"]
    text = (f'@kernel\ndef k(x: Tensor[f32, "N, C, {", ".join(spatial)}"], '
            f'y: Tensor[f32, "N, C, {", ".join("O" + s for s in spatial)}"], ks: i32 = 3):\n'
            "    for blk in split(N * C, cores=AIV):\n        for p in tile(blk, size=auto, buffers=2):\n"
            f"            store(y[p], {op}(load(x[p]), kernel=ks, stride=2, padding=1))\n")
    k = parse_text(text, "pool.adsl")[0].instantiate()
    assert k.body[0].body[0].shape == ir.PlaneTiles(rank)
    x = torch.randn(2, 3, *[9, 8, 7][:rank])
    fn = getattr(torch.nn.functional, f"{op}{rank}d")
    ref = fn(x, 3, 2, 1)
    y = torch.empty_like(ref)
    interpreter.run(k, {"x": x, "y": y}, {"ks": 3}, num_cores=4, tile=50)
    torch.testing.assert_close(y, ref)
    if op == "max_pool":  # dilated windows: taps 2 apart
        k2 = parse_text(text.replace("padding=1)", "padding=1, dilation=2)"), "pool.adsl")[0].instantiate()
        ref = fn(x, 3, 2, 1, dilation=2)
        y = torch.empty_like(ref)
        interpreter.run(k2, {"x": x, "y": y}, {"ks": 3}, num_cores=4, tile=50)
        torch.testing.assert_close(y, ref)


@pytest.mark.parametrize("body,code,msg,hint", [
    ("store(y[p], max_pool(load(x[p])))", "ARGS", "kernel=", "max_pool(xt, kernel="),
    ("store(y[p], max_pool(load(x[p]), kernel=2.5))", "TYPE", "integer literal or an integer scalar", "i32 = 2"),
    ("store(y[p], max_pool(load(x[p]), kernel=alpha))", "TYPE", "integer literal or an integer scalar", "i32"),
    ("store(y[p], max_pool(load(x[p]) * 2.0, kernel=ks))", "UNSUPPORTED", "only feed max_pool/avg_pool", "store(y[p]"),
    ("store(y[p], load(x[p]))", "TYPE", "storing input planes into pooled planes", "max_pool(...)"),
    ("store(y[p], max_pool(max_pool(load(x[p]), kernel=2), kernel=2))", "TYPE", "needs a loaded plane", "split(N * C"),
    ("store(y[p], max_pool(load(v[p]), kernel=2))", "INDEX", "needs a tensor [N, C, ...]", None),
    ("store(y[p], avg_pool(load(x[p]), kernel=2, dilation=2))", "ARGS", "optionally padding=, stride=",
     "avg_pool has no dilation"),
])
def test_pool_errors_are_located(body, code, msg, hint):
    d = _err(body, PLANES).diagnostics[0]
    assert d.code == code and msg in d.message, d.render()
    assert d.span.file == "win.adsl" and d.span.line == 6
    assert hint is None or hint in d.hint, d.hint


def test_plane_tiles_are_sized_at_run_time():
    text = PLANES.replace("size=auto", "size=256") + "            store(y[p], max_pool(load(x[p]), kernel=ks))\n"
    with pytest.raises(DslError) as e:
        parse_text(text, "win.adsl")[0].instantiate()
    assert e.value.codes == ["ARGS"] and "size=auto" in e.value.diagnostics[0].message


@pytest.mark.parametrize("call,msg,hint", [
    ("max_pool(load(x[p]), kernel=3, stride=2, padding=2)  # MARK", "padding=2 is more than half the kernel",
     "padding <= 1"),
    ("avg_pool(load(x[p]), kernel=0)  # MARK", "kernel=0 must be at least 1", "at least one element"),
    ("avg_pool(load(x[p]), kernel=2, stride=0)  # MARK", "stride=0 must be at least 1", "stride=kernel"),
    ("max_pool(load(x[p]), kernel=2, dilation=0)  # MARK", "dilation=0 must be at least 1", "adjacent"),
    ("max_pool(load(x[p]), kernel=ks, stride=st, padding=pad)  # MARK", "(the default of parameter 'pad')",
     "padding <= 0"),
])
def test_pool_params_are_checked_at_the_dsl_line(call, msg, hint):
    head = PLANES.replace("ks: i32 = 3", "ks: i32 = 1") if "default" in msg else PLANES
    text = head + f"            store(y[p], {call.replace('  # MARK', '')})  # MARK\n"
    k = parse_text(text, "win.adsl")[0].instantiate()
    with pytest.raises(DslError) as e:
        lower(k)
    d = e.value.diagnostics[0]
    assert d.code == "POOL-PARAMS" and msg in d.message and hint in d.hint, d.render()
    assert d.span.line == _marker(text)
    assert "Traceback" not in e.value.render()


def test_pool_params_bound_at_run_time_are_checked_before_launch():
    k = _k("store(y[p], max_pool(load(x[p]), kernel=ks, stride=st, padding=pad))", PLANES)
    sym = {"N": 2, "C": 3, "H": 9, "W": 9, "OH": 5, "OW": 5, "B": 1}
    check_pool_binding(k, {"ks": 3, "st": 2, "pad": 1, "alpha": 0.5}, sym)
    with pytest.raises(DslError) as e:
        check_pool_binding(k, {"ks": 3, "st": 2, "pad": 2, "alpha": 0.5}, sym)
    assert e.value.codes == ["POOL-PARAMS"] and "Model attribute 'pad'" in e.value.diagnostics[0].message
    with pytest.raises(DslError) as e:
        check_pool_binding(k, {"ks": 3, "st": 2, "pad": 1, "alpha": 0.5}, {**sym, "OW": 4})
    assert e.value.codes == ["BINDING"] and "OW=4" in e.value.diagnostics[0].message


def test_pooling_emits_vector_taps_and_host_tiling():
    adsl = REPO / "examples/pooling/avg_pool3d.adsl"
    kernel = load_file(adsl)[0].instantiate({"T": "f16"})
    project, _ = lower(kernel, "ascend910b1", adsl.name)
    cpp, tiling = project.files["avg_pool3d_kernel.cpp"], project.files["avg_pool3d_tiling.h"]
    assert "const float scale = 1.0f / static_cast<float>(k * k * k);" in cpp
    # outer-dim taps: a chunk's 16-bit input rows widened to f32 in one Cast, then per (depth tap, row tap) one
    # level-0 Add per 256-byte column group whose repeats are the chunk's output rows (PoolRows)
    assert "Cast(poolT, xLocal[static_cast<uint32_t>((slice + a) * inWp_)], RoundMode::CAST_NONE" in cpp
    assert "PoolRows(poolU, (rlo - c) * poolPitch_ + poolM_, poolT," in cpp
    assert "Add(dst[at], dst[at], src[from], mask, rep, BinaryRepeatParams(1, 1, 1, dRep, dRep, sRep));" in cpp
    assert "Muls(dst[at], src[from], static_cast<float>(1.0f), mask, rep, UnaryRepeatParams(1, 1, dRep, sRep));" in cpp
    assert "DataCopyPad(xLocal[static_cast<uint32_t>(((0) + c) * inWp_)]" in cpp
    # 3-D: a tile may be a band of dim-1 rows of one output slice: the band's rows of each input slice it reads
    assert "DataCopyPad(xLocal[static_cast<uint32_t>(((d * sliceRows) + c) * inWp_)]" in cpp
    assert "for (uint64_t o1 = 0; o1 < outDim1_; o1 += band1Rows_)" in cpp and "band1Rows" in tiling
    # last-dim taps: one Gather per tap over the chunk's output rows (offsets (r * pitch + j * stride) * 4), accumulated
    # in f32, scaled, rounded to half
    assert "Gather(poolTap, poolU, poolOff, base, cnt);" in cpp and "Add(poolAcc, poolAcc, poolTap, static_cast<int32_t>(cnt));" in cpp
    assert "Muls(poolAcc, poolAcc, scale, static_cast<int32_t>(cnt));" in cpp
    assert "Cast(yLocal[outAt + c0], poolAcc, RoundMode::CAST_RINT, cnt);" in cpp
    assert "CreateVecIndex(off, static_cast<int32_t>(0)" in cpp and "Muls(off, off, static_cast<int32_t>(s * 4)" in cpp
    assert "Adds(off[r * poolCols_], off, static_cast<int32_t>(r * poolPitch_ * 4)" in cpp
    # 3-D with dilation: a tile may be one output slice holding only its depth taps' slices (one strided copy)
    assert "if (sparse_) {" in cpp and "(sparse_ ? j : w0 - lo) * nIn" in cpp and "t->sparse = sparse ? 1u : 0u;" in tiling
    assert "GetValue" not in cpp.split("Compute(uint32_t planes")[1]  # no scalar read in the taps
    assert "DataCopyPad(yGm[base + c * rowLen], yLocal[static_cast<uint32_t>(c * outWp_)]" in cpp  # pitched rows out
    assert "pad > k / 2" in tiling and "bandRows" in tiling and "pitch" in tiling and "poolScratch" in tiling
    assert project.manifest["tile_unit"] == "planes"
    assert {b["position"] for b in project.manifest["buffers"]} == {"VECIN", "VECOUT"}
    # 310P (no DataCopyPad): every tap on the scalar unit, plain contiguous copies
    p310, _ = lower(kernel, "ascend310p", adsl.name)
    assert "poolRow" not in p310.files["avg_pool3d_kernel.cpp"]
    assert "CopyGmToUb(xLocal, xGm[p0 * inPlane_ + lo * inInner_]" in p310.files["avg_pool3d_kernel.cpp"]
    # 1-D pooling: a plane (or the band of it a tile reads) is one row; the band's offset shifts the taps
    one = REPO / "examples/pooling/max_pool1d.adsl"
    cpp1 = lower(load_file(one)[0].instantiate(), "ascend910b1", one.name)[0].files["max_pool1d_kernel.cpp"]
    assert "const int64_t shift = static_cast<int64_t>(o0) * s - pad - lo;" in cpp1
    assert "Max(outRow[c0], outRow[c0], poolTap, cn);" in cpp1 and "GetValue" not in cpp1.split("Compute(uint32_t planes")[1]


#: What the host tiling sets for a plane loop, after the block count (npu_harness.tiling_probe).
_POOL_FIELDS = ("blockLength", "tileLength", "bandRows", "inTileElems", "outTileElems", "bufferNum")


@pytest.mark.parametrize("example,dims,params,expect", [
    # 16 x 32 x 64^3, kernel 3, stride 2, padding 1, dilation 3 (KernelBench 43): a plane (1 MB) does not fit UB;
    # a band of output slices fits only single-buffered and reads 9 slices for 2, so a tile is one output slice
    # with its 3 depth taps' slices alone (sparse), double-buffered
    ("max_pool3d", "16 32 64 64 64 30 30 30", (3, 2, 1, 3),
     lambda b: b[0] == 47 and b[2] == 1 and b[3] == 1 and b[4] == 3 * 64 * 64 and b[6] == 2),
    # the same without dilation (avg_pool3d, KernelBench 46)
    ("avg_pool3d", "16 32 64 64 64 32 32 32", (3, 2, 1),
     lambda b: b[0] == 47 and b[2] == 1 and 0 < b[3] < 32 and b[6] == 2),
    # 16 x 32 x 128^2 (KernelBench 42): whole planes, several per tile
    ("max_pool2d", "16 32 128 128 64 64", (2, 2, 1, 3),
     lambda b: b[0] == 47 and b[2] >= 1 and b[3] == 64),
    # output size that does not match the window: refused (0 blocks)
    ("max_pool2d", "16 32 128 128 65 64", (2, 2, 1, 3),
     lambda b: b[0] == 0),
    # dilation 0: refused
    ("max_pool2d", "16 32 128 128 65 65", (2, 2, 1, 0),
     lambda b: b[0] == 0),
    # one output row's windows (3 input rows of 100000 floats) do not fit UB: refused, reported as TILING
    ("max_pool2d", "1 1 3 100000 1 99998", (3, 1, 0, 1),
     lambda b: b[0] == 0),
    # 3 input rows of 8000 floats: only single-buffered (96 KB + 32 KB output row + 32 KB f32 row scratch + 16 KB
    # Gather offsets and tap row)
    ("max_pool2d", "1 1 3 8000 1 7998", (3, 1, 0, 1),
     lambda b: b[0] == 1 and b[3] == 1 and b[6] == 1),
    # padding > kernel / 2: refused
    ("avg_pool1d", "16 32 128 66", (2, 2, 2), lambda b: b[0] == 0),
])
def test_host_tiling_at_benchmark_scale(example, dims, params, expect):
    adsl = REPO / f"examples/pooling/{example}.adsl"
    project, _ = lower(load_file(adsl)[0].instantiate(), "ascend910b1", adsl.name)
    m = project.manifest
    symbols = dict(zip(m["symbols"], (int(v) for v in dims.split()), strict=True))
    scalars = {s["name"]: v for s, v in zip(m["scalars"], params, strict=True)}
    t = run_tiling(project, "ascend910b1", symbols, scalars, 48, _POOL_FIELDS)
    fields = [t["blocks"], *(t[f] for f in _POOL_FIELDS)]
    assert expect(fields), fields
    if fields[0]:
        assert fields[6] * 4 * (fields[4] + fields[5]) <= 184 * 1024  # both queues fit the UB budget


@pytest.mark.slow
def test_scans_run_on_the_vector_unit_without_scalar_steps():
    from npu_harness.validate import load_task_for, validate_sim

    adsl = REPO / "examples/math/cumsum.adsl"
    kernel = load_file(adsl)[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    run = load_task_for(kernel, adsl.with_suffix(".py"), overrides={"batch_size": 4, "dim": 300})
    res = validate_sim(kernel, ctx.lowered, project, ctx, run)
    assert res.ok
    blocks = res.counters["blocks"]
    # P = 8 segment columns per row (ceil(300 / 512) * 8): their offsets by vector log-steps (session 33), no
    # GetValue / SetValue; Gathers per row (one row per core): in and out, the 3 log-steps and the exclusive shift
    assert sum(b["ub_get"] + b["ub_set"] for b in blocks) == 0
    assert all(b["vec"]["Gather.b32"][0] == 2 + 3 + 1 for b in blocks), blocks[0]["vec"]
    assert res.report.bottleneck != "S"


def test_cap_scales_sizes_but_not_the_window():
    from npu_harness.task import run_task

    run = run_task(REPO / "examples/pooling/max_pool3d.py", cap=200000)
    window = {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 3}
    assert run.attrs == window and {k: run.constants[k] for k in window} == window, run.constants
    assert run.constants["depth"] < 64 and run.constants["channels"] < 32, run.constants
    assert run.inputs[0].numel() <= 200000


def test_language_reference_examples_instantiate():
    import re

    text = (REPO / "docs/language.md").read_text()
    names = []
    for i, block in enumerate(re.findall(r"```python\n(.*?)```", text, re.DOTALL)):
        if "@kernel" in block:
            names += [k.instantiate().name for k in parse_text("from ascend_dsl import kernel\n" + block, f"doc{i}")]
    assert {"masked_cumsum", "max_pool2d", "upsample_bilinear2d"} <= set(names), names


def test_bf16_scans_and_pools_widen_to_f32_but_bf16_vector_math_is_rejected():
    bf_rows = ROWS.replace("x: Tensor[f32", "x: Tensor[bf16").replace("y: Tensor[f32", "y: Tensor[bf16")
    lower(_k("store(y[r, :], cumsum(load(x[r, :]), axis=1, exclusive=True))", bf_rows))
    with pytest.raises(DslError) as e:
        lower(_k("store(y[r, :], cumsum(load(x[r, :]), axis=1) * 2.0)", bf_rows))
    assert e.value.codes == ["DTYPE-UNSUPPORTED"] and "'mul' on bf16" in e.value.diagnostics[0].message
    bf_planes = PLANES.replace("x: Tensor[f32", "x: Tensor[bf16").replace("y: Tensor[f32", "y: Tensor[bf16")
    k = _k("store(y[p], avg_pool(load(x[p]), kernel=ks, stride=st, padding=pad))", bf_planes)
    assert "Cast(yLocal[outAt + c0], poolAcc, RoundMode::CAST_RINT, cnt);" in lower(k)[0].files["k_kernel.cpp"]
    with pytest.raises(DslError) as e:
        lower(k, "ascend310p")
    assert set(e.value.codes) == {"DTYPE-UNSUPPORTED"}  # no bf16 on 310P at all


@pytest.mark.parametrize("example,dims,params,band1", [
    # issue 16's 16 x 32 x 128 x 128 x 256 volumes: one output depth slice reads 7 (max, dilation 3) or 3 (avg)
    # input slices of 128 KB, so a tile is a band of output rows (dim 1) of one output slice
    ("max_pool3d", "16 32 128 128 256 62 62 126", (3, 2, 1, 3), lambda r: 0 < r < 62),
    ("avg_pool3d", "16 32 128 128 256 64 64 128", (3, 2, 1), lambda r: 0 < r < 64),
    # planes that fit: whole dim-1 extents
    ("avg_pool3d", "16 32 64 64 64 32 32 32", (3, 2, 1), lambda r: r == 32),
])
def test_3d_pooling_tiles_are_bands_of_one_output_slice_at_benchmark_scale(example, dims, params, band1):
    adsl = REPO / f"examples/pooling/{example}.adsl"
    for dt in ("f32", "f16"):
        project, _ = lower(load_file(adsl)[0].instantiate({"T": dt}), "ascend910b1", adsl.name)
        m = project.manifest
        symbols = dict(zip(m["symbols"], (int(v) for v in dims.split()), strict=True))
        scalars = {s["name"]: v for s, v in zip(m["scalars"], params, strict=True)}
        t = run_tiling(project, "ascend910b1", symbols, scalars, 48, (*_POOL_FIELDS, "band1Rows"))
        assert t["blocks"] == 47 and band1(t["band1Rows"]), t
        if t["band1Rows"] < symbols["OH"]:
            assert t["tileLength"] == 1 and t["bandRows"] == 1, t


def _probe(example: str, dims: str, params: tuple, fields: tuple[str, ...] = ()) -> dict:
    adsl = REPO / f"examples/pooling/{example}.adsl"
    project, _ = lower(load_file(adsl)[0].instantiate(), "ascend910b1", adsl.name)
    m = project.manifest
    symbols = dict(zip(m["symbols"], (int(v) for v in dims.split()), strict=True))
    scalars = {s["name"]: v for s, v in zip(m["scalars"], params, strict=True)}
    return run_tiling(project, "ascend910b1", symbols, scalars, 48, fields)


def test_tiling_message_says_which_cause_with_the_bytes_and_what_fits():
    # over UB: the smallest tile's bytes, the budget, and the widest last dim that fits (which then launches)
    t = _probe("max_pool2d", "1 1 3 10300 1 5150", (2, 2, 1, 3), ("needBytes", "budgetBytes", "fitWidth"))
    assert t["blocks"] == 0 and t["needBytes"] > t["budgetBytes"] == 188416, t
    fit = t["fitWidth"]
    assert 0 < fit < 10300 and (f"needs {t['needBytes']} bytes of Unified Buffer, over the 188416-byte budget; a last "
                                f"spatial dim of at most {fit} elements would fit") in t["why"], t
    for w, launches in ((fit, True), (fit + 1, False)):
        ow = (w + 2 - 4) // 2 + 1
        assert (_probe("max_pool2d", f"1 1 3 {w} 1 {ow}", (2, 2, 1, 3))["blocks"] > 0) is launches, w
    # 3-D: the smallest tile is one output row of one dim-1 row of one output slice
    t = _probe("max_pool3d", "1 1 16 16 30000 6 6 14998", (3, 2, 1, 3))
    assert t["blocks"] == 0 and "in one dim-1 row of one output slice" in t["why"] and "would fit" in t["why"], t
    # an output size that does not match the window: which dim, its size and the window's
    t = _probe("max_pool2d", "16 32 128 128 65 64", (2, 2, 1, 3))
    assert t["why"] == "the output's spatial dim 0 is 65, but kernel=2, stride=2, padding=1, dilation=3 give 64", t
    # an invalid window
    t = _probe("max_pool2d", "16 32 128 128 65 65", (2, 2, 1, 0))
    assert t["why"].startswith("invalid pooling window: kernel=2, stride=2, padding=1, dilation=0 (PyTorch needs"), t


def test_tiling_failure_reaches_the_launch_and_the_cli(tmp_path, capsys):
    from npu_harness.cli import main as lower_main

    adsl = REPO / "examples/pooling/max_pool2d.adsl"
    project, _ = lower(load_file(adsl)[0].instantiate(), "ascend910b1", adsl.name)
    from npu_harness.sim.driver import driver_source

    assert "ComputeTilingWhy(tiling, why, sizeof why);" in driver_source(project.view)  # the emulator's launch
    code = lower_main([str(adsl), "--validate", "tiling", "-o", str(tmp_path), "--set", "batch_size=1", "--set",
                       "channels=1", "--set", "height=3", "--set", "width=100000"])
    out = capsys.readouterr().out
    assert code == 1 and "a launch reports TILING: the smallest pooling tile" in out and "would fit" in out, out


@pytest.mark.slow
@pytest.mark.parametrize("rank", [1, 2])  # rows widened to f32 by vector Cast, taps gathered in f32
def test_bf16_pooling_in_the_emulator(tmp_path, rank):
    from npu_harness.validate import load_task_for, validate_sim

    dims, shape = ("L", "(3, 5, 41)") if rank == 1 else ("H, W", "(3, 5, 17, 23)")
    out = ", ".join("O" + d.strip() for d in dims.split(","))
    (tmp_path / "bfp.adsl").write_text(
        'from ascend_dsl import kernel, Tensor, bf16, i32\n\n\n@kernel\n'
        f'def bfp(x: Tensor[bf16, "N, C, {dims}"], y: Tensor[bf16, "N, C, {out}"], kernel_size: i32 = 3):\n'
        "    for blk in split(N * C, cores=AIV):\n        for p in tile(blk, size=auto, buffers=2):\n"
        "            store(y[p], max_pool(load(x[p]), kernel=kernel_size, stride=2, padding=1, dilation=2))\n")
    (tmp_path / "bfp.py").write_text(
        "import torch\nfrom torch import nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.kernel_size = 3\n\n    def forward(self, x):\n"
        f"        return torch.nn.functional.max_pool{rank}d(x, 3, 2, 1, dilation=2)\n\n\n"
        f"def get_inputs():\n    return [torch.randn{shape}.to(torch.bfloat16)]\n\n\n"
        "def get_init_inputs():\n    return []\n")
    kernel = load_file(tmp_path / "bfp.adsl")[0].instantiate()
    project, ctx = lower(kernel, "ascend910b1", "bfp.adsl")
    res = validate_sim(kernel, ctx.lowered, project, ctx, load_task_for(kernel, tmp_path / "bfp.py"))
    assert res.ok, [c.describe() for c in res.comparisons]


def _sizes(b: int, c: int, *spatial: int, **window: int) -> dict:
    names = ("height", "width") if len(spatial) == 2 else ("depth", "height", "width")
    return {"batch_size": b, "channels": c, **dict(zip(names, spatial, strict=True)), **window}


@pytest.mark.slow
@pytest.mark.parametrize("example,dtype,sizes,fields", [
    # output rows wider than a chunk (4500 > 2048): column chunks of the Gathers, one PoolRows instruction per row
    ("max_pool2d", "f32", _sizes(1, 2, 5, 4500, kernel_size=3, stride=1, padding=1, dilation=1),
     lambda t: t["poolRows"] == 1 and t["poolCols"] == 2048),
    # input rows of one output row's taps more than 255 blocks apart (2 x 1104 floats): one instruction per row
    ("max_pool2d", "f32", _sizes(1, 2, 40, 1100, kernel_size=3, stride=2, padding=1, dilation=1),
     lambda t: t["poolRows"] == 3),
    # 300 output rows in chunks of 85 (the rows whose first taps are padding at both ends), f16 max in half
    ("max_pool2d", "f16", _sizes(1, 3, 300, 20, kernel_size=3, stride=1, padding=1, dilation=2),
     lambda t: t["poolRows"] == 64 and t["poolUElems"] % 16 == 0),
    # avg of f16: the chunk's rows widened to f32 (poolT), odd sizes
    ("avg_pool2d", "f16", _sizes(1, 3, 61, 45, kernel_size=3, stride=2, padding=1), lambda t: t["poolTElems"] > 0),
    # ... on rows wider than a chunk (one output row per chunk): each tap's input row widened alone (fits UB where
    # widening the window's 4 rows would not; found by the fuzzer)
    ("avg_pool2d", "f16", _sizes(1, 2, 5, 6938, kernel_size=4, stride=2, padding=2),
     lambda t: t["poolRows"] == 1 and t["poolTElems"] == 6944),
    # 3-D with dilation where one output slice's taps do not fit double-buffered: bands of dim-1 rows holding only
    # the depth taps' slices (sparse), rows of 301 halves (one DataCopyPad block per row)
    ("max_pool3d", "f16", _sizes(1, 2, 9, 100, 301, kernel_size=3, stride=2, padding=1, dilation=2),
     lambda t: t["sparse"] == 1 and t["band1Rows"] < 50),
    # 3-D whole 64-wide rows with dilation: one output slice per tile, its 3 taps' slices in one strided copy
    ("max_pool3d", "f32", _sizes(1, 2, 20, 64, 64, kernel_size=3, stride=2, padding=1, dilation=3),
     lambda t: t["sparse"] == 1 and t["band1Rows"] == 30 and t["bufferNum"] == 2),
    # small odd 3-D planes, several per tile
    ("avg_pool3d", "f32", _sizes(2, 3, 7, 13, 11, kernel_size=3, stride=1, padding=1), lambda t: t["tileLength"] >= 1),
])
def test_chunked_pool_paths_in_the_emulator(example, dtype, sizes, fields):
    from npu_harness.validate import load_task_for, validate_sim

    adsl = REPO / f"examples/pooling/{example}.adsl"
    kernel = load_file(adsl)[0].instantiate({"T": dtype})
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    run = load_task_for(kernel, adsl.with_suffix(".py"), overrides=sizes)
    res = validate_sim(kernel, ctx.lowered, project, ctx, run)
    assert res.ok, [c.describe() for c in res.comparisons]
    x, y = kernel.tensors[0], kernel.tensors[1]
    k, st, pad, dil = (sizes["kernel_size"], sizes["stride"], sizes["padding"], sizes.get("dilation", 1))
    ins = tuple(run.inputs[0].shape)
    outs = ins[:2] + tuple((n + 2 * pad - dil * (k - 1) - 1) // st + 1 for n in ins[2:])
    symbols = {**dict(zip(x.shape, ins, strict=True)), **dict(zip(y.shape, outs, strict=True))}
    m = project.manifest
    scalars = {s["name"]: sizes[s["name"]] for s in m["scalars"]}
    names = ("poolRows", "poolCols", "poolUElems", "poolTElems", "tileLength", "bufferNum")
    names += ("sparse", "band1Rows") if example.endswith("3d") else ()
    t = run_tiling(project, "ascend910b1", {s: symbols[s] for s in m["symbols"]}, scalars, 48, names)
    assert fields(t), t
