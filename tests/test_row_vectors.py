"""`w[:]` read by every row of a row loop: one TBuf copied in once per core (lowering/passes/hoist_row_vectors.py,
lowering/emit/row_vectors.py), validated in the emulator at odd shapes, its GM traffic counted, and the pipe-race
check firing when the copy's MTE2 -> V wait is missing."""

from __future__ import annotations

from dataclasses import replace

import pytest
from dsl_snippets import first_tile, tile_kernel

from ascend_dsl import ir
from ascend_dsl.dtypes import DType
from lowering import PassContext, get_target, lower
from lowering.passes import allocate_buffers, hoist_row_vectors
from lowering.pipeline import PIPELINE
from npu_harness import gallery

HEAD = '''@kernel
def k(x: Tensor[f32, "B, D"], w: Tensor[f32, "D"], s: Tensor[f32, "B"], y: Tensor[f32, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


def _until(kernel: ir.Kernel, last: str) -> ir.Kernel:
    ctx = PassContext(get_target("ascend910b1"))
    for p in PIPELINE:
        kernel = p.run(kernel, ctx)
        if p.name == last:
            return kernel
    raise AssertionError(last)


def _decls(kernel: ir.Kernel) -> dict[str, ir.Buffer]:
    return {b.name: b for b in first_tile(kernel).buffers_decl}


def test_a_row_vector_gets_one_tbuf_and_the_rows_keep_their_queues():
    k = _until(tile_kernel(HEAD, "xt = load(x[r, :])\nstore(y[r, :], xt * load(w[:]) + load(s[r]))", "rv.adsl"),
               "hoist_row_vectors")
    d = _decls(k)
    assert (d["wLocal"].position, d["wLocal"].num, d["wLocal"].role) == \
        (ir.Position.VECCALC, 1, ir.BufferRole.ROW_VECTOR)
    assert (d["xLocal"].position, d["xLocal"].num) == (ir.Position.VECIN, 2)
    assert (d["sLocal"].position, d["sLocal"].num) == (ir.Position.VECIN, 2)  # per-row values: one per row
    assert (d["yLocal"].position, d["yLocal"].num) == (ir.Position.VECOUT, 2)


def test_flat_loops_and_chunked_passes_are_left_alone():
    flat = tile_kernel('''@kernel
