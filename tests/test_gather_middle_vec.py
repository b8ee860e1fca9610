"""torch.gather along a middle dim on the vector unit (lowering/passes/plan_gather_middle.py, lowering/emit/
gather_middle.py): x's column slabs in UB, one Gather per tile of index rows; the scalar walk (col_select.py) when
the loop does more than the gather, and at run time when one column block of x's R rows does not fit UB."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from dsl_snippets import tile_kernel

from ascend_dsl import ir, load_file
from lowering import lower
from npu_harness.task import TaskRun
from npu_harness.validate import validate_sim

REPO = Path(__file__).resolve().parent.parent

HEAD = '''@kernel
def k(x: Tensor[f32, "A, R, C"], e: Tensor[i64, "A, K, C"], e32: Tensor[i32, "A, K, C"], y: Tensor[f32, "A, K, C"]):
    for blk in split(A * K, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
'''


def _lower(body: str, target: str = "ascend910b1"):
    project, ctx = lower(tile_kernel(HEAD, body, "middle.adsl"), target, "middle.adsl",
                         frozenset({"plan_gather_middle"}))
    return project, ctx


def test_a_lone_gather_becomes_the_vector_kind_and_the_dump_shows_the_plan():
    project, ctx = _lower("store(y[r, :], gather(x, load(e[r, :])))")
    assert ctx.lowered.kind is ir.KernelKind.GATHER_MIDDLE
    dump = ctx.dumps["plan_gather_middle"]
    assert "GatherMiddleVec(eLocal, x, R, K, work=(group, column block)" in dump, dump
    code = project.files["k_kernel.cpp"]
    assert "Cast(offs, idx, RoundMode::CAST_NONE, n);  // i64 -> i32 saturates" in code
    assert "Gather(out, slab, offs.ReinterpretCast<uint32_t>(), 0u, n);" in code
    assert "{ Trap(); }  // outside the middle dim: stop" in code
    assert "xGm.GetValue(" in code  # the scalar walk the host may choose (vec = 0)


def test_an_i32_index_is_clamped_without_a_cast():
    code = _lower("store(y[r, :], gather(x, load(e32[r, :])))")[0].files["k_kernel.cpp"]
    assert "Maxs(offs, idx, static_cast<int32_t>(-1), n);" in code and "Cast(offs, idx" not in code


@pytest.mark.parametrize("body,target,why", [
    ("store(y[r, :], gather(x, load(e[r, :])) * 2.0)", "ascend910b1",
     "the loop does more than copy in the index, gather and store"),
    ("store(y[r, :], gather(x, load(e[r, :])))", "ascend310p", "no DataCopyPad on this target"),
])
def test_other_forms_keep_the_scalar_walk_and_say_why(body, target, why):
    project, ctx = _lower(body, target)
    assert ctx.lowered.kind is ir.KernelKind.VECTOR
    assert f"vector=no: {why}" in ctx.dumps["plan_gather_middle"]
    assert "GatherMiddleVec" not in ctx.dumps["plan_gather_middle"]


def _gallery(dtype: str):
    adsl = REPO / "examples/index/gather_middle.adsl"
    kernel = load_file(adsl)[0].instantiate({"T": dtype})
    project, ctx = lower(kernel, "ascend910b1", adsl.name)
    assert ctx.lowered.kind is ir.KernelKind.GATHER_MIDDLE
    return kernel, project, ctx


# (B, R, C, K): the gallery's shape, C and R off the column block, K = 1, one element, R past one DataCopyPad
# (4095 rows) with one slab; R = 6000 does not fit UB as a 32-byte column block: the scalar walk.
SHAPES = [(16, 256, 512, 64), (3, 9, 40, 5), (2, 7, 13, 1), (5, 33, 70, 3), (1, 1, 1, 1), (4, 300, 37, 9),
          (1, 5000, 8, 2), (2, 6000, 9, 2)]


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_emulator_matches_torch_at_the_gallery_and_odd_shapes(dtype, tmp_path):
    kernel, project, ctx = _gallery(dtype)
    torch.manual_seed(35)
    for i, (b, r, c, k) in enumerate(SHAPES):
        x = torch.randn(b, r, c).to(torch.float16 if dtype == "f16" else torch.float32)
        idx = torch.randint(0, r, (b, k, c))
        res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx], [torch.gather(x, 1, idx)]),
                           work_dir=tmp_path / str(i))
        assert res.ok, ((b, r, c, k), res.summary() + res.detail)
        gm_reads = sum(blk["gm_get"] for blk in res.counters["blocks"])
        assert (gm_reads > 0) == (r * 32 > 188416), ((b, r, c, k), gm_reads)  # the scalar walk only past UB


@pytest.mark.slow
@pytest.mark.parametrize("shape,bad", [((3, 9, 40, 5), 9), ((3, 9, 40, 5), -1), ((3, 9, 13, 5), 1 << 40),
                                       ((2, 6000, 9, 2), 6000)])
def test_emulator_traps_an_index_outside_the_middle_dim(shape, bad, tmp_path):
    """As the scalar walk (test_gather_middle.py): TRAP, in the vector form (a partial column block's last element
    included) and in the scalar walk it falls back to."""
    kernel, project, ctx = _gallery("f32")
    b, r, c, k = shape
    x, idx = torch.randn(b, r, c), torch.randint(0, r, (b, k, c))
    want = torch.gather(x, 1, idx)
    idx[b - 1, k - 1, c - 1] = bad
    res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun([x, idx], [want]), work_dir=tmp_path / "bad")
    assert not res.ok and "TRAP" in [e.code for e in res.sim_errors], res.summary() + res.detail


@pytest.mark.slow
def test_a_core_cap_holds(tmp_path):
    """`split(A * K, cores=3)`: the host launches at most 3 blocks for the (group, column block) items."""
    x, idx = torch.randn(4, 9, 40), torch.randint(0, 9, (4, 5, 40))
    inputs = [x, idx, torch.zeros(4, 5, 40, dtype=torch.int32)]
    blocks = []
    for cores in ("AIV", "3"):
        head = HEAD.replace("split(A * K, cores=AIV)", f"split(A * K, cores={cores})")
        kernel = tile_kernel(head, "store(y[r, :], gather(x, load(e[r, :])))", "cap.adsl")
        project, ctx = lower(kernel, "ascend910b1", "cap.adsl")
        assert ctx.lowered.kind is ir.KernelKind.GATHER_MIDDLE
        res = validate_sim(kernel, ctx.lowered, project, ctx, TaskRun(inputs, [torch.gather(x, 1, idx)]),
                           work_dir=tmp_path / cores)
        assert res.ok, res.summary() + res.detail
        blocks.append(res.counters["blockDim"])
    assert blocks[0] > 3 >= blocks[1], blocks
