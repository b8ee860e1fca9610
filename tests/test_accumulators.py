"""Cross-core accumulators, several split loops, kernel-scope scalars and stores: parsing, errors,
the interpreter, and the emulator catching a broken combine."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import ascend_dsl
from ascend_dsl import interpreter, ir
from ascend_dsl.diagnostics import DslError
from lowering import lower
from npu_harness.task import TaskRun
from npu_harness.validate import validate_sim

HEAD = '''from ascend_dsl import kernel, Tensor, f32

@kernel
def k(x: Tensor[f32, "N"], out: Tensor[f32, "1"]):
'''

SUM = HEAD + '''    total = 0.0
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            total += sum(load(x[t]))
    store(out[0], total / N)
'''


def _kernel(text: str) -> ir.Kernel:
    return ascend_dsl.parse_text(text, file="acc.adsl")[0].instantiate()


def _error(text: str) -> DslError:
    with pytest.raises(DslError) as ei:
        k = _kernel(text)
        lower(k, "ascend910b1", "acc.adsl")
    return ei.value


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_accumulator_ir_shape():
    k = _kernel(SUM)
    kinds = [type(s).__name__ for s in k.body]
    assert kinds == ["AccDecl", "SplitLoop", "ScalarStore"]
    acc = next(s for s in ir.walk(k.body) if isinstance(s, ir.Accumulate))
    assert (acc.name, acc.combine, acc.reduce) == ("total", ir.Combine.ADD, "reduce_sum")
    assert [p.name for p in k.outputs] == ["out"]


@pytest.mark.parametrize("combine,init,expect", [("add", 0.0, "sum"), ("max", -1e30, "amax"), ("min", 1e30, "amin")])
def test_interpreter_combines_per_core_values(combine, init, expect):
    update = {"add": "total += sum(load(x[t]))", "max": "total = max(total, max(load(x[t])))",
              "min": "total = min(total, min(load(x[t])))"}[combine]
    text = SUM.replace("total = 0.0", f"total = {init}").replace("total += sum(load(x[t]))", update) \
              .replace("total / N", "total")
    k = _kernel(text)
    x = torch.randn(10007)
    out = torch.zeros(1)
    interpreter.run(k, {"x": x, "out": out}, num_cores=3, tile=512)
    assert out.item() == pytest.approx(getattr(x, expect)().item(), rel=1e-5, abs=1e-5)


def test_kernel_scope_value_that_is_not_constant_is_a_scalar():
    text = SUM.replace("    store(out[0], total / N)", "    avg = total / N\n    store(out[0], avg * 2.0)")
    k = _kernel(text)
    assert isinstance(k.body[2], ir.ScalarAssign) and k.body[2].name == "avg"


def test_accumulator_read_inside_its_own_loop_is_an_error():
    text = SUM.replace("total += sum(load(x[t]))", "total += sum(load(x[t]) * total)")
    e = _error(text)
    d = e.diagnostics[0]
    assert d.code == "KERNEL-STRUCTURE" and "before its split loop has ended" in d.message
    assert d.span.line == _line_of(text, "total += sum")


def test_accumulator_updated_without_a_reduction_is_an_error():
    text = SUM.replace("total += sum(load(x[t]))", "total += load(x[t])")
    d = _error(text).diagnostics[0]
    assert d.code == "UNSUPPORTED" and "total += sum(v)" in d.message
    assert d.span.line == _line_of(text, "total += load")


def test_plus_equals_on_a_non_accumulator_is_an_error():
    text = SUM.replace("total += sum(load(x[t]))", "other += sum(load(x[t]))")
    d = _error(text).diagnostics[0]
    assert d.code == "UNDEFINED-NAME" and "not an accumulator" in d.message and "other = 0.0" in d.hint


def test_accumulating_again_after_the_combine_is_an_error():
    second = '''    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            total += sum(load(x[t]))
'''
    text = SUM.replace("    store(out[0], total / N)\n", second + "    store(out[0], total / N)\n")
    d = _error(text).diagnostics[0]
    assert d.code == "KERNEL-STRUCTURE" and "already combined" in d.message


def test_kernel_scope_store_needs_element_zero():
    text = SUM.replace("store(out[0], total / N)", "store(out[1], total / N)")
    d = _error(text).diagnostics[0]
    assert d.code == "INDEX" and "element 0" in d.message


def test_minmax_update_must_name_the_accumulator_first():
    text = SUM.replace("total += sum(load(x[t]))", "total = max(max(load(x[t])), total)")
    d = _error(text).diagnostics[0]
    assert d.code == "UNSUPPORTED" and "total = max(total, max(v))" in d.message


def test_splits_over_different_extents_are_reported():
    text = '''from ascend_dsl import kernel, Tensor, f32

@kernel
def k(x: Tensor[f32, "N"], y: Tensor[f32, "M"]):
    total = 0.0
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            total += sum(load(x[t]))
    for blk in split(M, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], load(x[t]) * total)
'''
    with pytest.raises(DslError) as ei:
        lower(_kernel(text), "ascend910b1", "acc.adsl")
    assert ei.value.diagnostics[0].code == "UNSUPPORTED" and "same extent" in ei.value.diagnostics[0].message


def test_emitted_combine_uses_workspace_and_syncall():
    project, _ = lower(_kernel(SUM), "ascend910b1", "acc.adsl")
    code = project.files["k_kernel.cpp"]
    assert "GM_ADDR workspace" in code and "SyncAll();" in code
    # one accumulator: its running-value block (lane 0 the value, the other lanes the combine's identity) is the
    # slot, copied out as it stands; no scalar SetValue builds it
    assert "DataCopy(workspaceGm_[GetBlockIdx() * 8], accSlot_totalBuf.Get<float>(), 8);" in code
    assert "slots.SetValue" not in code
    assert project.manifest["workspace_bytes_per_core"] == 32
    two = SUM.replace("    total = 0.0\n", "    total = 0.0\n    big = -1e30\n").replace(
        "total += sum(load(x[t]))", "total += sum(load(x[t]))\n            big = max(big, max(load(x[t])))").replace(
        "total / N", "total / N + big")
    code = lower(_kernel(two), "ascend910b1", "acc.adsl")[0].files["k_kernel.cpp"]
    assert "DataCopy(workspaceGm_[GetBlockIdx() * 8], slots, 8);" in code  # two values: the slot built lane by lane
    assert "slots.SetValue(1, big_);" in code


@pytest.mark.slow
def test_emulator_reports_a_slot_copied_before_the_last_add(tmp_path):
    """Planted bug: the slot copied out of the running-value block without waiting for the vector unit's last
    Add into it (the V_MTE3 flag dropped): the emulator reports the hazard or the total comes out wrong."""
    k = _kernel(SUM)
    project, ctx = lower(k, "ascend910b1", "acc.adsl")
    x = torch.rand(50000) + 0.5
    run = TaskRun([x], [(x.sum() / x.numel()).reshape(1)])
    code = project.files["k_kernel.cpp"]
    flag = ("SetFlag<HardEvent::V_MTE3>(EVENT_ID0);  // this core's running value is final: its block is the "
            "combine's slot")
    assert flag in code
    bad_code = code.replace(flag, "").replace("WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);", "", 1)
    bad = dataclasses.replace(project, files={**project.files, "k_kernel.cpp": bad_code})
    result = validate_sim(k, ctx.lowered, bad, ctx, run, work_dir=tmp_path / "bad")
    assert not result.ok, result.summary()


@pytest.mark.slow
def test_emulator_reports_a_combine_without_syncall(tmp_path):
    """Planted bug: drop the SyncAll. Core 0 then reads the other cores' slots before they are
    written (blocks run in order until one waits in SyncAll); the workspace starts poisoned (NaN),
    so the result cannot come out right by accident."""
    k = _kernel(SUM)
    project, ctx = lower(k, "ascend910b1", "acc.adsl")
    x = torch.randn(50000)
    run = TaskRun([x], [(x.sum() / x.numel()).reshape(1)])
    good = validate_sim(k, ctx.lowered, project, ctx, run, work_dir=tmp_path / "good")
    assert good.ok, good.detail
    code = project.files["k_kernel.cpp"].replace("SyncAll();", "")
    bad = dataclasses.replace(project, files={**project.files, "k_kernel.cpp": code})
    result = validate_sim(k, ctx.lowered, bad, ctx, run, work_dir=tmp_path / "bad")
    assert not result.ok
    # caught as a wrong total, or (depending on which block reaches the combine first) by the cross-core check
    assert [c.name for c in result.comparisons if not c.ok] == ["out"] or \
        any(e.code == "GM-RACE" for e in result.sim_errors), result.summary() + "\n" + result.detail


def test_interpreter_adds_per_core_sums_in_the_kernels_halving_tree():
    """The order is the kernel's (snippets/acc_combine): 4 cores add [0] + [2] and [1] + [3], so 1e20 + 1 is never
    formed (core order gives 1); 3 cores: [0] + [2], then + [1]."""
    assert interpreter._tree_sum([1e20, 1.0, -1e20, 1.0]) == [2.0]
    assert interpreter._tree_sum([1e20, 1.0, -1e20]) == [1.0]
    assert interpreter._tree_sum([5.0]) == [5.0] and interpreter._tree_sum([]) == []


#: two sums in one split loop: lane 0 and lane 1 of each slot, added by the halving tree
TWO_SUMS = SUM.replace("    total = 0.0\n", "    total = 0.0\n    sq = 0.0\n").replace(
    "total += sum(load(x[t]))", "total += sum(load(x[t]))\n            sq += sum(load(x[t]) * load(x[t]))").replace(
    "total / N", "total / N + sq")


def test_emitted_sum_combine_adds_the_slots_as_vectors():
    code = lower(_kernel(TWO_SUMS), "ascend910b1", "acc.adsl")[0].files["k_kernel.cpp"]
    assert "Add(slots, slots, slots[(n - h) * 8], h * 8);" in code and "total_ += slots.GetValue(0);" in code
    # one sum: one ReduceSum over the slots (the other lanes hold 0), its result in the one-element math block
    code = lower(_kernel(SUM), "ascend910b1", "acc.adsl")[0].files["k_kernel.cpp"]
    assert "ReduceSum(slots[GetBlockNum() * 8], slots, slots[GetBlockNum() * 8 + 8], " in code
    assert "total_ += slots.GetValue(GetBlockNum() * 8);" in code and "Add(slots" not in code
    maxed = SUM.replace("total = 0.0", "total = -1e30").replace("total += sum(load(x[t]))",
                                                                "total = max(total, max(load(x[t])))")
    code = lower(_kernel(maxed), "ascend910b1", "acc.adsl")[0].files["k_kernel.cpp"]
    assert "slots.GetValue(c * 8 + 0)" in code and "Add(slots" not in code  # max: the scalar fold in core order


@pytest.mark.slow
def test_emulator_reports_a_sum_tree_that_drops_the_middle_slot(tmp_path):
    """Planted bug: the halving tree keeps n / 2 slots instead of n - n / 2, so an odd count of cores (7 here:
    4096 elements per core) loses the middle core's sum; the right tree passes at 7 and at 1 core."""
    k = _kernel(TWO_SUMS)
    project, ctx = lower(k, "ascend910b1", "acc.adsl")
    x = torch.rand(4096 * 7 - 3) + 0.5  # positive: no cancellation hides a lost part

    def run_of(x):
        return TaskRun([x], [(x.sum() / x.numel() + (x * x).sum()).reshape(1)])
    run = run_of(x)
    assert validate_sim(k, ctx.lowered, project, ctx, run, work_dir=tmp_path / "good").ok
    one = torch.rand(1000)
    assert validate_sim(k, ctx.lowered, project, ctx, run_of(one), work_dir=tmp_path / "one").ok
    code = project.files["k_kernel.cpp"]
    assert "n -= h;" in code
    bad = dataclasses.replace(project, files={**project.files, "k_kernel.cpp": code.replace("n -= h;", "n = h;")})
    result = validate_sim(k, ctx.lowered, bad, ctx, run, work_dir=tmp_path / "bad")
    assert [c.name for c in result.comparisons if not c.ok] == ["out"], result.summary()


