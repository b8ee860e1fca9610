"""Rows longer than the Unified Buffer: the chunked mode of row kernels (lowering/passes/plan_chunks.py,
lowering/emit/chunk.py). Planning, the emitted passes, the host tiling at benchmark shapes, emulator
runs against PyTorch, and the kernels that cannot run in chunks (TILING naming why)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from ascend_dsl import ir, load_file, parse_text
from lowering import lower
from npu_harness.task import TaskRun
from npu_harness.tiling_probe import run_tiling
from npu_harness.validate import validate_sim

REPO = Path(__file__).resolve().parent.parent


def _example(name: str, **dtypes):
    adsl = REPO / "examples" / f"{name}.adsl"
    kernel = load_file(adsl)[0].instantiate(dtypes)
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    return kernel, project, ctx


def _row_loop(lowered: ir.Kernel) -> ir.TileLoop:
    return next(s for s in ir.walk(lowered.body) if isinstance(s, ir.TileLoop))


def _plan(lowered: ir.Kernel) -> ir.ChunkPlan:
    plan = _row_loop(lowered).shape.chunked
    assert isinstance(plan, ir.ChunkPlan), plan
    return plan


# ----------------------------------------------------------------------------- planning and emitted code


@pytest.mark.parametrize("name,passes,x_reads", [
    ("activation/softmax", 2, 2),            # max and sum(exp(x - max)) online | exp, divide, store
    ("activation/log_softmax", 2, 2),
    ("normalization/layer_norm", 2, 2),      # mean and variance in one pass (chunk_moments.py) | normalise, store
    ("normalization/instance_norm", 2, 2),
    ("normalization/rms_norm", 2, 2),        # mean of squares | scale, store
    ("normalization/batch_norm", 1, 1),      # per-channel scalars only: one streaming pass
    ("reduce/mean_dim", 1, 1),               # one fold, then one element per row
    ("reduce/prod_dim", 1, 1),               # the chunk's product on the scalar unit, folded by Mul
])
def test_passes_follow_reduction_depth(name, passes, x_reads):
    _, project, ctx = _example(name)
    plan = _plan(ctx.lowered)
    assert len(plan.passes) == passes
    code = project.files[f"{project.name}_kernel.cpp"]
    assert f"ChunkPass{passes - 1}()" in code and f"ChunkPass{passes}()" not in code
    # every pass re-reads the row from GM, chunk by chunk, at the row's offset
    assert code.count("CopyGmToUb(xLocal, xGm[rowOffset_ + offset], count);") == x_reads
    assert all(p.max_chunk % 256 == 0 and p.max_chunk >= 4096 for p in plan.passes)


def test_whole_row_path_is_unchanged_beside_the_chunked_one():
    _, project, _ = _example("activation/softmax")
    code = project.files["softmax_kernel.cpp"]
    # the chunked path is selected by the tiling field; the whole-row loop is the same as before
    assert "if (chunkLength_ > 0) {" in code and "ProcessChunked();" in code
    assert "CopyRowsGmToUb(xLocal, xGm[offset * rowLen_], count, rowLen_, rowPitch_);" in code
    tiling = project.files["softmax_tiling.h"]
    assert "uint32_t chunkLength;" in tiling and "t->chunkLength = 0;" in tiling


def test_per_row_values_are_scalars_between_passes():
    _, project, _ = _example("normalization/layer_norm")
    code = project.files["layer_norm_kernel.cpp"]
    process = code[code.index("void ProcessChunked()"):code.index("void ChunkReset()")]
    # the mean and M2 from one pass, var = M2 / D, then rsqrt(var + eps) on one vector element, before the last pass
    assert process.index("ChunkPass0();") < process.index("_t0Row_ = _t0MeanRow_;") < \
        process.index("1.0f / static_cast<float>(rowLen_)") < process.index("Rsqrt(math, math, 1);") < \
        process.index("ChunkPass1();")
    assert "ChunkPass2();" not in process
    # the row vectors are read chunk by chunk at the chunk's offset
    assert "CopyGmToUb(weightLocal, weightGm[offset], count);" in code


def test_per_channel_values_are_read_once_per_row():
    _, project, _ = _example("normalization/batch_norm")
    code = project.files["batch_norm_kernel.cpp"]
    assert "weightGm.GetValue((rowStart_ + row) % weightGmPeriod_)" in code


def test_accumulators_fold_rows_into_a_core_value():
    _, project, _ = _example("loss/cosine_similarity_loss")
    code = project.files["cosine_similarity_loss_kernel.cpp"]
    assert "totalCore_ += " in code and "accSlot_totalBuf.Get<float>().SetValue(0, totalCore_);" in code
    assert "blockLength_ = 0;  // the whole-row loop gets no rows" in code


# ----------------------------------------------------------------------------- host tiling at benchmark shapes


def _fields(ctx) -> list[str]:
    """The tiling fields of the chunk lengths: one per pass (chunkLength > 0 also selects the mode)."""
    return ["chunkLength" if k == 0 else f"chunkLength{k}" for k in range(len(_plan(ctx.lowered).passes))]


def _host_tiling(project, ctx, values: dict[str, int], cores: int, fields: list[str] | None = None,
                 scalars: dict[str, float] | None = None) -> dict[str, int]:
    """Only the emitted host tiling function (npu_harness.tiling_probe): blocks, blockLength, tileLength
    and `fields`, by default the chunk lengths of the first row loop."""
    fields = _fields(ctx) if fields is None else fields
    given = {s["name"]: (scalars or {}).get(s["name"], s["default"]) for s in project.manifest["scalars"]}
    return run_tiling(project, ctx.target.name, values, given, cores, ("blockLength", "tileLength", *fields))


@pytest.mark.parametrize("name,values,rows,row_len,group", [
    # benchmarks.md softmax: 1.5 MB rows walked by 16 groups of 3 cores, a 512 KB share each (emit/row_groups.py)
    ("activation/softmax", {"B": 4096, "D": 393216}, 4096, 393216, 3),
    ("normalization/instance_norm", {"N": 16, "C": 64, "H": 256, "W": 256}, 1024, 65536, 1),  # 256 KB planes
    ("normalization/batch_norm", {"N": 16, "C": 64, "H": 256, "W": 256}, 1024, 65536, 1),
])
def test_host_tiling_picks_chunks_at_benchmark_shapes(name, values, rows, row_len, group):
    _, project, ctx = _example(name)
    plan = _plan(ctx.lowered)
    t = _host_tiling(project, ctx, values, 48, [*_fields(ctx), *(("rowGroup", "colShare") if group > 1 else ())])
    per_core = -(-rows // (48 // group))
    assert t["blockLength"] == per_core and t["blocks"] == -(-rows // per_core) * group and t["tileLength"] == 1
    if group > 1:
        assert t["rowGroup"] == group and t["colShare"] == row_len // group
        row_len = t["colShare"]  # the chunks of a core's share
    for p, field in zip(plan.passes, _fields(ctx), strict=True):
        chunk = t[field]
        assert chunk % 256 == 0 and 4096 <= chunk <= p.max_chunk  # whole repeats, large DMA bursts
        assert sum(b.num * b.bytes_for(chunk) for b in p.loop.buffers_decl) + 32 <= ctx.target.ub_budget  # fits UB
        assert sum(b.num * b.bytes_for(p.max_chunk + 256) for b in p.loop.buffers_decl) + 32 > \
            ctx.target.ub_budget  # and the largest chunk is as large as fits
        chunks = -(-row_len // chunk)
        assert chunks == -(-row_len // p.max_chunk)  # as few chunks as the largest chunk allows, balanced
        assert chunks * chunk - row_len < chunks * 256


def _loop_fields(ctx) -> list[tuple[int, object, str]]:
    """(split loop, pass, tiling field) of every chunked pass of every row loop."""
    from lowering.emit.chunk import chunk_names

    return [(k, p, chunk_names(k, i)[1]) for k, t in enumerate(_row_loops(ctx.lowered))
            for i, p in enumerate(_plan_of(t).passes)]


def _plan_of(t: ir.TileLoop) -> ir.ChunkPlan:
    assert isinstance(t.shape.chunked, ir.ChunkPlan), t.shape.chunked
    return t.shape.chunked


@pytest.mark.parametrize("name", ["batch_norm_train", "group_norm"])
def test_host_tiling_chunks_every_split_loop_at_the_benchmark_shape(name):
    """[16, 64, 256, 256]: 1024 planes of 256 KB (f32); none fits UB in any of the three loops, so each
    loop runs one row at a time in its own chunked pass, with its own chunk length."""
    _, project, ctx = _example(f"normalization/{name}")
    fields = _loop_fields(ctx)
    assert sorted({k for k, _, _ in fields}) == [0, 1, 2]
    t = _host_tiling(project, ctx, {"N": 16, "C": 64, "H": 256, "W": 256}, 48,
                     [f for _, _, f in fields] + ["tileLength1", "tileLength2"])
    per_core = -(-1024 // 48)
    assert t["blockLength"] == per_core and t["blocks"] == -(-1024 // per_core)
    assert t["tileLength"] == t["tileLength1"] == t["tileLength2"] == 1
    for _, p, field in fields:
        chunk = t[field]
        assert chunk % 256 == 0 and 4096 <= chunk <= p.max_chunk
        assert sum(b.num * b.bytes_for(chunk) for b in p.loop.buffers_decl) + 32 <= ctx.target.ub_budget
        assert -(-65536 // chunk) == -(-65536 // p.max_chunk)  # as few chunks as fit, balanced
    # loop 2 (normalise and store) keeps more buffers per element than loop 0 (the sum): shorter chunks
    assert fields[2][1].max_chunk < fields[0][1].max_chunk


#: Planes of 100 x 110 floats: the sum (loop 0) and the squared deviations (loop 1) hold whole planes in UB;
#: normalising (loop 2: x and y double buffered) does not, and runs in chunks.
MIXED_PLANES = {"N": 2, "C": 30, "H": 100, "W": 110}


def test_host_tiling_decides_per_split_loop():
    _, project, ctx = _example("normalization/batch_norm_train")
    fields = _loop_fields(ctx)
    t = _host_tiling(project, ctx, MIXED_PLANES, 48, [f for _, _, f in fields] + ["tileLength1", "tileLength2"])
    assert t["chunkLength"] == 0 and t["chunkLength1_0"] == 0 and t["chunkLength2_0"] > 0
    assert t["tileLength"] >= 1 and t["tileLength1"] >= 1 and t["tileLength2"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("dt,hw,chunked", [
    ("f32", (100, 110), [False, False, True]),  # MIXED_PLANES: loops 0 and 1 whole planes, loop 2 chunked
    ("f16", (150, 150), [True, True, True]),    # f32 temporaries of 22500 elements: no loop holds a plane
])
def test_batch_norm_train_with_whole_and_chunked_split_loops(tmp_path, dt, hw, chunked):
    """60 planes over 48 cores (two per core on some: the chunked rows keep walking the slots)."""
    k, project, ctx = _example("normalization/batch_norm_train", T=dt)
    t = _host_tiling(project, ctx, {"N": 2, "C": 30, "H": hw[0], "W": hw[1]}, 48,
                     [f for _, _, f in _loop_fields(ctx) if f.endswith(("chunkLength", "_0"))])
    assert [t[f] > 0 for f in ("chunkLength", "chunkLength1_0", "chunkLength2_0")] == chunked
    torch.manual_seed(0)
    dtype = torch.float32 if dt == "f32" else torch.float16
    x = (torch.randn(2, 30, *hw) * 2 + 1).to(dtype)
    w, b = torch.rand(30) + 0.5, torch.randn(30)
    expect = torch.nn.functional.batch_norm(x.float(), None, None, w, b, training=True, eps=1e-5).to(dtype)
    res = validate_sim(k, ctx.lowered, project, ctx, TaskRun([x, w, b], [expect]), work_dir=tmp_path)
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])


@pytest.mark.slow
def test_group_norm_chunked_slots_with_several_rows_per_core(tmp_path):
    """60 planes of 150 x 150 floats (88 KB: no loop holds one in UB), 2 per core, 5 groups of 6
    channels: consecutive rows of a core fold into the same slot, and slots span cores."""
    k, project, ctx = _example("normalization/group_norm")
    fields = [f for _, _, f in _loop_fields(ctx)]
    t = _host_tiling(project, ctx, {"N": 2, "C": 30, "H": 150, "W": 150}, 48, fields,
                     {"num_groups": 5})
    assert all(t[f] > 0 for f in fields) and t["blockLength"] == 2, t
    torch.manual_seed(3)
    x = torch.randn(2, 30, 150, 150) * 3 + torch.arange(30.0).reshape(1, 30, 1, 1)
    w, b = torch.rand(30) + 0.5, torch.randn(30)
    expect = torch.nn.functional.group_norm(x, 5, w, b, 1e-5)
    res = validate_sim(k, ctx.lowered, project, ctx, TaskRun([x, w, b], [expect], attrs={"num_groups": 5}),
                       work_dir=tmp_path)
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])


#: Loop 0 folds every row into a scalar accumulator and a running max (combined across cores, then a
#: kernel-scope scalar); loop 1 uses them in chunked rows with two passes and a per-row store.
SCALAR_THEN_ROWS = '''@kernel
def k(x: Tensor[f32, "B, D"], y: Tensor[f32, "B, D"], m: Tensor[f32, "B"]):
    total = 0.0
    peak = -1.0e30
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            xt = load(x[r, :])
            total += sum(xt)
            peak = max(peak, max(xt))
    avg = total / (B * D)
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            xt = load(x[r, :]) - avg
            store(y[r, :], xt / (max(xt, axis=1) + peak))
            store(m[r], sum(xt * xt, axis=1))
'''


@pytest.mark.slow
def test_scalar_accumulators_then_chunked_rows(tmp_path):
    """100 rows of 20001 (3 per core), both loops chunked: the scalar accumulators fold each row into
    per-core floats, go through the usual combine and kernel-scope scalar, then loop 1 reads them."""
    k = parse_text(SCALAR_THEN_ROWS, "two.adsl")[0].instantiate()
    project, ctx = lower(k, "ascend910b1", "two.adsl")
    loops = _row_loops(ctx.lowered)
    assert [len(_plan_of(t).passes) for t in loops] == [1, 2]
    assert _plan_of(loops[0]).accumulators == (ir.Fold("total", ir.Combine.ADD), ir.Fold("peak", ir.Combine.MAX))
    t = _host_tiling(project, ctx, {"B": 100, "D": 20001}, 48, ["chunkLength", "chunkLength1_0"])
    assert t["chunkLength"] > 0 and t["chunkLength1_0"] > 0
    torch.manual_seed(1)
    x = torch.randn(100, 20001) + 0.25
    xc = x - x.sum() / x.numel()
    expect = [xc / (xc.amax(1, keepdim=True) + x.max()), (xc * xc).sum(1)]
    res = validate_sim(k, ctx.lowered, project, ctx, TaskRun([x], expect), work_dir=tmp_path)
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])


@pytest.mark.slow
def test_emulator_catches_a_slot_fold_before_the_row_is_done(tmp_path):
    """Planted bug: fold the row's sum into its slot before the pass over the row's chunks (the value of
    the previous row, or 0). The statistics, and so y, come out wrong."""
    k, project, ctx = _example("normalization/batch_norm_train")
    code = project.files["batch_norm_train_kernel.cpp"]
    fn = code[code.index("void ProcessChunked()"):code.index("void ProcessChunked1()")]
    # the pass (and the combine of a row split over a core group, lowering/emit/row_groups.py), then the fold
    start, at = fn.index("            ChunkPass0();\n"), fn.index("            // batch_norm_train.adsl:11: s[r] +=")
    end = fn.index("        }\n        PipeBarrier<PIPE_ALL>();")
    assert fn[start:at].count("ChunkPass") == 1 and fn[start:at].count("GroupCombine0();") == 1
    bad_fn = fn[:start] + fn[at:end] + fn[start:at] + fn[end:]
    bad = dataclasses.replace(project, files={**project.files, "batch_norm_train_kernel.cpp": code.replace(fn, bad_fn)})
    torch.manual_seed(2)
    x = torch.randn(2, 3, 300, 300) + torch.arange(6.0).reshape(2, 3, 1, 1)
    w, b = torch.rand(3) + 0.5, torch.randn(3)
    expect = torch.nn.functional.batch_norm(x, None, None, w, b, training=True, eps=1e-5)
    good = validate_sim(k, ctx.lowered, project, ctx, TaskRun([x, w, b], [expect]), work_dir=tmp_path / "good")
    assert good.ok, good.summary()
    res = validate_sim(k, ctx.lowered, bad, ctx, TaskRun([x, w, b], [expect]), work_dir=tmp_path / "bad")
    assert not res.ok and not res.comparisons[0].ok, res.summary()


def test_host_tiling_keeps_whole_rows_when_they_fit():
    _, project, ctx = _example("activation/softmax")
    t = _host_tiling(project, ctx, {"B": 4096, "D": 4096}, 48)
    assert t["chunkLength"] == 0 and t["tileLength"] >= 1 and t["blocks"] == 48


# ----------------------------------------------------------------------------- emulator runs


MIXED = '''@kernel
def k(x: Tensor[f32, "B, D"], w: Tensor[f32, "D"], s: Tensor[f32, "B"], y: Tensor[f32, "B, D"],
      m: Tensor[f32, "B"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            xt = load(x[r, :])
            lo = min(xt, axis=1)
            z = (xt - lo) / (max(xt, axis=1) - lo) * load(w[:]) + load(s[r])
            store(y[r, :], select(z > 0.5, z, 0.0))
            store(m[r], sum(z, axis=1))
'''


@pytest.mark.slow
def test_chunked_rows_with_row_vectors_per_row_values_and_stores(tmp_path):
    """Two passes (min/max | normalise, store, fold the sum), a [B] input, a [D] row vector, a compare
    over the chunk, a per-row store; 100 rows of 20001 (not a multiple of 32 bytes): 3 rows per core."""
    k = parse_text(MIXED, "mixed.adsl")[0].instantiate()
    project, ctx = lower(k, "ascend910b1", "mixed.adsl")
    assert len(_plan(ctx.lowered).passes) == 2
    x, w, s = torch.randn(100, 20001), torch.rand(20001), torch.randn(100) * 0.1
    lo, hi = x.amin(1, keepdim=True), x.amax(1, keepdim=True)
    z = (x - lo) / (hi - lo) * w + s[:, None]
    run = TaskRun([x, w, s], [torch.where(z > 0.5, z, torch.zeros(())), z.sum(1)])
    res = validate_sim(k, ctx.lowered, project, ctx, run, work_dir=tmp_path)
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])


@pytest.mark.slow
def test_emulator_catches_padding_in_a_chunk_reduction(tmp_path):
    """Planted bug: fold the last (short) chunk over whole 256-byte repeats instead of `count`. The
    copy's padding and the previous chunk's data in the queue buffer must not pass for data."""
    k, project, ctx = _example("activation/softmax")
    code = project.files["softmax_kernel.cpp"]
    good = "ReduceMax(reduceOut_f32, xLocal, accTmp_f32, static_cast<int32_t>(count));"
    assert code.count(good) == 1
    bad_code = code.replace(good, "ReduceMax(reduceOut_f32, xLocal, accTmp_f32, static_cast<int32_t>((count + 63) / 64 * 64));")
    bad = dataclasses.replace(project, files={**project.files, "softmax_kernel.cpp": bad_code})
    x = torch.randn(2, 20001)
    res = validate_sim(k, ctx.lowered, bad, ctx, TaskRun([x], [torch.softmax(x, dim=1)]), work_dir=tmp_path)
    assert not res.ok
    assert "UB-UNINIT" in {e.code for e in res.sim_errors}, res.sim_errors


# ----------------------------------------------------------------------------- what cannot run in chunks


HEAD = '''@kernel
def k(x: Tensor[{dt}, "B, D"], y: Tensor[{dt}, "B, D"], s: Tensor[{dt}, "B"]):
'''


def _reason(text: str, target: str = "ascend910b1") -> str:
    k = parse_text(text, "nochunk.adsl")[0].instantiate()
    _, ctx = lower(k, target, "nochunk.adsl")
    reason = _row_loop(ctx.lowered).shape.chunked
    assert isinstance(reason, ir.NoChunk), reason
    return reason.reason


ROWS = '''    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


@pytest.mark.parametrize("dt,body,reason", [
    ("f32", "store(y[r, :], cumsum(load(x[r, :]), axis=1) + cumprod(load(x[r, :]), axis=1, reverse=True))",
     "a forward and a reverse scan in the same pass over the row"),
    # (an i32 row sum no longer reaches the chunk planner: the front end rejects it, DTYPE-UNSUPPORTED, session 33:
    # tests/test_i32_reductions.py)
])
def test_bodies_that_cannot_chunk_say_why(dt, body, reason):
    assert reason in _reason(HEAD.format(dt=dt) + ROWS + "            " + body + "\n")


def test_gather_cannot_chunk():
    _, _, ctx = _example("loss/cross_entropy")
    assert "'gather' needs the whole row in UB" in _row_loop(ctx.lowered).shape.chunked.reason


def _row_loops(lowered: ir.Kernel) -> list[ir.TileLoop]:
    return [s for s in ir.walk(lowered.body) if isinstance(s, ir.TileLoop)]


def test_several_split_loops_chunk_each_loop():
    text = HEAD.format(dt="f32") + "    total = 0.0\n" + ROWS + "            total += sum(load(x[r, :]))\n" + ROWS + \
        "            store(y[r, :], load(x[r, :]) / total)\n"
    k = parse_text(text, "two.adsl")[0].instantiate()
    project, ctx = lower(k, "ascend910b1", "two.adsl")
    assert all(isinstance(t.shape.chunked, ir.ChunkPlan) for t in _row_loops(ctx.lowered))
    code = project.files["k_kernel.cpp"]
    # loop 1 decides on its own chunk length; whole rows otherwise (every loop walks the core's rows)
    assert "if (chunkLength1_0_ > 0) {" in code and "ProcessChunked1();" in code and "Phase1Rows();" in code
    assert "const uint64_t tiles = chunkRows_ / tileLength1_;" in code


def test_a_later_split_loop_that_cannot_chunk_names_itself():
    text = HEAD.format(dt="f32") + "    total = 0.0\n" + ROWS + "            total += sum(load(x[r, :]))\n" + ROWS + \
        "            store(y[r, :], (cumsum(load(x[r, :]), axis=1) + cumsum(load(x[r, :]), axis=1, reverse=True)) / total)\n"
    k = parse_text(text, "two.adsl")[0].instantiate()
    project, ctx = lower(k, "ascend910b1", "two.adsl")
    first, second = _row_loops(ctx.lowered)
    assert isinstance(first.shape.chunked, ir.ChunkPlan) and "a forward and a reverse scan in the same pass over the row" in second.shape.chunked.reason
    assert project.view.tiling_error == ("one row does not fit the Unified Buffer, and split loop 1 cannot run in column "
                                         "chunks: a forward and a reverse scan in the same pass over the row")


@pytest.mark.slow
def test_a_first_split_loop_that_cannot_chunk_keeps_whole_rows_before_a_chunked_one(tmp_path):
    """Loop 0 (scans both ways in one pass) has no chunked form, loop 1 has: with rows that fit, both run whole rows."""
    text = HEAD.format(dt="f32") + "    total = 0.0\n" + ROWS + \
        "            total += sum(cumsum(load(x[r, :]), axis=1) + cumsum(load(x[r, :]), axis=1, reverse=True))\n" + ROWS + \
        "            store(y[r, :], load(x[r, :]) / total)\n"
    k = parse_text(text, "two.adsl")[0].instantiate()
    project, ctx = lower(k, "ascend910b1", "two.adsl")
    first, second = _row_loops(ctx.lowered)
    assert "a forward and a reverse scan in the same pass over the row" in first.shape.chunked.reason and isinstance(second.shape.chunked, ir.ChunkPlan)
    assert project.view.tiling_error.endswith("and this kernel cannot run in column chunks: a forward and a reverse scan in the same pass over the row")
    code = project.files["k_kernel.cpp"]
    assert "ProcessChunked();" not in code and "ProcessChunked1();" in code
    x = torch.rand(7, 1000)
    run = TaskRun([x, torch.zeros(7)], [x / (x.cumsum(1) + x.flip(1).cumsum(1).flip(1)).sum()])
    res = validate_sim(k, ctx.lowered, project, ctx, run, work_dir=tmp_path)
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])


def test_targets_without_datacopypad_cannot_chunk():
    text = HEAD.format(dt="f32") + ROWS + "            store(y[r, :], load(x[r, :]) * 2.0)\n"
    assert "no DataCopyPad" in _reason(text, "ascend310p")


@pytest.mark.slow
def test_tiling_error_names_the_reason(tmp_path):
    r = subprocess.run([sys.executable, "-m", "npu_harness.cli", str(REPO / "examples/loss/cross_entropy.adsl"), "-o",
                        str(tmp_path / "o"), "--validate", "sim", "--set", "batch_size=2", "--set",
                        "num_classes=100003"], check=False, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert r.returncode == 1 and "sim: FAIL" in r.stdout
    assert ("error[TILING]: one row does not fit the Unified Buffer, and this kernel cannot run in column chunks: "
            "'gather' needs the whole row in UB") in r.stderr


def test_ir_dump_shows_the_chunked_passes():
    from lowering import PassContext, get_target, run_pipeline

    adsl = REPO / "examples/activation/softmax.adsl"
    ctx = PassContext(get_target("ascend910b1"), adsl.name)
    run_pipeline(load_file(adsl)[0].instantiate(), ctx, frozenset({"plan_chunks"}))
    dump = ctx.dumps["plan_chunks"]
    assert "# rows longer than UB: 2 chunked pass(es) per row:" in dump
    assert "#   pass 0: folds _t0 (online_max:_t2), _t2 (add); chunks <= " in dump
    assert "#   pass 1: stores y; chunks <= " in dump


def test_ir_dump_shows_each_split_loops_passes_and_slot_folds():
    from lowering import PassContext, get_target, run_pipeline

    adsl = REPO / "examples/normalization/batch_norm_train.adsl"
    ctx = PassContext(get_target("ascend910b1"), adsl.name)
    run_pipeline(load_file(adsl)[0].instantiate(), ctx, frozenset({"plan_chunks"}))
    lines = [line.strip() for line in ctx.dumps["plan_chunks"].splitlines()]
    assert lines.count("# rows longer than UB: 1 chunked pass(es) per row:") == 3
    # loop 0 folds the row's sum into its slot after the pass; loop 1 reads the slot's total before it
    fold = next(i for i, line in enumerate(lines) if line.startswith("#   pass 0: folds _t1 (add); chunks <= "))
    assert lines[fold + 1] == "#     for chunk in tile(blk, size=auto, buffers=2):"  # the pass's own tile loop
    assert lines.index("#   s[r] += _t1Row") > fold
    assert lines.index("#   _t0Row = s[r]") < lines.index("#   ss[r] += _t4Row")


ONLINE = HEAD.format(dt="f32") + ROWS + """            xt = load(x[r, :])
            m = max(xt, axis=1)
            store(s[r], sum(exp({arg} - m), axis=1))
