"""Slot (vector) accumulators: `s = zeros(C)` / `zeros(N * G)`, `s[r] += sum(v, axis=1)`, `s[r]`:
parsing and the row -> slot mapping, errors, the interpreter against PyTorch, printing, emitted
code, and the emulator catching a broken combine and bad launch shapes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

import ascend_dsl
from ascend_dsl import interpreter, ir, printer
from ascend_dsl.diagnostics import DslError
from lowering import lower
from npu_harness.task import TaskRun
from npu_harness.validate import validate_sim

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "normalization"

HEAD = '''from ascend_dsl import kernel, Tensor, f32, i32

@kernel
def k(x: Tensor[f32, "N, C, H, W"], w: Tensor[f32, "C"], y: Tensor[f32, "N, C, H, W"], G: i32 = 2):
'''

# y = x - (channel mean over N, H, W): one accumulating loop, one loop reading s[r]
CENTER = HEAD + '''    s = zeros(C)
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            s[r] += sum(load(x[r, :]), axis=1)
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], load(x[r, :]) - s[r] / (N * H * W))
'''

GROUPS = CENTER.replace("s = zeros(C)", "s = zeros(N * G)").replace("s[r] / (N * H * W)",
                                                                     "s[r] * cast(G, f32) / (C * H * W)")


@pytest.fixture(autouse=True)
def _seeded():
    torch.manual_seed(0)  # inputs of every test are reproducible


def _kernel(text: str) -> ir.Kernel:
    return ascend_dsl.parse_text(text, file="slots.adsl")[0].instantiate()


def _error(text: str) -> DslError:
    with pytest.raises(DslError) as ei:
        lower(_kernel(text), "ascend910b1", "slots.adsl")
    return ei.value


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_mapping_follows_the_accumulator_shape():
    per_channel = _kernel(CENTER).body[0]
    assert per_channel == ir.SlotAccDecl("s", ("C",), (), ())
    grouped = _kernel(GROUPS).body[0]
    assert grouped == ir.SlotAccDecl("s", ("N", "G"), ("C",), ("G",))
    acc = next(s for s in ir.walk(_kernel(CENTER).body) if isinstance(s, ir.SlotAccumulate))
    assert (acc.name, acc.value.type.layout) == ("s", ir.Layout.COL)
    read = next(e for s in ir.walk(_kernel(CENTER).body) if isinstance(s, ir.Store) for e in ir.walk_expr(s.value)
                if isinstance(e, ir.Load) and e.tensor == "s")
    assert read.index.acc and read.type == ir.tile_of(ascend_dsl.f32, ir.Layout.COL)


@pytest.mark.parametrize("text,groups", [(CENTER, None), (GROUPS, 2), (GROUPS, 3)])
def test_interpreter_matches_torch(text, groups):
    k = _kernel(text)
    x, w = torch.randn(3, 6, 5, 7) * 2 + 1, torch.randn(6)
    y = torch.zeros_like(x)
    scalars = {} if groups is None else {"G": groups}
    interpreter.run(k, {"x": x, "w": w, "y": y}, scalars, num_cores=4, tile=70)  # tiles cut across channels
    if groups is None:
        expect = x - x.mean(dim=(0, 2, 3), keepdim=True)
    else:
        g = x.reshape(3, groups, -1)
        expect = (g - g.mean(dim=2, keepdim=True)).reshape(x.shape)
    assert torch.allclose(y, expect, atol=1e-5)


def test_interpreter_rejects_groups_that_do_not_divide():
    k = _kernel(GROUPS)
    x = torch.randn(2, 6, 3, 4)
    with pytest.raises(DslError) as ei:
        interpreter.run(k, {"x": x, "w": torch.randn(6), "y": torch.zeros_like(x)}, {"G": 4}, num_cores=2)
    d = ei.value.diagnostics[0]
    assert d.code == "SHAPE" and "does not divide" in d.message and d.span.line == _line_of(GROUPS, "zeros(N * G)")


@pytest.mark.parametrize("name", ["batch_norm_train", "group_norm"])
def test_gallery_kernels_match_torch_in_the_interpreter(name):
    k = ascend_dsl.load_file(EXAMPLES / f"{name}.adsl")[0].instantiate()
    x, w, b = torch.randn(3, 6, 33, 57) * 3 + 2, torch.randn(6), torch.randn(6)
    y = torch.zeros_like(x)
    scalars = {"num_groups": 3} if name == "group_norm" else {}
    interpreter.run(k, {"x": x, "weight": w, "bias": b, "y": y}, scalars, num_cores=5, tile=4000)
    expect = (torch.nn.functional.group_norm(x, 3, w, b, 1e-5) if name == "group_norm" else
              torch.nn.functional.batch_norm(x, None, None, w, b, training=True, eps=1e-5))
    assert torch.allclose(y, expect, atol=1e-4)


def test_printer_round_trips():
    for text in (CENTER, GROUPS):
        k = _kernel(text)
        again = _kernel("from ascend_dsl import kernel, Tensor, f32, i32\n" + printer.kernel(k))
        assert again.body == k.body


@pytest.mark.parametrize("old,new,code,needle,at", [
    ("s[r] += sum(load(x[r, :]), axis=1)", "s[blk] += sum(load(x[r, :]), axis=1)", "INDEX",
     "indexed by the row tile variable", "s[blk] +="),
    ("s[r] += sum(load(x[r, :]), axis=1)", "s[r] += sum(load(x[r, :]) - s[r], axis=1)", "KERNEL-STRUCTURE",
     "before its split loop has ended", "s[r] += sum"),
    ("s[r] += sum(load(x[r, :]), axis=1)", "s += sum(load(x[r, :]))", "INDEX", "s[r] += sum(v, axis=1)", "s += sum"),
    ("s[r] += sum(load(x[r, :]), axis=1)", "s[r] += load(x[r, :])", "TYPE", "one value per row", "s[r] +="),
    ("s[r] += sum(load(x[r, :]), axis=1)", "t[r] += sum(load(x[r, :]), axis=1)", "UNDEFINED-NAME",
     "not a slot accumulator", "t[r] +="),
    ("s = zeros(C)", "s = zeros(H)", "INDEX", "do not map onto zeros(H)", "s[r] += sum"),
    ("s = zeros(C)", "s = zeros(C * G)", "INDEX", "do not map onto zeros(C * G)", "s[r] += sum"),
    ("s = zeros(C)", "s = zeros(G * N)", "ARGS", "int parameters come after", "zeros(G * N)"),
    ("s = zeros(C)", "s = zeros(eps)", "UNDEFINED-NAME", "not defined", "zeros(eps)"),
    ("s[r] / (N * H * W)", "s / (N * H * W)", "INDEX", "read it per row", "store(y[r, :]"),
    ("s[r] / (N * H * W)", "s[blk] / (N * H * W)", "INDEX", "indexed by the row tile variable", "store(y[r, :]"),
])
def test_errors(old, new, code, needle, at):
    text = CENTER.replace(old, new)
    d = _error(text).diagnostics[0]
    assert d.code == code and needle in d.message, d.render() if hasattr(d, "render") else d
    assert d.span.line == _line_of(text, at)


def test_float_parameter_is_not_a_slot_count():
    text = CENTER.replace("G: i32 = 2", "G: f32 = 2.0").replace("zeros(C)", "zeros(N * G)")
    d = _error(text).diagnostics[0]
    assert d.code == "TYPE" and "int parameters" in d.message


def test_scalar_accumulator_indexed_like_a_slot_one_is_an_error():
    text = CENTER.replace("s = zeros(C)", "s = 0.0")
    d = _error(text).diagnostics[0]
    assert d.code == "INDEX" and "scalar accumulator" in d.message


def test_slot_accumulator_needs_a_row_loop():
    text = '''from ascend_dsl import kernel, Tensor, f32

@kernel
def k(x: Tensor[f32, "N"], y: Tensor[f32, "N"]):
    s = zeros(N)
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            s[t] += load(x[t])
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], load(x[t]))
'''
    d = _error(text).diagnostics[0]
    assert d.code == "UNSUPPORTED" and "need a row loop" in d.message


def test_slot_accumulator_never_updated_and_accumulated_twice():
    text = CENTER.replace("    s = zeros(C)\n", "    s = zeros(C)\n    q = zeros(C)\n")
    d = _error(text).diagnostics[0]
    assert d.code == "KERNEL-STRUCTURE" and "'q' is never updated" in d.message
    again = CENTER.replace("store(y[r, :], load(x[r, :]) - s[r] / (N * H * W))",
                           "s[r] += sum(load(x[r, :]), axis=1)\n            store(y[r, :], load(x[r, :]))")
    d = _error(again).diagnostics[0]
    assert d.code == "KERNEL-STRUCTURE" and "already combined" in d.message


def test_emitted_code_combines_through_the_workspace():
    project, _ = lower(_kernel(GROUPS), "ascend910b1", "slots.adsl")
    code = project.files["k_kernel.cpp"]
    # one SyncAll in the combine (the others: rows split over core groups, lowering/emit/row_groups.py)
    assert code.count("SyncAll();") - code.count("SyncAll();  // every partial of the group has landed") == 1
    assert "DataCopy(workspaceGm_[sPart_ + GetBlockIdx() * sPad_], accVec_sBuf.Get<float>()" in code
    assert "Add(tot, tot, part[j * sPad_], static_cast<int32_t>(sPad_));" in code
    assert "DataCopy(part, workspaceGm_[sPart_ + c0 * sPad_], static_cast<uint32_t>(cores * sPad_));" in code
    assert "((rowStart_ + tileRow_ + i) / sRowsPerSlot_) % sSlots_" in code
    assert project.manifest["workspace_bytes_per_core"] == "(8 * ((tiling.sSlots + 7) / 8 * 8) + 64)"  # + row groups
    tiling = project.files["k_tiling.h"]
    assert "const uint64_t sRowsPerSlot = (C) / (G);" in tiling


def _center_run(x: torch.Tensor, w: torch.Tensor, groups: int | None = None) -> TaskRun:
    if groups is None:
        return TaskRun([x, w], [x - x.mean(dim=(0, 2, 3), keepdim=True)])
    g = x.reshape(x.shape[0], groups, -1)
    return TaskRun([x, w], [(g - g.mean(dim=2, keepdim=True)).reshape(x.shape)], attrs={"G": groups})


@pytest.mark.slow
def test_emulator_reports_a_combine_without_syncall(tmp_path):
    """Planted bug: drop the SyncAll. Core 0 then reads the other cores' partial vectors before they
    are written (the workspace starts NaN-filled), so the result cannot come out right by accident."""
    k = _kernel(CENTER)
    project, ctx = lower(k, "ascend910b1", "slots.adsl")
    x = torch.randn(4, 6, 16, 24)
    run = _center_run(x, torch.randn(6))
    good = validate_sim(k, ctx.lowered, project, ctx, run, work_dir=tmp_path / "good")
    assert good.ok, good.detail
    code = project.files["k_kernel.cpp"].replace("SyncAll();", "")
    bad = dataclasses.replace(project, files={**project.files, "k_kernel.cpp": code})
    result = validate_sim(k, ctx.lowered, bad, ctx, run, work_dir=tmp_path / "bad")
    assert not result.ok
    assert [c.name for c in result.comparisons if not c.ok] == ["y"]


@pytest.mark.slow
def test_emulator_reports_a_read_past_the_workspace(tmp_path):
    """Planted bug: a workspace bound one core's totals short; the last core's reads leave it."""
    k = _kernel(CENTER)
    project, ctx = lower(k, "ascend910b1", "slots.adsl")
    code = project.files["k_kernel.cpp"].replace("workspace, sTot_ + GetBlockNum() * sPad_)",
                                                 "workspace, sTot_ + (GetBlockNum() - 1) * sPad_)")
    assert code != project.files["k_kernel.cpp"]
    bad = dataclasses.replace(project, files={**project.files, "k_kernel.cpp": code})
    result = validate_sim(k, ctx.lowered, bad, ctx, _center_run(torch.randn(4, 6, 16, 24), torch.randn(6)),
                          work_dir=tmp_path)
    assert not result.ok and "GM-OOB" in result.detail


@pytest.mark.slow
def test_launch_rejects_groups_that_do_not_divide(tmp_path):
    k = _kernel(GROUPS)
    project, ctx = lower(k, "ascend910b1", "slots.adsl")
    good = validate_sim(k, ctx.lowered, project, ctx, _center_run(torch.randn(3, 6, 9, 10), torch.randn(6), 3),
                        work_dir=tmp_path / "good")
    assert good.ok, good.detail
    x = torch.randn(2, 6, 3, 4)
    run = TaskRun([x, torch.randn(6)], [x], attrs={"G": 4})
    result = validate_sim(k, ctx.lowered, project, ctx, run, work_dir=tmp_path / "bad")
    assert not result.ok and "error[SHAPE]: G must be positive and divide C" in result.detail
    assert "slots.adsl:5" in result.detail


@pytest.mark.slow
def test_launch_rejects_more_slots_than_fit_ub(tmp_path):
    """C = 30000 channels: two f32 vectors of 30000 slots (240 KB) do not fit UB while combining."""
    k = _kernel(CENTER)
    project, ctx = lower(k, "ascend910b1", "slots.adsl")
    x = torch.randn(1, 30000, 1, 8)
    result = validate_sim(k, ctx.lowered, project, ctx, _center_run(x, torch.randn(30000)), work_dir=tmp_path)
    assert not result.ok and "error[UB-CAPACITY]: s = zeros(C) at slots.adsl:5 keeps one f32 per slot" in result.detail
    assert "8 B x C slots exceed the 184320 B of UB left for it" in result.detail


@pytest.mark.slow
def test_combine_in_chunks_of_cores_when_all_partials_do_not_fit_ub(tmp_path):
    """C = 10000 slots: every core's partial vector (48 x 40 KB) does not fit UB at once, so the
    combine copies them in a few cores at a time; the totals must come out the same."""
    k = _kernel(CENTER)
    project, ctx = lower(k, "ascend910b1", "slots.adsl")
    x = torch.randn(2, 10000, 1, 8)
    result = validate_sim(k, ctx.lowered, project, ctx, _center_run(x, torch.randn(10000)), work_dir=tmp_path)
    assert result.ok, result.detail


MIXED = '''from ascend_dsl import kernel, Tensor, f32, f16

@kernel
def k(x: Tensor[f16, "N, C, H, W"], y: Tensor[f32, "N, C, H, W"]):
    total = 0.0
    s = zeros(C)
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            xt = load(x[r, :])
            s[r] += sum(xt, axis=1)
            total += sum(cast(xt, f32))
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], cast(load(x[r, :]), f32) * 0.0 + s[r] / (N * H * W) + total / (N * C * H * W))
'''


def _mixed_expect(x: torch.Tensor) -> torch.Tensor:
    """Each plane: its channel's mean plus the mean of everything."""
    xf = x.float()
    return (xf.mean(dim=(0, 2, 3), keepdim=True) + xf.mean()).expand(x.shape).contiguous()