def test_interpreter_adds_a_single_sum_as_the_combines_reduce_sum():
    """One sum: the kernel's ReduceSum adds 8 slots per repeat as a binary tree (zero-padded to a power of two)
    and the repeats' sums in order: 1e20 and -1e20 in one repeat cancel before the 1s are added; across repeats
    the order is left to right."""
    assert interpreter._slots_reduce_sum([1e20, -1e20, 1.0, 1.0]) == [2.0]
    assert interpreter._slots_reduce_sum([1.0, 1e20, -1e20]) == [0.0]  # (1 + 1e20) + (-1e20 + 0)
    nine = [1e20] + [0.0] * 7 + [1.0]  # repeat 1: 1e20; repeat 2: 1.0; 1e20 + 1.0 rounds to 1e20
    assert interpreter._slots_reduce_sum(nine) == [1e20 + 1.0]
    assert interpreter._slots_reduce_sum([5.0]) == [5.0] and interpreter._slots_reduce_sum([]) == []


@pytest.mark.slow
def test_emulator_reports_a_reduce_sum_combine_that_drops_the_last_core(tmp_path):
    """Planted bug: the combine's ReduceSum over one slot fewer than the cores (7 here) loses the last core's sum;
    the right count passes at 7 cores, at 1 core and at 13 (two repeats of slots, the second partial)."""
    k = _kernel(SUM)
    project, ctx = lower(k, "ascend910b1", "acc.adsl")
    for n in (4096 * 7 - 3, 1000, 4096 * 13 - 5):
        x = torch.rand(n) + 0.5
        assert validate_sim(k, ctx.lowered, project, ctx, TaskRun([x], [(x.sum() / x.numel()).reshape(1)]),
                            work_dir=tmp_path / f"good{n}").ok
    x = torch.rand(4096 * 7 - 3) + 0.5
    code = project.files["k_kernel.cpp"]
    whole = "static_cast<int32_t>(GetBlockNum()) * 8);"
    assert whole in code
    bad = dataclasses.replace(project, files={**project.files, "k_kernel.cpp": code.replace(
        whole, "(static_cast<int32_t>(GetBlockNum()) - 1) * 8);")})
    result = validate_sim(k, ctx.lowered, bad, ctx, TaskRun([x], [(x.sum() / x.numel()).reshape(1)]),
                          work_dir=tmp_path / "bad")
    assert [c.name for c in result.comparisons if not c.ok] == ["out"], result.summary()