"""


@pytest.mark.parametrize("arg,passes", [("xt", 1), ("xt * 2.0", 2), ("xt + 1.0", 2)])
def test_online_max_sum_only_for_the_max_of_the_same_value(arg, passes):
    # sum(exp(v - max(v))) folds online with its max in one pass; only that pattern is matched: exp of
    # another value minus the max keeps its own pass
    k = parse_text(ONLINE.format(arg=arg), "online.adsl")[0].instantiate()
    _, ctx = lower(k, "ascend910b1", "online.adsl")
    assert len(_plan(ctx.lowered).passes) == passes


@pytest.mark.slow
def test_online_max_sum_with_the_max_in_a_late_chunk(tmp_path):
    """The running max rises in the last chunk: the sum of the earlier chunks must be rescaled."""
    k = parse_text(ONLINE.format(arg="xt"), "online.adsl")[0].instantiate()
    project, ctx = lower(k, "ascend910b1", "online.adsl")
    x = torch.randn(3, 90001)
    x[0, -5] = 30.0  # last chunk
    x[1, 7] = 30.0   # first chunk
    expected = torch.exp(x - x.amax(1, keepdim=True)).sum(1)
    run = TaskRun([x, torch.zeros_like(x)], [expected])  # y is an unused input here
    res = validate_sim(k, ctx.lowered, project, ctx, run, work_dir=tmp_path)
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])


# ----------------------------------------------------------------------------- scans on rows longer than UB


@pytest.mark.slow
@pytest.mark.parametrize("name,dt", [("cumsum", "f32"), ("reverse_cumsum", "f16"), ("exclusive_cumsum", "f32"),
                                     ("cumprod", "f32"), ("masked_cumsum", "f16")])
def test_scans_on_rows_longer_than_ub_carry_the_running_value(name, dt, tmp_path):
    """Rows of 32,805 elements (several chunks and a short tail): each chunk is scanned on the vector unit and
    the row's running value is carried into the next chunk (reverse scans walk the chunks backwards)."""
    from npu_harness.validate import load_task_for

    kernel, project, ctx = _example(f"math/{name}", T=dt)
    plan = _plan(ctx.lowered)
    # pass 0: the scan offsets of a row split over a core group (lowering/passes/scan_offsets.py; 2 rows of 32805
    # on 48 cores: groups of 22 cores, each scanning its 1536 columns from the group's offset), pass 1: the scan
    assert [p.group_only for p in plan.passes] == [True, False] and plan.row_groups
    code = project.files[f"{name}_kernel.cpp"]
    assert "scanCarry1_0_ = acc;  // into the row's next chunk" in code
    assert ("for (uint64_t c = chunks; c-- > 0;)" in code) == name.startswith("reverse")
    run = load_task_for(kernel, REPO / f"examples/math/{name}.py", overrides={"batch_size": 2, "dim": 32805})
    res = validate_sim(kernel, ctx.lowered, project, ctx, run, work_dir=tmp_path)
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])
    assert 0 < _host_tiling(project, ctx, {"B": 2, "D": 32805}, 48)["chunkLength"] < 32805


@pytest.mark.slow
def test_long_f32_running_sums_correct_each_segment_total(tmp_path):
    """Rows of 393,216 floats: the f32 roundings of the 3,072 segment totals would add up past the f32
    tolerance (3 of 6.3M elements off by up to 2.4e-4 without it); the chunk passes of f32 sums correct each
    total by its residuals (lowering/vector_scan.py). Whole rows and products do without."""
    from npu_harness.validate import load_task_for

    kernel, project, ctx = _example("math/cumsum", T="f32")
    code = project.files["cumsum_kernel.cpp"]
    assert code.count("// the total's correction") == 1  # the chunk pass only
    scratch = {b.name: b for b in _plan(ctx.lowered).passes[1].loop.buffers_decl}["scanTmp_fwd"]
    assert scratch.of == "fwd+" and scratch.bytes_for(1024) == 641 * 8 * 4
    _, prod, _ = _example("math/cumprod", T="f32")
    assert "the total's correction" not in prod.files["cumprod_kernel.cpp"]
    run = load_task_for(kernel, REPO / "examples/math/cumsum.py", overrides={"batch_size": 16, "dim": 393216})
    res = validate_sim(kernel, ctx.lowered, project, ctx, run, work_dir=tmp_path)
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])
