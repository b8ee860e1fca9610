"""Tile counts of row loops with few rows per core (lowering/row_tile_count.py): the static estimate and the host
tiling's choice, checked by running only the emitted host tiling (npu_harness.tiling_probe), and the cost model's
figure for the kernels the choice changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_dsl import ir, load_file
from ascend_dsl.dtypes import BY_NAME, DType
from lowering import lower
from lowering.row_tile_count import UP_TO_ROWS, estimated_cycles, row_tile_cost
from npu_harness.tiling_probe import run_tiling

REPO = Path(__file__).resolve().parent.parent


def _example(name: str, **dtypes):
    adsl = REPO / "examples" / f"{name}.adsl"
    kernel = load_file(adsl)[0].instantiate(dtypes)
    return lower(kernel, "ascend910b1", adsl.name)


def _row_loop(ctx) -> ir.TileLoop:
    return next(s for s in ir.walk(ctx.lowered.body) if isinstance(s, ir.TileLoop))


def _tiling(project, ctx, values: dict[str, int], cores: int = 48) -> dict[str, int]:
    given = {s["name"]: s["default"] for s in project.manifest["scalars"]}
    return run_tiling(project, ctx.target.name, values, given, cores, ("blockLength", "tileLength"))


def test_the_estimate_counts_streams_bytes_and_instructions():
    _, ctx = _example("broadcast/div_col", T=DType.F16)
    cost = row_tile_cost(_row_loop(ctx))
    assert cost is not None
    # x[r, :] and the per-row column c[r] are two DMA streams in per tile; y[r, :] one out; 2 bytes per element each way
    assert (cost.in_streams, cost.out_streams, cost.in_bytes, cost.out_bytes) == (2, 1, 2, 2)
    _, ctx = _example("activation/softmax", T=DType.F16)
    heavy = row_tile_cost(_row_loop(ctx))
    assert heavy.in_streams == 1 and heavy.vec_millicycles > 2 * cost.vec_millicycles


@pytest.mark.parametrize("name,dtype,rows_per_tile", [
    ("activation/softmax", "f32", 1),                   # vector work close to the copies: one row per tile
    ("normalization/rms_norm", "f16", 1),
    ("loss/cosine_similarity_loss", "f16", 1),
    ("broadcast/div_col", "f16", 2),                    # copy-bound with two streams in: two tiles
    ("broadcast/where_row_mask", "f16", 3),             # three streams in, a cheap select: one tile (session 36)
    ("broadcast/sub_col", "f16", 2),                    # two streams in: the overlap beats a latency per stream
])
def test_few_rows_per_core_pick_the_tile_count_by_the_estimate(name, dtype, rows_per_tile):
    project, ctx = _example(name, T=BY_NAME[dtype])
    got = _tiling(project, ctx, {"B": 128, "D": 4096})  # KernelBench's 128 x 4096: 3 rows on each of 43 cores
    assert (got["blocks"], got["blockLength"]) == (43, 3)
    assert got["tileLength"] == rows_per_tile


def test_the_host_choice_is_the_estimates_minimum():
    for name in ("activation/softmax", "broadcast/div_col", "broadcast/where_row_mask"):
        project, ctx = _example(name, T=DType.F16)
        cost = row_tile_cost(_row_loop(ctx))
        got = _tiling(project, ctx, {"B": 128, "D": 4096})
        per_core = got["blockLength"]
        times = {r: estimated_cycles(cost, per_core, 4096, -(-per_core // r), got["blocks"]) for r in (1, 2, 3)}
        assert got["tileLength"] == min(times, key=times.get), (name, times)


def test_large_shares_keep_the_ub_bound_rule():
    project, ctx = _example("activation/softmax", T=DType.F32)
    small = _tiling(project, ctx, {"B": 48 * (UP_TO_ROWS + 1), "D": 1024})  # 9 rows per core: the old rule
    assert small["blockLength"] == UP_TO_ROWS + 1 and small["tileLength"] == (UP_TO_ROWS + 2) // 2


def test_row_vectors_copied_once_per_core_are_no_stream():
    """layer_norm's weight and bias are copied in once per core (hoist_row_vectors): x is its one stream per tile."""
    _, ctx = _example("normalization/layer_norm", T=DType.F32)
    cost = row_tile_cost(_row_loop(ctx))
    assert (cost.in_streams, cost.out_streams) == (1, 1)


def test_a_scan_counts_its_instructions_per_row_and_takes_a_row_per_tile():
    """A blocked scan (lowering/vector_scan.py) issues ~33 vector instructions per row whatever the tile count and
    does ~0.2 cycles of vector work per element: 128 x 4096 f16 (3 rows per core) is vector-bound, so three tiles
    of a row overlap more of the copies than a tile of two rows and one of one (41 % of the ideal, from 39 %)."""
    project, ctx = _example("math/cumsum", T=DType.F16)
    cost = row_tile_cost(_row_loop(ctx))
    assert cost.row_instructions == 33 and cost.instructions == 0 and cost.vec_millicycles > 150
    assert _tiling(project, ctx, {"B": 128, "D": 4096}) == {"blocks": 43, "blockLength": 3, "tileLength": 1}


def test_kernels_of_several_tile_loops_keep_two_tiles():
    """The other loops take the first loop's rows per tile, and the estimate sees only the first: no one-tile
    choice there (batch_norm_train: statistics, then the normalisation), whereas a single loop may take one."""
    project, _ = _example("normalization/batch_norm_train", T=DType.F32)
    assert project.view.row_cost is not None and "min_tiles" not in project.view.row_cost
    project, _ = _example("broadcast/where_row_mask", T=DType.F16)
    assert project.view.row_cost["min_tiles"] == "1"


@pytest.mark.slow
@pytest.mark.parametrize("rows", [128, 127])
def test_one_tile_of_rows_matches_torch_in_the_emulator(tmp_path, rows):
    """where_row_mask f16 keeps a core's 3 rows in one tile (and 127 rows: a core with 1 row left) in the emulator."""
    import torch

    from npu_harness.task import TaskRun
    from npu_harness.validate import validate_sim

    project, ctx = _example("broadcast/where_row_mask", T=DType.F16)
    got = _tiling(project, ctx, {"B": rows, "D": 4096})
    assert got["tileLength"] == got["blockLength"] == 3
    mask, x, z = torch.rand(rows) < 0.5, torch.randn(rows, 4096).half(), torch.randn(rows, 4096).half()
    run = TaskRun([mask.to(torch.uint8), x, z], [torch.where(mask[:, None], x, z)])
    kernel = load_file(REPO / "examples" / "broadcast/where_row_mask.adsl")[0].instantiate({"T": DType.F16})
    result = validate_sim(kernel, ctx.lowered, project, ctx, run, work_dir=tmp_path)
    assert result.ok, result.summary()


def test_per_channel_values_are_no_stream():
    """batch_norm_module's four `[C]` parameters are read per row by the scalar unit (or from a UB cache), not
    copied per tile: x is the one stream in. Counted as four DMA streams, they made one tile look cheapest at the
    task's 8 x 24 x 56 x 56 (4 rows per core), 2.76 -> 3.38 us in the cost model; one row per tile runs 2.69."""
    project, ctx = _example("normalization/batch_norm_module", T=DType.F16)
    cost = row_tile_cost(_row_loop(ctx))
    assert (cost.in_streams, cost.out_streams) == (1, 1)
    got = _tiling(project, ctx, {"N": 8, "C": 24, "H": 56, "W": 56})
    assert (got["blocks"], got["blockLength"], got["tileLength"]) == (48, 4, 1)