GATHER = '''from ascend_dsl import kernel, Tensor, f32, i64

@kernel
def k(x: Tensor[f32, "B, C"], idx: Tensor[i64, "B"], y: Tensor[f32, "B"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(y[r], gather(load(x[r, :]), load(idx[r])))
'''


def test_gather_picks_one_element_per_row_in_the_interpreter():
    k = _kernel(GATHER)
    x = torch.randn(37, 11)
    idx = torch.randint(0, 11, (37,))
    y = torch.zeros(37)
    interpreter.run(k, {"x": x, "idx": idx, "y": y}, num_cores=3, tile=64)
    assert torch.equal(y, x[torch.arange(37), idx])


@pytest.mark.parametrize("bad,needle", [
    ("gather(load(x[r, :]), load(x[r, :]))", "index is i32 or i64"),
    ("gather(load(idx[r]), load(idx[r]))", "whole rows"),
])
def test_gather_argument_errors(bad, needle):
    text = GATHER.replace("gather(load(x[r, :]), load(idx[r]))", bad)
    d = _error(text).diagnostics[0]
    assert d.code == "TYPE" and needle in d.message
    assert d.span.line == _line_of(text, "store(y[r]")


PER_CHANNEL = '''from ascend_dsl import kernel, Tensor, f32

@kernel
def k(x: Tensor[f32, "N, C, H, W"], w: Tensor[f32, "C"], y: Tensor[f32, "N, C, H, W"]):
    for blk in split(N * C, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            store(y[r, :], load(x[r, :]) * load(w[r]))
'''


