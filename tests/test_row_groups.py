"""Rows longer than UB with fewer rows than cores: each row's columns split over a group of cores
(lowering/emit/row_groups.py). Host tiling at benchmark shapes, emulator runs against PyTorch on 48 and 40
cores, the kernels that keep a core per row, and planted bugs the emulator catches."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

from ascend_dsl import load_file, parse_text
from lowering import lower
from npu_harness.task import TaskRun
from npu_harness.tiling_probe import run_tiling
from npu_harness.validate import load_task_for, validate_sim

REPO = Path(__file__).resolve().parent.parent


def _example(name: str, **dtypes):
    adsl = REPO / "examples" / f"{name}.adsl"
    kernel = load_file(adsl)[0].instantiate(dtypes)
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    return kernel, project, ctx


def _tiling(project, values: dict[str, int], cores: int) -> dict[str, int]:
    """Only the emitted host tiling function (npu_harness.tiling_probe), scalars at their defaults."""
    scalars = {s["name"]: s["default"] for s in project.manifest["scalars"]}
    return run_tiling(project, "ascend910b1", values, scalars, cores, ("blockLength", "chunkLength", "rowGroup",
                                                                       "colShare"))


@pytest.mark.parametrize("name,values,rows,row_len", [
    ("activation/softmax", {"B": 16, "D": 393216}, 16, 393216),
    ("normalization/layer_norm", {"B": 16, "D": 64 * 256 * 256}, 16, 64 * 256 * 256),
    ("normalization/instance_norm", {"N": 2, "C": 8, "H": 256, "W": 256}, 16, 65536),
])
@pytest.mark.parametrize("cores", [48, 40])
def test_host_tiling_splits_rows_over_core_groups(name, values, rows, row_len, cores):
    _, project, _ = _example(name)
    t = _tiling(project, values, cores)
    g = t["rowGroup"]
    assert t["chunkLength"] > 0 and t["blockLength"] == 1
    assert g == min(cores // rows, -(-row_len // t["colShare"])) > 1 and t["blocks"] == rows * g <= cores
    assert t["colShare"] % 256 == 0 and (g - 1) * t["colShare"] < row_len <= g * t["colShare"]  # all get columns
    assert t["chunkLength"] <= t["colShare"]  # chunks of the core's share, not of the whole row


def test_host_tiling_keeps_a_core_per_row_with_enough_rows():
    _, project, _ = _example("activation/softmax")
    t = _tiling(project, {"B": 48, "D": 200000}, 48)  # 800 KB rows: within a core's L2 reach
    assert t["rowGroup"] == 1 and t["blocks"] == 48 and t["chunkLength"] > 0
    t = _tiling(project, {"B": 16, "D": 4096}, 48)  # whole rows fit UB: no chunks, no groups
    assert t["rowGroup"] == 1 and t["chunkLength"] == 0


@pytest.mark.parametrize("name,dt,values,cores,group,rows", [
    ("normalization/layer_norm", "f32", {"B": 96, "D": 393216}, 48, 2, 4),  # 1.5 MB rows: shares of 768 KB
    ("activation/softmax", "f32", {"B": 48, "D": 393216}, 48, 2, 2),
    ("normalization/layer_norm", "f32", {"B": 5, "D": 300001}, 4, 3, 5),  # 2 groups of 2 would get 3 and 2 rows
    ("normalization/layer_norm", "f16", {"B": 96, "D": 393216}, 48, 1, 2),  # 768 KB rows: a core per row
    ("normalization/layer_norm", "f32", {"B": 47, "D": 393216}, 48, 1, 1),  # no group takes 47 rows evenly
    ("math/cumsum", "f32", {"B": 96, "D": 393216}, 48, 1, 2),  # scans: a core walks its rows alone
])
def test_host_tiling_groups_long_rows_at_least_as_many_as_cores(name, dt, values, cores, group, rows):
    """Rows of more than 1 MB, at least as many as cores: the smallest group whose shares are at most 1 MB and
    whose cores / g groups take equal numbers of rows (each core passes the same SyncAlls)."""
    from ascend_dsl.dtypes import DType

    _, project, _ = _example(name, T=DType(dt))
    t = _tiling(project, values, cores)
    b, d = values["B"], values["D"]
    assert t["rowGroup"] == group and t["blockLength"] == rows and t["chunkLength"] > 0
    if group > 1:
        assert t["blocks"] == b // rows * group <= cores and b % rows == 0
        assert t["colShare"] % 256 == 0 and (group - 1) * t["colShare"] < d <= group * t["colShare"]
        assert t["colShare"] * DType(dt).size <= 1 << 20 < d * DType(dt).size


@pytest.mark.parametrize("name", ["batch_norm_train", "group_norm"])
def test_host_tiling_groups_several_split_loops_only_when_every_loop_chunks(name):
    _, project, _ = _example(f"normalization/{name}")
    values = {"N": 2, "C": 8, "H": 256, "W": 256}  # 16 planes of 256 KB: every loop chunks
    t = _tiling(project, values, 48)
    share = (-(-65536 // 3) + 255) // 256 * 256  # a third of a plane, in whole 256-element repeats
    assert t["rowGroup"] == 3 and t["blocks"] == 48 and t["chunkLength"] <= t["colShare"] == share
    # planes of 100 x 110 floats: loops 0 and 1 hold whole planes, loop 2 chunks: a core per plane
    t = _tiling(project, {**values, "H": 100, "W": 110}, 48)
    assert t["rowGroup"] == 1 and t["chunkLength"] == 0 and t["blocks"] == 16


def test_accumulators_fold_each_row_once_per_group():
    _, project, _ = _example("loss/cosine_similarity_loss")
    code = project.files["cosine_similarity_loss_kernel.cpp"]
    assert project.manifest["workspace_bytes_per_core"] == 96  # the accumulator slot, then two group slots
    assert "if (groupRank_ == 0) {\n                totalCore_ += " in code
    assert "groupBase_ = GetBlockNum() * 8;" in code
    assert "const uint64_t region = groupBase_ + groupTurn_ * GetBlockNum() * 8;" in code


def test_emitted_group_combine():
    _, project, _ = _example("activation/softmax")
    code = project.files["softmax_kernel.cpp"]
    assert project.manifest["workspace_bytes_per_core"] == 64
    combine = code[code.index("void GroupCombine0()"):code.index("void ChunkCopyIn0(")]
    # partials out, SyncAll, the group's slots in: then the max first, the sums rescaled to it
    assert combine.index("DataCopy(workspaceGm_[region + GetBlockIdx() * 8], part, 8);") < \
        combine.index("SyncAll();") < combine.index("rowGroup_ * 8);") < combine.index("Exp(math, math,")
    assert "GroupCombine1" not in code  # the second pass folds nothing


def _run(name: str, dt, values: dict[str, int], cores: int, tmp_path: Path, project=None):
    kernel, proj, ctx = _example(name, T=dt)
    run = load_task_for(kernel, REPO / "examples" / f"{name}.py", overrides=values)
    return validate_sim(kernel, ctx.lowered, project or proj, ctx, run, work_dir=tmp_path, core_num=cores)


LONG = {"batch_size": 2, "dim": 100003}


def _blocks(rows: int, row_len: int, cores: int) -> int:
    """Cores launched: a group of g per row, every core of a group with a 256-element multiple of columns."""
    def ceil(a: int, b: int) -> int:
        return (a + b - 1) // b

    share = ceil(ceil(row_len, cores // rows), 256) * 256
    return rows * ceil(row_len, share)


PLANES = {"batch_size": 1, "features": 2, "dim1": 300, "dim2": 300}
ROWS3 = {"batch_size": 1, "dim1": 3, "dim2": 70001}


@pytest.mark.slow
@pytest.mark.parametrize("name,dt,cores,values", [
    ("activation/softmax", "f32", 48, LONG),
    ("activation/softmax", "f16", 40, LONG),
    ("activation/log_softmax", "f32", 40, LONG),
    ("activation/log_softmax", "f16", 48, LONG),
    ("normalization/layer_norm", "f32", 40, LONG),
    ("normalization/layer_norm", "f16", 48, LONG),
    ("normalization/rms_norm", "f32", 48, LONG),
    ("normalization/rms_norm", "f16", 40, LONG),
    ("normalization/instance_norm", "f32", 40, PLANES),
    ("normalization/instance_norm", "f16", 48, PLANES),
    ("reduce/mean_dim", "f32", 48, ROWS3),  # per-row stores
    ("reduce/prod_dim", "f32", 40, ROWS3),  # prod partials multiply
    ("normalization/batch_norm_train", "f32", 48, PLANES),  # three split loops, slot accumulators
    ("normalization/batch_norm_train", "f16", 40, PLANES),
    ("normalization/group_norm", "f32", 40, {**PLANES, "num_groups": 2}),
    ("normalization/group_norm", "f16", 48, {**PLANES, "num_groups": 1}),
    ("loss/cosine_similarity_loss", "f32", 48, LONG),  # an accumulator across cores
    ("loss/cosine_similarity_loss", "f16", 40, LONG),
])
def test_rows_split_over_core_groups_match_pytorch(tmp_path, name, dt, cores, values):
    from ascend_dsl.dtypes import DType

    rows, row_len = (2, 100003) if values is LONG else (3, 70001) if values is ROWS3 else (2, 90000)
    blocks = _blocks(rows, row_len, cores)
    assert blocks > rows
    res = _run(name, DType(dt), values, cores, tmp_path)
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])
    assert res.counters["blockDim"] == blocks  # every row's columns over a group of cores


@pytest.mark.slow
@pytest.mark.parametrize("name,dt,rows", [
    ("normalization/layer_norm", "f32", 8),  # 2 groups of 2 cores, 4 rows each
    ("normalization/layer_norm", "f32", 5),  # 1 group of 3 cores walks 5 rows
    ("activation/softmax", "f32", 6),
    ("normalization/rms_norm", "f32", 8),
])
def test_long_rows_walked_by_core_groups_match_pytorch(tmp_path, name, dt, rows):
    """At least as many rows as cores (4), each longer than 1 MB (300,001 f32): groups of cores walk several rows,
    a column share each, combining per row."""
    from ascend_dsl.dtypes import DType

    res = _run(name, DType(dt), {"batch_size": rows, "dim": 300001}, 4, tmp_path)
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])
    assert res.counters["blockDim"] == (4 if rows % 2 == 0 else 3)


@pytest.mark.slow
def test_emulator_catches_groups_walking_the_same_rows(tmp_path):
    """Planted bug: every group starts at row blockIdx / g, not at its share of the rows: the groups overlap."""
    from ascend_dsl.dtypes import DType

    _, project, _ = _example("normalization/layer_norm", T=DType.F32)
    bad = _planted(project, "GetBlockIdx() / rowGroup_ * tiling.blockLength;", "GetBlockIdx() / rowGroup_;")
    res = _run("normalization/layer_norm", DType.F32, {"batch_size": 8, "dim": 300001}, 4, tmp_path, bad)
    assert not res.ok, res.summary()


ONLINE_LATE = '''@kernel
def k(x: Tensor[f32, "B, D"], y: Tensor[f32, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            xt = load(x[r, :])
            e = exp(xt - max(xt, axis=1))
            store(y[r, :], e / sum(e, axis=1))
'''


@pytest.mark.slow
def test_group_max_in_a_late_core(tmp_path):
    """The row's max sits in the last core's columns (or the first's): the other cores' sums must be
    rescaled by exp(m_i - m) in the combine."""
    k = parse_text(ONLINE_LATE, "online.adsl")[0].instantiate()
    project, ctx = lower(k, "ascend910b1", "online.adsl")
    x = torch.randn(2, 100003)
    x[0, -5] = 40.0
    x[1, 3] = 40.0
    res = validate_sim(k, ctx.lowered, project, ctx, TaskRun([x], [torch.softmax(x, 1)]), work_dir=tmp_path)
    assert res.ok and res.counters["blockDim"] == _blocks(2, 100003, 48) > 2, \
        "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])


def _planted(project, old: str, new: str, count: int = 1):
    """The project with the first occurrence of `old` (which occurs `count` times) replaced."""
    name = f"{project.name}_kernel.cpp"
    code = project.files[name]
    assert code.count(old) == count
    return dataclasses.replace(project, files={**project.files, name: code.replace(old, new, 1)})


@pytest.mark.slow
def test_emulator_catches_a_combine_without_syncall(tmp_path):
    """Planted bug: the group's slots of the row's (count, mean, M2) (layer_norm's one combine: its mean and
    variance fold in one pass, lowering/passes/chunk_moments.py) read without the SyncAll: the other cores'
    partials have not landed (the emulator runs blocks in order until a SyncAll; the workspace starts as
    NaN bytes)."""
    from ascend_dsl.dtypes import DType

    _, project, _ = _example("normalization/layer_norm", T=DType.F32)
    bad = _planted(project, "SyncAll();  // every partial of the group has landed", "", 1)
    res = _run("normalization/layer_norm", DType.F32, LONG, 48, tmp_path, bad)
    assert not res.ok and not res.comparisons[0].ok, res.summary()


@pytest.mark.slow
def test_emulator_catches_per_row_stores_by_every_core_of_a_group(tmp_path):
    """Planted bug: every core of a group writes the row's element: GM-RACE."""
    from ascend_dsl.dtypes import DType

    _, project, _ = _example("reduce/mean_dim", T=DType.F32)
    bad = _planted(project, "if (groupRank_ == 0) {", "{")
    res = _run("reduce/mean_dim", DType.F32, ROWS3, 48, tmp_path, bad)
    assert not res.ok and "GM-RACE" in {e.code for e in res.sim_errors}, res.sim_errors


@pytest.mark.slow
def test_emulator_catches_a_row_value_accumulated_by_every_core_of_a_group(tmp_path):
    """Planted bug: every core of a group folds the row's value into the loss: counted g times."""
    from ascend_dsl.dtypes import DType

    _, project, _ = _example("loss/cosine_similarity_loss", T=DType.F32)
    bad = _planted(project, "if (groupRank_ == 0) {\n                totalCore_ += ", "{\n                totalCore_ += ")
    res = _run("loss/cosine_similarity_loss", DType.F32, LONG, 48, tmp_path, bad)
    assert not res.ok and not res.comparisons[0].ok, res.summary()


@pytest.mark.slow
def test_several_split_loops_with_whole_planes_keep_a_core_per_plane(tmp_path):
    """8 planes of 100 x 110 over 48 cores: loops 0 and 1 hold whole planes, so no groups (blockDim 8)."""
    from ascend_dsl.dtypes import DType

    res = _run("normalization/batch_norm_train", DType.F32, {"batch_size": 1, "features": 8, "dim1": 100, "dim2": 110},
               48, tmp_path)
    assert res.ok and res.counters["blockDim"] == 8, \
        "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])


def test_chunked_slot_partials_stay_in_the_workspace():
    """A chunked loop folds its rows into the partial vectors in the workspace: the combine reads them there, no
    read-back into UB and copy-out (session 32); loops over whole rows still copy their UB vectors out."""
    from ascend_dsl.dtypes import DType

    _, project, _ = _example("normalization/batch_norm_train", T=DType.F32)
    code = project.files["batch_norm_train_kernel.cpp"]
    chunked = code[code.index("void ProcessChunked()"):code.index("void ProcessChunked1()")]
    assert "slotPartsInGm_ = true;" in chunked and "DataCopy(accVec_sBuf.Get<float>(), workspaceGm_" not in chunked
    assert code.count("if (!slotPartsInGm_) {") == 2  # the copy-outs after loops 0 and 1 (s and ss)


@pytest.mark.slow
def test_emulator_catches_whole_row_slot_partials_not_copied_out(tmp_path):
    """Planted bug: the copy-out skipped as if every loop had run in chunks: loops 0 and 1 hold whole planes
    (100 x 110), so their partial vectors are only in UB and the combine reads workspace never written."""
    from ascend_dsl.dtypes import DType

    _, project, _ = _example("normalization/batch_norm_train", T=DType.F32)
    bad = _planted(project, "if (!slotPartsInGm_) {", "if (false) {", 2)
    res = _run("normalization/batch_norm_train", DType.F32, {"batch_size": 1, "features": 8, "dim1": 100, "dim2": 110},
               48, tmp_path, bad)
    assert not res.ok, res.summary()


@pytest.mark.slow
def test_emulator_catches_a_slot_fold_by_every_core_of_a_group(tmp_path):
    """Planted bug: every core of a group adds the plane's sum into the channel's slot: the mean is g times
    too large."""
    from ascend_dsl.dtypes import DType

    _, project, _ = _example("normalization/batch_norm_train", T=DType.F32)
    bad = _planted(project, "of s (the group's first core)\n            if (groupRank_ == 0) {",
                   "of s (the group's first core)\n            {")
    res = _run("normalization/batch_norm_train", DType.F32, PLANES, 48, tmp_path, bad)
    assert not res.ok and not res.comparisons[0].ok, res.summary()


@pytest.mark.slow
def test_scalar_and_slot_accumulators_with_rows_split_over_core_groups(tmp_path):
    """A scalar and a slot accumulator in one chunked loop, then a second chunked loop reading both:
    3 planes of 300 x 300 f16 over 48 cores (groups of 16), each row's values folded once per group."""
    from tests.test_slot_accumulators import MIXED, _mixed_expect

    k = parse_text(MIXED, "slots.adsl")[0].instantiate()
    project, ctx = lower(k, "ascend910b1", "slots.adsl")
    # +-1 data: partial sums stay integers f16 holds exactly (see test_slot_accumulators)
    x = (torch.randint(0, 2, (1, 3, 300, 300), generator=torch.Generator().manual_seed(0)) * 2 - 1).half()
    res = validate_sim(k, ctx.lowered, project, ctx, TaskRun([x], [_mixed_expect(x)]), work_dir=tmp_path)
    assert res.ok and res.counters["blockDim"] == _blocks(3, 90000, 48) > 3, \
        "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])


@pytest.mark.slow
def test_row_vectors_per_row_inputs_and_stores_with_rows_split_over_core_groups(tmp_path):
    """tests/test_chunks.py's MIXED kernel ([D] row vector, [B] input, a per-row store, min and max folded
    together) at 2 rows of 20001 over 48 cores: each core's GM views start at its group's row."""
    from tests.test_chunks import MIXED

    k = parse_text(MIXED, "mixed.adsl")[0].instantiate()
    project, ctx = lower(k, "ascend910b1", "mixed.adsl")
    x, w, s = torch.randn(2, 20001), torch.rand(20001), torch.randn(2) * 0.1
    lo, hi = x.amin(1, keepdim=True), x.amax(1, keepdim=True)
    z = (x - lo) / (hi - lo) * w + s[:, None]
    run = TaskRun([x, w, s], [torch.where(z > 0.5, z, torch.zeros(())), z.sum(1)])
    res = validate_sim(k, ctx.lowered, project, ctx, run, work_dir=tmp_path)
    assert res.ok and res.counters["blockDim"] == _blocks(2, 20001, 48) > 2, \
        "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])
