"""Cost model (npu_harness/cost): parameters per target, sanity and monotonicity of the estimate."""

from __future__ import annotations

import dataclasses
import random

import pytest

from npu_harness.cost import available_targets, estimate, load_params, target_for
from npu_harness.cost.model import TARGETS_DIR

TARGETS = ["ascend910b1", "ascend910b2", "ascend910b3", "ascend910b4", "ascend310p"]


def block(bytes_in: int, bytes_out: int, tiles: int, *, vec: dict | None = None, bufs: int = 2,
          burst: int | None = None) -> dict:
    """Counters of one block of an element-wise kernel: `tiles` transfers in and out."""
    def dma(nbytes: int) -> dict:
        if nbytes == 0:
            return {"bytes": 0, "transfers": 0, "bursts": 0, "hist": []}
        b = burst or max(1, nbytes // tiles)
        bursts = max(1, nbytes // b)
        upper = 32
        while upper < b and upper < (32 << 15):
            upper *= 2
        return {"bytes": nbytes, "transfers": tiles, "bursts": bursts, "hist": [[upper, bursts, nbytes]]}

    if vec is None:
        reps = max(1, bytes_in // 256)
        vec = {"Muls.b32": [tiles, reps]}
    return {"gm2ub": dma(bytes_in), "ub2gm": dma(bytes_out), "ub2ub": dma(0), "atomic_bytes": 0, "vec": vec,
            "ub_get": 0, "ub_set": 0, "gm_get": 0, "gm_set": 0, "cube_macs": 0, "sync_all": 0,
            "in_bufs": bufs, "out_bufs": bufs}


def launch(blocks: list[dict]) -> dict:
    return {"version": 1, "blockDim": len(blocks), "blocks": blocks}


def elementwise(total_bytes: int, cores: int = 48, tiles: int = 16, **kw) -> dict:
    per = total_bytes // cores
    return launch([block(per, per, tiles, **kw) for _ in range(cores)])


def test_every_target_has_a_parameter_file():
    assert sorted(available_targets()) == sorted(TARGETS)
    for t in TARGETS:
        p = load_params(t)
        assert p.clock_ghz > 0 and p.aiv > 0 and p.hbm_gbps > 0
        text = (TARGETS_DIR / f"{t}.toml").read_text()
        assert "ascendc.md §5" in text and "ASSUMPTION" in text  # cited, assumptions marked
    assert "THIN DATA" in (TARGETS_DIR / "ascend310p.toml").read_text()


def test_target_aliases():
    assert target_for("ascend910b") == "ascend910b1"
    with pytest.raises(KeyError):
        target_for("gpu")


def test_more_bytes_more_time():
    times = [estimate(elementwise(n), "ascend910b1").time_us for n in (1 << 20, 1 << 22, 1 << 24, 1 << 26)]
    assert times == sorted(times) and times[0] < times[-1]


def test_memory_bound_elementwise_bottleneck_is_dma():
    e = estimate(elementwise(64 << 20), "ascend910b1")
    assert e.bottleneck in ("MTE2", "MTE3")
    assert e.roofline_kind == "memory"
    assert 0.85 <= e.roofline_fraction <= 1.0  # big, well-tiled, double-buffered: near the roofline


@pytest.mark.parametrize("target", TARGETS)
def test_never_faster_than_the_roofline(target):
    rng = random.Random(1)
    for _ in range(200):
        cores = rng.randint(1, load_params(target).aiv)
        blocks = []
        for _ in range(cores):
            tiles = rng.randint(1, 64)
            vec = {rng.choice(["Add.b32", "Exp.b16", "Div.b32", "Muls.b16"]): [tiles, rng.randint(tiles, 50 * tiles)]}
            blocks.append(block(rng.randint(0, 1 << 22), rng.randint(0, 1 << 22), tiles, vec=vec,
                                bufs=rng.choice([1, 2]), burst=rng.choice([None, 32, 100, 4096])))
        e = estimate(launch(blocks), target)
        assert e.kernel_us >= e.roofline_us * (1 - 1e-9)
        assert 0.0 < e.roofline_fraction <= 1.0
        assert e.time_us == pytest.approx(e.kernel_us + e.launch_overhead_us)
        assert 0.0 < e.load_balance <= 1.0 + 1e-9


def test_double_buffering_overlaps_pipes():
    single = estimate(elementwise(16 << 20, bufs=1), "ascend910b1")
    double = estimate(elementwise(16 << 20, bufs=2), "ascend910b1")
    assert double.kernel_us < single.kernel_us


def test_cube_l1_to_l0_loads_are_an_mte1_pipe():
    """LoadData 2-D / 3-D cycles (the emulator's mte1_cycles) are the MTE1 pipe; unqueued cube work serialises."""
    block = {"cube_macs": 4096 * 1850, "cube_macs_useful": 4096 * 1850}
    base = estimate({"blocks": [block]}, "ascend910b1")
    loaded = estimate({"blocks": [{**block, "mte1_cycles": 1850}]}, "ascend910b1")
    assert loaded.cores[0].pipes_us["MTE1"] == pytest.approx(1.0) and base.cores[0].pipes_us["MTE1"] == 0.0
    assert loaded.kernel_us == pytest.approx(base.kernel_us + 1.0)


def test_a_cube_kernel_ping_ponging_l1_and_l0_overlaps_its_pipes():
    """Hand-off events on two ids for both MTE2 -> MTE1 and MTE1 -> M (two L1 buffers, two L0 halves): the pipes
    overlap over the L1 stages (max + the rest / stages); one id on either side, or a single L1 stage, serialises."""
    block = {"cube_macs": 4096 * 1850, "cube_macs_useful": 4096 * 1850, "mte1_cycles": 1850}
    serial = estimate({"blocks": [block]}, "ascend910b1")
    assert serial.kernel_us == pytest.approx(2.0)

    def flags(l1, l0, stages=4):
        return estimate({"blocks": [{**block, "flags": {"MTE2_MTE1": [stages, l1], "MTE1_M": [4 * stages, l0]}}]}, "ascend910b1")
    pp = flags(2, 2)
    assert pp.cores[0].overlapped and pp.cores[0].iterations == 4
    assert pp.kernel_us == pytest.approx(1.0 + 1.0 / 4)
    assert flags(1, 2).kernel_us == flags(2, 1).kernel_us == pytest.approx(2.0)
    assert flags(2, 2, stages=1).kernel_us == pytest.approx(2.0)  # one stage: nothing to overlap with


def test_small_bursts_are_slower():
    big = estimate(elementwise(8 << 20, tiles=8), "ascend910b1")
    small = estimate(elementwise(8 << 20, tiles=8, burst=64), "ascend910b1")
    assert small.kernel_us > big.kernel_us


def test_more_transfers_cost_latency():
    few = estimate(elementwise(8 << 20, tiles=4), "ascend910b1")
    many = estimate(elementwise(8 << 20, tiles=4096, burst=2048), "ascend910b1")
    assert many.cores[0].pipes_us["MTE2"] > few.cores[0].pipes_us["MTE2"]


def test_vector_heavy_kernel_is_vector_bound():
    per = 1 << 16
    blocks = [block(per, per, 8, vec={"Exp.b16": [4000, 400000]}) for _ in range(48)]
    e = estimate(launch(blocks), "ascend910b1")
    assert e.bottleneck == "V" and e.roofline_kind == "vector"


def test_fewer_cores_slower_for_same_work():
    total = 32 << 20
    assert estimate(elementwise(total, cores=8), "ascend910b1").kernel_us > \
        estimate(elementwise(total, cores=48), "ascend910b1").kernel_us


def test_load_imbalance_is_reported():
    blocks = [block(1 << 20, 1 << 20, 8) for _ in range(7)] + [block(8 << 20, 8 << 20, 8)]
    e = estimate(launch(blocks), "ascend910b1")
    assert e.load_balance < 0.5
    assert max(e.cores, key=lambda c: c.time_us).block == 7


def test_slower_chip_is_slower():
    c = elementwise(64 << 20, cores=40)
    assert estimate(c, "ascend910b4").kernel_us > estimate(c, "ascend910b1").kernel_us
    assert estimate(c, "ascend310p").kernel_us > estimate(c, "ascend910b4").kernel_us


def test_report_text_says_estimate():
    e = estimate(elementwise(1 << 20), "ascend910b1")
    assert "ESTIMATE" in e.text()
    d = e.to_dict()
    assert d["note"].startswith("ESTIMATE") and d["time_us"] == e.time_us


def test_validation_result_has_estimate_fields():
    from npu_harness.validate import ValidationResult

    names = {f.name for f in dataclasses.fields(ValidationResult)}
    assert {"counters", "estimate_us", "report"} <= names
    assert ValidationResult("sim", True).estimate_us is None


def test_a_core_without_output_queues_overlaps_when_its_inputs_are_double_buffered():
    """A reduction into an accumulator has VECIN queues only: nothing on the output side serialises."""
    def only_inputs(bufs: int) -> dict:
        b = block(1 << 20, 0, 16, bufs=bufs)
        del b["out_bufs"]
        return launch([b] * 48)

    assert estimate(only_inputs(2), "ascend910b1").cores[0].overlapped
    assert not estimate(only_inputs(1), "ascend910b1").cores[0].overlapped
    no_queues = block(1 << 20, 0, 16)
    del no_queues["in_bufs"], no_queues["out_bufs"]
    assert not estimate(launch([no_queues]), "ascend910b1").cores[0].overlapped


def _gemm_launch(gm2l1: int, union: int, written: int = 0) -> dict:
    """24 AIC groups of 2 AIV blocks; each group's cube loads `gm2l1` operand bytes (a MIX GEMM's counters)."""
    blk = {"cube_macs": 1 << 20, "cube_macs_useful": 1 << 20, "gm2l1": gm2l1 // 2, "l0c2gm": written // 48}
    return {"aiv_per_aic": 2, "cube_operand_bytes": union, "blocks": [dict(blk) for _ in range(48)]}


def test_cube_operand_rereads_hit_l2_only_when_the_working_set_fits():
    """Operand panels loaded again for the next output block (gm2l1 beyond the union of the operand extents)
    come from L2 at its L2 -> L1 rate and cross HBM once, while operands and output fit L2 (192 MB on 910B1)."""
    p = load_params("ascend910b1")
    loads = 64 << 20  # per AIC group
    fits = estimate(_gemm_launch(loads, union=64 << 20, written=64 << 20), "ascend910b1")
    assert fits.gm_read_bytes == 64 << 20  # each operand byte once
    # 1/24 of a group's loads first touch (HBM share per AIC), the rest from L2
    share = (64 << 20) / (24 * loads)
    expect = loads * share / (p.hbm_gbps / 24 * 1e3) + loads * (1 - share) / (p.l2_to_l1_core_gbps * 1e3)
    assert fits.cores[0].pipes_us["M"] == pytest.approx(expect)
    # the same loads with operands + output beyond L2: every load is HBM traffic
    spills = estimate(_gemm_launch(loads, union=150 << 20, written=64 << 20), "ascend910b1")
    assert spills.gm_read_bytes == 24 * loads
    assert spills.cores[0].pipes_us["M"] == pytest.approx(loads / (p.hbm_gbps / 24 * 1e3))
    assert spills.kernel_us > 2 * fits.kernel_us
    # without the launch-level union (older counters) nothing is credited to L2
    old = {k: v for k, v in _gemm_launch(loads, union=64 << 20).items() if k != "cube_operand_bytes"}
    assert estimate(old, "ascend910b1").gm_read_bytes == 24 * loads
    # a target without an L2 figure (310P) never credits it
    assert load_params("ascend310p").l2_bytes == 0