def test_per_channel_tensor_gives_each_plane_its_channel_value():
    k = _kernel(PER_CHANNEL)
    load = next(e for s in ir.walk(k.body) if isinstance(s, ir.Store) for e in ir.walk_expr(s.value)
                if isinstance(e, ir.Load) and e.tensor == "w")
    assert load.index.period == "C" and load.type.layout is ir.Layout.COL
    x, w = torch.randn(3, 5, 4, 6), torch.randn(5)
    y = torch.zeros_like(x)
    interpreter.run(k, {"x": x, "w": w, "y": y}, num_cores=2, tile=48)  # tiles cut across channels
    assert torch.equal(y, x * w.reshape(1, 5, 1, 1))
    project, _ = lower(k, "ascend910b1", "acc.adsl")
    assert "wGm.GetValue((rowStart_ + offset + i) % wGmPeriod_)" in project.files["k_kernel.cpp"]


def test_a_tensor_over_other_symbols_is_still_an_index_error():
    text = PER_CHANNEL.replace('w: Tensor[f32, "C"]', 'w: Tensor[f32, "H"]')
    d = _error(text).diagnostics[0]
    assert d.code == "INDEX" and "tensor over the rows" in d.message


SCALE = '''from ascend_dsl import kernel, Tensor, f32

@kernel
def k(x: Tensor[f32, "N"], scale: Tensor[f32, "1"], y: Tensor[f32, "N"]):
    s = load(scale[0])
    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], load(x[t]) * s)
'''


