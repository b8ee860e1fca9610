"""The cube's L0C -> GM writes (Fixpipe; the Matmul API's result blocks) in the cost model (session 36, docs/cost_model.md
"The Fixpipe"): their time on the AIC's FIX pipe, and how they share L0C with the Mmad they drain, read from the
emulator's counters (`l0c2gm`, `l0c2gm_n`, `ws_l0c2gm`, `l0c2gm_unitflag`, the FIX_M flags)."""

from __future__ import annotations


def fix_us(nbytes: int, ws_bytes: int, n: int, hbm_gbps: float, core_gbps: float, latency_us: float) -> float:
    """The FIX pipe's time (us) for `nbytes` written from L0C to GM by `n` instructions (Fixpipe; the Matmul API: a base
    block each), `ws_bytes` of them into a workspace that stays in L2: `core_gbps`, ascendc.md §5.3's L0C -> GM figure per core
    (msopmodeling bandwidth_910B1.csv: 70 GB/s; pto-isa's cost model, include/pto/costmodel/arch_config.hpp, uses the
    same 70 for its L0C_TO_GM pipe), the bytes bound for HBM at no more than the core's share of the aggregate write
    bandwidth (`hbm_gbps`, model._shared_gbps), plus the DMA latency per instruction (`latency_us`: the ASSUMPTION of every
    DataCopy).
    ASSUMPTION: a destination in L2 (the workspace) is written at the same 70: the instruction is the same
    (FIX_L0C_TO_OUT) and no source gives an L0C -> L2 rate (the platform ini's l2_write_rate is the L2's port, not
    this path's)."""
    if nbytes <= 0 and n <= 0:
        return 0.0
    rate = core_gbps * 1e3  # bytes per us
    hbm = min(rate, hbm_gbps * 1e3) if hbm_gbps > 0 else rate
    ws = min(ws_bytes, nbytes)
    return (nbytes - ws) / hbm + ws / rate + n * latency_us


def l0c_double(b: dict) -> bool:
    """Whether a cube kernel alternates two L0C buffers: its "L0C free again" hand-offs (SetFlag<FIX_M>, counter `flags`)
    use two or more event ids, so Mmad fills one buffer while Fixpipe drains the other (the flash ring's two halves).
    Otherwise (one id: the conv tile, the stage-by-stage paths) Mmad waits for the previous Fixpipe (FIX_M,
    ascendc_next.md §1.10 rule 6) and the two run in turn on the one L0C, unless UnitFlag hands it over (l0c_unitflag)."""
    return b.get("flags", {}).get("FIX_M", (0, 0))[1] >= 2


def l0c_unitflag(b: dict) -> bool:
    """Whether every L0C -> GM byte of block b was written by the Matmul API with UnitFlag on (counter `l0c2gm_unitflag`;
    the default template CFG_NORM = GetNormalConfig(), enUnitFlag = true, CANN asc-devkit matmul tiling.h): Mmad and
    Fixpipe hand L0C over 512 B at a time (ascendc_next.md §5.2), "enabling parallel execution of computation and
    transfer" (CANN best practice "Matmul High-level API Enabling UnitFlag", atlas_ascendc_best_practices_10_10003), so
    the writes overlap the MACs: M = max(MACs, FIX, loads). ASSUMPTION: the hand-over pipelines them fully."""
    return b.get("l0c2gm", 0) > 0 and b.get("l0c2gm_unitflag", 0) >= b["l0c2gm"]


def on_m(macs_us: float, fix: float, double: bool, unit: bool) -> float:
    """The cube's time for MACs and the Fixpipes that drain them on one L0C: the MACs alone when two L0C buffers make FIX
    a pipe of its own (`double`), the longer of the two when UnitFlag hands L0C over 512 B at a time (`unit`), their sum
    when Mmad and Fixpipe take turns."""
    return macs_us if double else max(macs_us, fix) if unit else macs_us + fix