def k(x: Tensor[f32, "N"], y: Tensor[f32, "N"]):
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
''', "store(y[t], load(x[t]) + 1.0)", "rv.adsl")
    ctx = PassContext(get_target("ascend910b1"))
    alloc = _until(flat, "allocate_buffers")
    assert hoist_row_vectors.run(alloc, ctx) == alloc
    rows = _until(tile_kernel(HEAD, "store(y[r, :], load(x[r, :]) + load(w[:]))", "rv.adsl"), "allocate_buffers")
    chunked = first_tile(rows).shape.chunked
    assert isinstance(chunked, ir.ChunkPlan)  # rows longer than UB: each pass reads a column chunk of w per chunk
    after = hoist_row_vectors.run(rows, ctx)
    assert first_tile(after).shape.chunked == chunked
    assert not any(b.role is ir.BufferRole.ROW_VECTOR for p in chunked.passes for b in p.loop.buffers_decl)


def test_a_buffer_written_by_anything_but_the_load_is_not_hoisted():
    k = _until(tile_kernel(HEAD, "store(y[r, :], load(x[r, :]) + load(w[:]))", "rv.adsl"), "allocate_buffers")
    tl = first_tile(k)
    assert hoist_row_vectors.row_vector_buffers(tl) == {"wLocal"}
    other = ir.Assign("wLocal", ir.Op("exp", (ir.Ref("xLocal", tl.body[0].value.type),), tl.body[0].value.type), tl.span)
    assert hoist_row_vectors.row_vector_buffers(replace(tl, body=(*tl.body, other))) == set()
    assert allocate_buffers  # the pass runs right after it (tests/test_passes.py: EXPECTED_PASSES)


def test_the_emitted_kernel_copies_the_vector_in_once_before_the_tiles():
    ex = next(e for e in gallery.discover() if e.name == "layer_norm")
    project, _ = lower(ex.source.instantiate({"T": DType.F32}), "ascend910b1", ex.adsl.name)
    code = project.files["layer_norm_kernel.cpp"]
    process = code[code.index("void Process()"):code.index("private:")]
    copy_in = code[code.index("void CopyIn("):code.index("void Compute(")]
    for name in ("weight", "bias"):
        assert f"CopyGmToUb({name}Local, {name}Gm, rowLen_);" in process
        assert f"{name}Gm" not in copy_in
        assert f"pipe.InitBuffer({name}LocalBuf, rowPitch_ * sizeof(float));" in code
    assert process.index("WaitFlag<HardEvent::MTE2_V>") < process.index("for (uint64_t i = 0; i < tiles; ++i)")


def _gm_reads(result) -> list[int]:
    return [b.get("gm2ub", {}).get("bytes", 0) for b in result.counters["blocks"]]


@pytest.mark.slow
@pytest.mark.parametrize("name, dts, shape, vectors", [
    # 200 rows over 40 cores of 5 (tiles of 3 + 2 rows), rows of 1000 (not whole 32-byte blocks in f16)
    ("add_row", {"T": DType.F32}, {"batch_size": 200, "dim": 1000}, 1),
    ("scale_shift", {"T": DType.F16}, {"batch_size": 200, "dim": 1000}, 1),
    ("layer_norm", {"T": DType.F32}, {"batch_size": 200, "dim": 333}, 2),
    ("add_row", {"T": DType.F16}, {"batch_size": 5, "dim": 4099}, 1),  # 5 rows: 43 cores have none
])
def test_row_vectors_validate_and_cross_gm_once_per_core(name, dts, shape, vectors):
    ex = next(e for e in gallery.discover() if e.name == name)
    r = gallery.validate(ex, dts, shape)
    assert r.ok, (r.summary(), r.detail, r.sim_errors)
    size = dts["T"].size
    rows, d = shape["batch_size"], shape["dim"]
    per_row = d * size * (1 + (name == "scale_shift") / d)  # scale_shift also reads s[r]: one value per row
    reads = [b for b in _gm_reads(r) if b]
    # every core with rows reads its rows once and each vector once (before: once per tile of rows)
    assert sum(reads) == pytest.approx(rows * per_row + len(reads) * vectors * d * size)


@pytest.mark.slow
def test_planted_bug_a_row_vector_never_copied_in_is_an_uninitialised_read():
    """The once-per-core copy is what fills the TBuf: without it the first Add reads undefined UB (UB-UNINIT).
    (Its MTE2 -> V / S waits are belt and braces: every row loop also copies rows in through a queue, whose
    EnQue / DeQue orders all earlier MTE2 work, so dropping them is no race the emulator could show.)"""
    from ascend_dsl import load_file
    from npu_harness.validate import load_task_for, validate_sim

    ex = next(e for e in gallery.discover() if e.name == "add_row")
    kernel = load_file(ex.adsl)[0].instantiate({"T": DType.F32})
    project, ctx = lower(kernel, "ascend910b1", ex.adsl.name)
    fname = "add_row_kernel.cpp"
    copy = "            CopyGmToUb(bLocal, bGm, rowLen_);\n"
    assert project.files[fname].count(copy) == 1
    patched = replace(project, files={**project.files, fname: project.files[fname].replace(copy, "")})
    run = load_task_for(kernel, ex.task, overrides={"batch_size": 96, "dim": 1024})
    res = validate_sim(kernel, ctx.lowered, patched, ctx, run)
    assert not res.ok and "UB-UNINIT" in {e.code for e in res.sim_errors}, (res.detail, res.sim_errors)