def test_kernel_scope_load_reads_element_zero_as_a_scalar():
    k = _kernel(SCALE)
    assert isinstance(k.body[0], ir.ScalarLoad) and [p.name for p in k.inputs] == ["x", "scale"]
    x, y = torch.randn(1000), torch.zeros(1000)
    interpreter.run(k, {"x": x, "scale": torch.tensor([2.5]), "y": y}, num_cores=3, tile=256)
    assert torch.equal(y, x * 2.5)
    code = lower(k, "ascend910b1", "acc.adsl")[0].files["k_kernel.cpp"]
    assert "s_ = static_cast<float>(scaleGm.GetValue(0));" in code and "scaleGm.SetGlobalBuffer((__gm__ float*)scale, 1)" in code


def test_kernel_scope_load_of_another_element_is_an_error():
    text = SCALE.replace("load(scale[0])", "load(scale[1])")
    d = _error(text).diagnostics[0]
    assert d.code == "INDEX" and "element 0" in d.message and d.span.line == _line_of(text, "load(scale[1])")


ROWS = '''from ascend_dsl import kernel, Tensor, f32, i32

@kernel
def k(x: Tensor[f32, "B, D"], w: Tensor[f32, "D"], n: Tensor[i32, "B"], out: Tensor[f32, "1"]):
    total = 0.0
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            total += sum(load(x[r, :]))
    store(out[0], total)
'''


@pytest.mark.parametrize("update,code,needle", [
    ("total += sum(load(w[:]))", "TYPE", "row vector"),
    ("total += sum(load(n[r]))", "DTYPE-UNSUPPORTED", "accumulating i32"),
    ("total += sum(load(x[r, :]) > 0.0)", "TYPE", "reduces a tile value"),
])
def test_accumulated_value_errors(update, code, needle):
    text = ROWS.replace("total += sum(load(x[r, :]))", update)
    d = _error(text).diagnostics[0]
    assert d.code == code and needle in d.message and d.span.line == _line_of(text, "total +=")


def test_kernel_scope_values_are_scalars():
    text = SUM.replace("    store(out[0], total / N)", "    v = load(x[0]) * 2.0\n    store(out[0], total / N)")
    d = _error(text).diagnostics[0]
    assert d.code == "INDEX" and "s = load(x[0])" in d.message and d.span.line == _line_of(text, "v = load")
    text = SUM.replace("    store(out[0], total / N)", "    v = total * N\n    w = sum(v)\n    store(out[0], w)")
    d = _error(text).diagnostics[0]  # a reduction needs a tile
    assert d.code in ("ARGS", "TYPE") and d.span.line == _line_of(text, "w = sum(v)")


def test_more_than_eight_accumulators_in_one_split_loop_is_reported():
    names = [f"a{i}" for i in range(9)]
    decls = "".join(f"    {n} = 0.0\n" for n in names)
    updates = "".join(f"            {n} += sum(load(x[t]))\n" for n in names)
    text = HEAD + decls + '''    for blk in split(N, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
''' + updates + "    store(out[0], " + " + ".join(names) + ")\n"
    d = _error(text).diagnostics[0]
    assert d.code == "UNSUPPORTED" and "9 accumulators" in d.message and "at most 8" in d.message


def test_a_cube_split_is_the_only_loop_of_its_kernel():
    text = '''from ascend_dsl import kernel, Tensor, f32, f16

@kernel
def k(a: Tensor[f16, "M, K"], b: Tensor[f16, "K, N"], c: Tensor[f32, "M, N"], x: Tensor[f32, "L"],
      y: Tensor[f32, "L"]):
    for blk in split(L, cores=AIV):
        for t in tile(blk, size=auto, buffers=2):
            store(y[t], load(x[t]))
    for blk in split(M, N, cores=AIC):
        with cube:
            acc = matmul(a[blk], b[blk])
        with vector:
            store(c[blk], acc)
'''
    d = _error(text).diagnostics[0]
    assert d.code == "UNSUPPORTED" and "a cube split follows only cube splits" in d.message
    assert d.span.line == _line_of(text, "cores=AIC")