def test_scalar_and_slot_accumulators_in_one_loop_in_the_interpreter():
    k = _kernel(MIXED)
    x = (torch.randn(3, 5, 4, 6, generator=torch.Generator().manual_seed(0)) + 1).half()
    y = torch.zeros(x.shape)
    interpreter.run(k, {"x": x, "y": y}, num_cores=3, tile=50)
    assert torch.allclose(y, _mixed_expect(x), atol=1e-3)


@pytest.mark.slow
def test_scalar_and_slot_accumulators_in_one_loop_in_the_emulator(tmp_path):
    """Both combines after one loop (one SyncAll: the partial vectors are copied out before it); f16
    per-row sums are added into f32 slots; the workspace holds the scalar slots, then the vectors."""
    k = _kernel(MIXED)
    project, ctx = lower(k, "ascend910b1", "slots.adsl")
    code = project.files["k_kernel.cpp"]
    assert code.count("SyncAll();") - code.count("SyncAll();  // every partial of the group has landed") == 1
    assert "sPart_ = GetBlockNum() * 8;" in code
    assert project.manifest["workspace_bytes_per_core"] == "((32 + 8 * ((tiling.sSlots + 7) / 8 * 8)) + 64)"
    # +-1 data: every partial sum is an integer f16 holds exactly, so the f16 row sums (the vector unit's
    # reduction tree rounds in f16) equal the f32 reference's; the test is about the combines, not f16 rounding
    x = (torch.randint(0, 2, (4, 7, 12, 20), generator=torch.Generator().manual_seed(0)) * 2 - 1).half()
    result = validate_sim(k, ctx.lowered, project, ctx, TaskRun([x], [_mixed_expect(x)]), work_dir=tmp_path)
    assert result.ok, result.detail


def test_cap_keeps_channels_a_multiple_of_the_groups():
    """--cap scales the task's sizes; features stays a multiple of num_groups, so the task stays valid."""
    from npu_harness.task import run_task

    run = run_task(EXAMPLES / "group_norm.py", cap=200000)
    assert run.constants["features"] % 8 == 0 and run.constants["features"] < 64, run.constants
    assert run.inputs[0].numel() <= 200000


def test_shape_symbols_named_like_the_row_members_validate(tmp_path):
    """Shape symbols D and Dp read as values: their members (D_, Dp_) once clashed with the row length and
    pitch members of a vector kernel (the C++ did not compile). Now the row members are rowLen_ / rowPitch_."""
    text = CENTER.replace('"N, C, H, W"', '"N, C, D, Dp"').replace("(N * H * W)", "(N * D * Dp)")
    k = _kernel(text)
    project, ctx = lower(k, "ascend910b1", "slots.adsl")
    x = torch.randn(2, 3, 5, 7)
    result = validate_sim(k, ctx.lowered, project, ctx, _center_run(x, torch.randn(3)), work_dir=tmp_path)
    assert result.ok, result.detail
