"""Cost model: emulator counters -> ESTIMATED kernel time on a target (docs/cost_model.md).

Per core (one AIV block), pipe busy times from the counters:
  MTE2 = sum over GM->UB transfers of latency + bytes / (per-core bandwidth x burst efficiency)
  MTE3 = the same for UB->GM,  V = sum over vector instructions of head + (repeats - 1) x cycles,
  S = scalar GetValue/SetValue, M = the cube (AIC) work this core waits for: in MIX kernels (1 AIC : 2
  AIV) the MACs of both AIV of its group at the AIC's rate, overlapped with the cube's own GM->L1
  operand loads (M = max(MACs / rate, GM->L1 bytes / GM->L1 bandwidth)), MTE1 = the L1 -> L0A / L0B loads of
  the low-level cube API (LoadData 2-D / 3-D) at the documented load bandwidth (the emulator's mte1_cycles),
  FIX = the cube's L0C -> GM writes (Fixpipe; the Matmul API's result blocks) at ascendc.md §5.3's L0C -> GM figure plus
  the DMA latency per instruction (fixpipe.py): a pipe of its own when the kernel alternates two L0C buffers,
  overlapped with the MACs when the Matmul API hands L0C over by UnitFlag (M = max(MACs, FIX, GM->L1 loads)), else part
  of M (Mmad and Fixpipe hold the one L0C in turn: M = max(MACs + FIX, GM->L1 loads)).
With double buffering (every VECIN/VECOUT queue has >= 2 buffers, or a cube kernel whose L1 and L0 hand-off events
alternate two ids: _cube_pingpong) the pipes overlap:
  core = max(pipes) + (sum(pipes) - max(pipes)) / iterations   (head + tail of the pipeline)
else they serialise: core = sum(pipes). MIX kernels (separated mode: the AIC is a core of its own, serving
both AIV of its group): core = max(M, the AIV's own chain with M replaced by its own share of the cube's work).
MIX kernels whose AIC ran as blocks of their own (cross-core flags): every block its own chain, each CrossCoreWaitFlag
ending no earlier than the sets that release it (the emulator's flag log; _flag_timed, crossflow.py).
MIX kernels with SyncAll (split-K) run in two phases:
  core = max over cores of M (the cube phase every core waits for) + the overlap of its other pipes.
The kernel time is the slowest core, bounded below by the
aggregate GM bandwidth (all cores share HBM, work-conservingly: _shared_gbps), plus a fixed launch overhead. A
launch's workspace tensors that fit the target's L2 are L2 traffic (timed at the L2 figures, crossing HBM once), and so
are the cube's operand re-reads (_hbm_share) and the vector units' re-reads within the L2's reach (_l2_rereads: reuse
distance x active cores <= L2). Parameters: one TOML
file per target in ``targets/`` (sources cited there).

Two percentages (docs/cost_model.md "Headline"):
  ideal_fraction (the headline) = ideal for the problem / device time, with ideal = max(least GM traffic
    (every tensor crossing once, `min_gm_bytes`) / HBM bandwidth, the useful cube MACs (unpadded) / the
    cube's peak for their dtype, the problem's vector work (`problem_vector_cycles`, from the DSL program:
    npu_harness/problem_vector.py; without it the kernel's own vector work) / all AIV);
  roofline_fraction = the same bound with the GM traffic the kernel actually moves and the padded MACs it
    issues: the efficiency of the traffic it does. A kernel that re-reads its operands scores high here and
    low on the headline.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path

from .crossflow import add_work, flag_times
from .fixpipe import fix_us as _fix_us
from .fixpipe import l0c_double, l0c_unitflag, on_m

TARGETS_DIR = Path(__file__).resolve().parent / "targets"

DISCLAIMER = "ESTIMATE from a cost model (msopmodeling-derived figures + assumptions), not a measurement"

PIPES = ("MTE2", "V", "MTE3", "S", "M", "MTE1", "FIX")


@dataclass(frozen=True)
class CostParams:
    target: str
    clock_ghz: float
    aiv: int
    aic: int
    cube_macs_per_cycle: float
    launch_overhead_us: float
    gm_to_ub_core_gbps: float
    gm_to_ub_all_gbps: float
    ub_to_gm_core_gbps: float
    ub_to_gm_all_gbps: float
    hbm_gbps: float
    gm_to_l1_core_gbps: float
    l0c_to_gm_core_gbps: float     # the FIX pipe (Fixpipe L0C -> GM, workspace included) per AIC
    dma_latency_cycles: float
    burst_efficiency: tuple[tuple[int, float], ...]
    vec_head_cycles: float
    vec_default_cycles: float
    vec_cycles: dict
    ub_access_cycles: float
    gm_access_cycles: float
    l2_bytes: int = 0                  # L2 size; 0: no L2 (workspaces and operand re-reads stay HBM traffic)
    l2_to_l1_core_gbps: float = 0.0
    l2_to_ub_core_gbps: float = 0.0
    ub_to_l2_core_gbps: float = 0.0
    cross_flag_latency_cycles: float = 0.0  # CrossCoreSetFlag -> the CrossCoreWaitFlag it releases ([cross]; crossflow.py)

    def efficiency(self, burst_bytes: int) -> float:
        for bound, eff in self.burst_efficiency:
            if burst_bytes <= bound:
                return eff
        return 1.0

    def cycles_per_repeat(self, key: str) -> float:
        """key = "Op.bNN" as in the counters."""
        if key in self.vec_cycles:
            return float(self.vec_cycles[key])
        op = key.split(".", 1)[0]
        return float(self.vec_cycles.get(op, self.vec_default_cycles))


def available_targets() -> list[str]:
    return sorted(p.stem for p in TARGETS_DIR.glob("*.toml"))


@cache
def load_params(target: str) -> CostParams:
    path = TARGETS_DIR / f"{target}.toml"
    if not path.is_file():
        raise KeyError(f"no cost parameters for target '{target}' (have: {', '.join(available_targets())})")
    d = tomllib.loads(path.read_text())
    chip, bw, dma, sc, vec = d["chip"], d["bandwidth"], d["dma"], d["scalar"], d["vector"]
    l2 = d.get("l2", {})
    return CostParams(
        target=target,
        clock_ghz=float(chip["clock_ghz"]),
        aiv=int(chip["aiv"]),
        aic=int(chip["aic"]),
        cube_macs_per_cycle=float(chip["cube_macs_per_cycle"]),
        launch_overhead_us=float(chip["launch_overhead_us"]),
        gm_to_ub_core_gbps=float(bw["gm_to_ub_core_gbps"]),
        gm_to_ub_all_gbps=float(bw["gm_to_ub_all_gbps"]),
        ub_to_gm_core_gbps=float(bw["ub_to_gm_core_gbps"]),
        ub_to_gm_all_gbps=float(bw["ub_to_gm_all_gbps"]),
        hbm_gbps=float(bw["hbm_gbps"]),
        gm_to_l1_core_gbps=float(bw.get("gm_to_l1_core_gbps", bw["gm_to_ub_core_gbps"])),
        l0c_to_gm_core_gbps=float(bw["l0c_to_gm_core_gbps"]),
        dma_latency_cycles=float(dma["latency_cycles"]),
        burst_efficiency=tuple((int(b), float(e)) for b, e in dma["burst_efficiency"]),
        vec_head_cycles=float(vec["head_cycles"]),
        vec_default_cycles=float(vec["default_cycles"]),
        vec_cycles=dict(vec.get("cycles", {})),
        ub_access_cycles=float(sc["ub_access_cycles"]),
        gm_access_cycles=float(sc["gm_access_cycles"]),
        l2_bytes=int(l2.get("bytes", 0)),
        l2_to_l1_core_gbps=float(l2.get("l2_to_l1_core_gbps", 0.0)),
        l2_to_ub_core_gbps=float(l2.get("l2_to_ub_core_gbps", 0.0)),
        ub_to_l2_core_gbps=float(l2.get("ub_to_l2_core_gbps", 0.0)),
        cross_flag_latency_cycles=float(d.get("cross", {}).get("flag_latency_cycles", 0.0)),
    )


def target_for(name: str) -> str:
    """Map a lowering target name to a cost target (e.g. 'ascend910b' -> 'ascend910b1')."""
    if (TARGETS_DIR / f"{name}.toml").is_file():
        return name
    for cand in available_targets():
        if cand.startswith(name):
            return cand
    raise KeyError(f"no cost parameters for target '{name}' (have: {', '.join(available_targets())})")


@dataclass
class CoreEstimate:
    block: int
    pipes_us: dict[str, float]
    iterations: int
    overlapped: bool
    time_us: float
    bottleneck: str
    stall_us: float = 0.0          # AIC-driven MIX launches: time above the chain, spent waiting on cross-core flags (the
                                   # pipes idle while issue waits; crossflow.py)
    fix_us: float = 0.0            # the cube's L0C -> GM writes (Fixpipe) this core waits for: pipe FIX when L0C is
                                   # double-buffered, else inside M (fixpipe.py)


@dataclass
class Estimate:
    target: str
    blocks: int
    cores_available: int
    time_us: float                 # kernel_us + launch overhead: what a host timer would see
    kernel_us: float               # device busy time (slowest core, >= aggregate-bandwidth bound)
    launch_overhead_us: float
    bottleneck: str                # MTE2 / MTE3 / V / S / M
    hbm_bound: bool                # the aggregate GM bandwidth, not one core's pipe, sets kernel_us
    roofline_kind: str             # memory / vector / cube
    roofline_us: float             # bound of the work done: max(GM bytes moved / HBM bw, vector work / all AIV, MACs issued / all AIC)
    roofline_fraction: float       # roofline_us / kernel_us (<= 1): efficiency of the traffic it does
    load_balance: float            # mean core time / slowest core time
    gm_read_bytes: int
    gm_write_bytes: int
    vector_repeats: int
    ideal_kind: str = "memory"     # memory / vector / cube
    ideal_us: float = 0.0          # ideal for the problem: max(least GM traffic / HBM bw, useful MACs / cube peak, the problem's vector work / all AIV)
    ideal_fraction: float = 1.0    # ideal_us / kernel_us (<= 1): the headline
    min_gm_bytes: int = 0          # least GM traffic of the problem (every tensor once); 0: unknown (the traffic moved is used)
    l2_bytes: int = 0              # GM bytes served by L2 (not in gm_*_bytes): workspace traffic, the cube's operand re-reads,
                                   # the vector units' re-reads within the L2's reach
    cube_ideal_us: float = 0.0     # the cube term of ideal_us: useful MACs (the problem's, when known) / the cube peak
    vector_ideal_us: float = 0.0   # the vector term of ideal_us: the problem's vector work (`vector_basis` "problem") or
                                   # the kernel's own ("kernel": a caller without the DSL program) / all AIV
    kernel_vector_us: float = 0.0  # the kernel's own vector work (every instruction's repeats, no head) / all AIV
    vector_basis: str = "kernel"   # "problem" (npu_harness/problem_vector.py) or "kernel"
    cores: list[CoreEstimate] = field(default_factory=list)
    note: str = DISCLAIMER

    def to_dict(self, per_core: bool = True) -> dict:
        d = asdict(self)
        if not per_core:
            d.pop("cores")
        return d

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), indent=kw.get("indent", 1))

    def summary(self) -> str:
        basis = "least GM traffic" if self.min_gm_bytes else "GM traffic moved (least traffic unknown)"
        vec = "from the problem" if self.vector_basis == "problem" else "from the kernel's instructions"
        return (f"estimated {self.time_us:.2f} us ({self.kernel_us:.2f} us device + {self.launch_overhead_us:.1f} us launch) "
                f"on {self.target}; {100 * self.ideal_fraction:.0f}% of the ideal for the problem ({self.ideal_kind}-bound, "
                f"{self.ideal_us:.2f} us; memory term from the {basis}; vector term {vec}); efficiency of the traffic it does "
                f"{100 * self.roofline_fraction:.0f}% of the {self.roofline_kind} roofline; "
                f"bottleneck {self.bottleneck}{' (aggregate GM bandwidth)' if self.hbm_bound else ''}; "
                f"load balance {100 * self.load_balance:.0f}% over {self.blocks}/{self.cores_available} cores")

    def text(self) -> str:
        lines = [f"cost model ({self.note}):", "  " + self.summary(),
                 (f"  GM read {self.gm_read_bytes} B, write {self.gm_write_bytes} B; {self.vector_repeats} vector repeats; "
                  f"roofline {self.roofline_us:.2f} us")]
        if self.cores:
            slow = max(self.cores, key=lambda c: c.time_us)
            pipes = ", ".join(f"{k} {v:.2f}" for k, v in slow.pipes_us.items() if v > 0)
            fix = (f"; Fixpipe {slow.fix_us:.2f} us{'' if 'FIX' in slow.pipes_us else ' on the cube (in M)'}"
                   if slow.fix_us > 0 else "")
            lines.append(f"  slowest core: block {slow.block}, {slow.time_us:.2f} us ({pipes} us; {slow.iterations} iterations, "
                         f"{'double-buffered overlap' if slow.overlapped else 'no overlap (single-buffered queues)'}"
                         + fix + (f"; {slow.stall_us:.2f} us waiting on cross-core flags" if slow.stall_us > 0 else "") + ")")
        return "\n".join(lines)


def _shared_gbps(demands: list[float], core_gbps: float, all_gbps: float) -> list[float]:
    """Each core's HBM rate (GB/s) when the cores' HBM bytes (`demands`, L2 hits left out) stream at once and share the
    aggregate bandwidth equally while they all still have bytes to move (work-conserving): core i is done after
    max(d_i / per-core rate, sum_j min(d_j, d_i) / aggregate). Equal demands give min(per core, aggregate / cores),
    the rule before session 31; a core with more HBM bytes than the others (the first reader of bytes they then find
    in L2) gets the bandwidth they no longer use."""
    fair = min(core_gbps, all_gbps / max(1, len(demands)))
    out = []
    for d in demands:
        t = max(d / core_gbps, sum(min(e, d) for e in demands) / all_gbps) if d > 0 else 0.0
        out.append(d / t if t > 0 else fair)
    return out


def _dma_us(d: dict, core_gbps: float, all_gbps: float, active: int, p: CostParams, l2: tuple[int, float] = (0, 0.0),
            hbm_gbps: float | None = None) -> float:
    """`l2` = (bytes of the transfers that stay in L2, the L2 figure per core in GB/s): that share of the byte time is
    re-rated at the L2 bandwidth, with the same burst efficiency. `hbm_gbps`: the core's HBM rate (_shared_gbps);
    default min(per core, aggregate / active)."""
    if not d or not d.get("bytes"):
        return 0.0
    bw = (hbm_gbps if hbm_gbps else min(core_gbps, all_gbps / max(active, 1))) * 1e3  # bytes per us
    t = 0.0
    for upper, _count, nbytes in d.get("hist", []):
        # bucket `upper` holds bursts of (upper/2, upper] bytes (the last bucket: larger)
        t += nbytes / (bw * p.efficiency(int(upper)))
    if l2[0] and l2[1] * 1e3 > bw:  # (GM traffic passes L2 anyway: never slower than the HBM share)
        share = min(1.0, l2[0] / d["bytes"])
        t *= 1.0 - share + share * bw / (l2[1] * 1e3)
    t += d.get("transfers", 0) * p.dma_latency_cycles / (p.clock_ghz * 1e3)
    return t


def _gm_to_l1_us(d: dict, l2_bytes: int, hbm_gbps: float, p: CostParams) -> float:
    """An AIC block's GM -> L1 copies (counted as its `gm2ub`: DataCopy into L1, Nd2Nz included): the bytes from HBM at
    the core's share of GM -> L1 (`hbm_gbps`: _shared_gbps with ascendc.md §5.3's GM -> L1 135 GB/s per core), those
    that stay in L2 (`l2_bytes`: the workspace, re-reads within reach) at §5.3's L2 -> L1 221, plus the per-instruction
    DMA latency (ASSUMPTION, as every DataCopy). No small-burst efficiency: that table is an ASSUMPTION for GM -> UB,
    and the Matmul API's operand loads, the same Nd2Nz path, are charged at these figures without it (l1_us)."""
    if not d or not d.get("bytes"):
        return 0.0
    hbm = hbm_gbps * 1e3
    l2 = max(p.l2_to_l1_core_gbps * 1e3, hbm) if p.l2_to_l1_core_gbps else hbm  # GM traffic passes L2 anyway
    from_l2 = min(l2_bytes, d["bytes"])
    return (d["bytes"] - from_l2) / hbm + from_l2 / l2 + d.get("transfers", 0) * p.dma_latency_cycles / (p.clock_ghz * 1e3)


def _vec_cycles(vec: dict, p: CostParams) -> tuple[float, float, int]:
    """(cycles with per-instruction head latency, ideal cycles without it, repeats)."""
    cyc = ideal = 0.0
    reps = 0
    for key, (instr, repeats) in vec.items():
        c = p.cycles_per_repeat(key)
        cyc += instr * p.vec_head_cycles + max(0, repeats - instr) * c
        ideal += repeats * c
        reps += repeats
    return cyc, ideal, reps


def _cube_cycles(macs: float, macs_f32: float, p: CostParams) -> float:
    """Cube cycles for `macs` MACs of which `macs_f32` have fp32 operands (1/4 of the f16 rate; ascendc_next.md §7)."""
    return (macs - macs_f32) / p.cube_macs_per_cycle + macs_f32 / (p.cube_macs_per_cycle / 4)


def _cube_pingpong(b: dict) -> int:
    """The L1 stages of a cube kernel whose hand-offs alternate two buffers, else 0. Counter `flags` (the emulator:
    per HardEvent, SetFlag calls and distinct event ids): MTE2 -> MTE1 ("L1 buffer filled") and MTE1 -> M ("L0
    filled") each on two or more ids means two L1 buffers and two L0A / L0B halves in flight, so MTE2 fills one L1
    buffer while MTE1 / M work on the other and MTE1 fills one L0 half while M reads the other; the pipeline's
    iterations are the L1 stages (SetFlag<MTE2_MTE1> calls)."""
    flags = b.get("flags", {})
    l1, l0 = flags.get("MTE2_MTE1", (0, 0)), flags.get("MTE1_M", (0, 0))
    return int(l1[0]) if l1[1] >= 2 and l0[1] >= 2 else 0


def _hbm_share(counters: dict, gm2l1: int, p: CostParams) -> float:
    """The share of the cube's GM -> L1 operand loads that crosses HBM. The emulator counts every load
    (`gm2l1`, per block) and the union of the operand extents (`cube_operand_bytes`, per launch). When those
    operands and everything the launch writes fit the L2 cache together, each operand byte comes from HBM
    once and every re-read (an A panel loaded again for the next N block) hits L2: share = union / loads.
    Otherwise (or without an L2 figure) all loads are HBM traffic."""
    union = int(counters.get("cube_operand_bytes", 0))
    if not p.l2_bytes or not union or gm2l1 <= 0:
        return 1.0
    written = sum(b.get("ub2gm", {}).get("bytes", 0) + b.get("l0c2gm", 0) for b in counters.get("blocks", []))
    ws_bytes = int(counters.get("workspace_bytes", 0))
    if 0 < ws_bytes <= p.l2_bytes:
        # a workspace that fits L2 occupies its own size there however often it is rewritten (the epilogue bands'
        # per-core slots: one block each, rewritten for every block), not the bytes written into it
        written += ws_bytes - sum(b.get("ws_ub2gm", 0) + b.get("ws_l0c2gm", 0) for b in counters.get("blocks", []))
    return min(1.0, union / gm2l1) if union + written <= p.l2_bytes else 1.0


def _panel_share(blocks: list[dict], operands: int, capacity: int, p: CostParams) -> float:
    """The share of the cube's GM -> L1 operand loads (`operands`, workspace left out) that crosses HBM by the panels'
    stack distance (session 32). The emulator counts, per block, the bytes of each operand panel (A rows, B columns
    over K, the bias) it loads again after some block loaded it before, by LRU stack distance (`panel_reload`:
    [bucket's upper bound, bytes]; the distinct panel bytes loaded by every block in between plus the other GM traffic
    of the active blocks over that interval; emulator.md): a re-load whose bucket bound fits the L2 left beside the
    launch's workspace (`capacity`) is an L2 hit (under LRU a fully associative cache of C bytes hits exactly the
    accesses whose stack distance is below C: Mattson et al. 1970). ASSUMPTION: the L2 behaves as a fully
    associative LRU cache of its whole size for these reads (no source gives its associativity or replacement
    policy), as the vector re-read rule assumes. Unlike the per-launch union rule (_hbm_share) it credits a launch
    whose tensors exceed L2 but whose blocks re-load each panel soon (a batched GEMM walking one batch entry at a
    time), and charges a schedule that re-loads panels after streaming more than L2 holds."""
    if not capacity or not p.l2_to_l1_core_gbps or operands <= 0:
        return 1.0
    hits = sum(int(n) for b in blocks for upper, n in b.get("panel_reload", []) if int(upper) <= capacity)
    return max(0.0, 1.0 - hits / operands)


def _l2_rereads(b: dict, active: int, capacity: int, p: CostParams) -> int:
    """The bytes of block b's GM -> UB re-reads that hit L2. The emulator counts, per block, the input bytes it reads
    that were read before by reuse distance (`reread`: [bucket's upper bound, bytes]; the GM bytes a block moves
    between the closest earlier read of them, by it or another block, and this one; emulator.md). With every active
    core moving bytes at that pace, the L2 sees `active` times that distance in between: a re-read whose bucket bound
    times the active cores fits the L2 left beside the launch's workspace (`capacity`) is an L2 hit, anything farther
    crosses HBM again (ASSUMPTION: reads allocate in L2 and LRU-like eviction keeps what was touched more recently, as
    the cube operand rule assumes)."""
    if not capacity or not p.l2_to_ub_core_gbps:
        return 0
    return sum(int(n) for upper, n in b.get("reread", []) if int(upper) * active <= capacity)


def _copy_cycles(nbytes: int, copies: int, p: CostParams) -> int:
    """Vector cycles of UB -> UB copies (DataCopy on the vector pipe): a head per copy, Copy's rate per repeat."""
    return copies * p.vec_head_cycles + (nbytes + 255) // 256 * p.cycles_per_repeat("Copy")


def _scalar_us(ub_accesses: int, gm_accesses: int, p: CostParams) -> float:
    """The scalar unit's time for GetValue / SetValue on UB and on GM."""
    return (ub_accesses * p.ub_access_cycles + gm_accesses * p.gm_access_cycles) * (1.0 / (p.clock_ghz * 1e3))


def _flag_timed(blocks: list[dict], cores: list[CoreEstimate], l1: list[float], fix: list[float], double: list[bool],
                unit: list[bool], p: CostParams) -> None:
    """AIC-driven MIX launches: each block's time with its waits on the cross-core flags (crossflow.py: per-pipe cursors,
    a wait holding up issue only), from the work the emulator logged between flag events (`cross_events`) timed by the
    rules of this module at the block's own rates: DMA instructions at the latency and bytes at the block's byte time
    per byte, vector and scalar work by the cycle table, MTE1 cycles, the cube's MACs against its share of the block's
    GM -> L1 time, the L0C -> GM writes at the latency per instruction and the block's FIX time per byte (`fix`: its own
    pipe when `double`, two L0C buffers; on M beside the MACs with `unit`, UnitFlag; else on M after them, as the chain
    rule does); a stretch's pipeline iterations are the block's, shared out by DMA instructions and L1 stages (0 when
    its pipes do not overlap). Sets `time_us` (stalls included, never less than the chain before) and `stall_us` of
    every core."""
    to_us = 1.0 / (p.clock_ghz * 1e3)
    lat_us = p.dma_latency_cycles * to_us

    def steps(w: dict) -> int:  # the pipeline iterations' measure: DMA instructions and L1 stages
        return sum(w.get(k, (0, 0))[1] for k in ("gm2ub", "ub2gm")) + w.get("l1_stages", 0)

    totals = [add_work({}, {"gm2ub": [b.get("gm2ub", {}).get("bytes", 0), b.get("gm2ub", {}).get("transfers", 0)],
                             "ub2gm": [b.get("ub2gm", {}).get("bytes", 0), b.get("ub2gm", {}).get("transfers", 0)],
                             "l1_stages": b.get("flags", {}).get("MTE2_MTE1", (0, 0))[0]}) for b in blocks]

    def stretch(i: int, w: dict) -> tuple[dict[str, float], int]:
        b, c = blocks[i], cores[i]
        pipes = {}
        for pipe, key in (("MTE2", "gm2ub"), ("MTE3", "ub2gm")):
            nbytes, n = w.get(key, (0, 0))
            d = b.get(key, {})
            per_byte = max(0.0, c.pipes_us[pipe] - d.get("transfers", 0) * lat_us) / d["bytes"] if d.get("bytes") else 0.0
            pipes[pipe] = (n * lat_us + nbytes * per_byte) if nbytes else 0.0
        vcyc = _vec_cycles(w.get("vec", {}), p)[0]
        vcyc += _copy_cycles(*w.get("ub2ub", (0, 0)), p)
        pipes["V"] = vcyc * to_us
        pipes["S"] = _scalar_us(w.get("ub_acc", 0), w.get("gm_acc", 0), p)
        loads = l1[i] * w.get("gm2l1", 0) / b["gm2l1"] if b.get("gm2l1") else 0.0
        fix_bytes, fix_n = w.get("l0c2gm", (0, 0))
        per_byte = max(0.0, fix[i] - b.get("l0c2gm_n", 0) * lat_us) / b["l0c2gm"] if b.get("l0c2gm") else 0.0
        fixpipe = fix_n * lat_us + fix_bytes * per_byte
        cube = _cube_cycles(w.get("cube_macs", 0), w.get("cube_macs_f32", 0), p) * to_us
        pipes["M"] = max(on_m(cube, fixpipe, double[i], unit[i]), loads)
        if double[i]:
            pipes["FIX"] = fixpipe
        pipes["MTE1"] = w.get("mte1_cycles", 0) * to_us
        if not c.overlapped:
            return pipes, 0
        return pipes, max(1, round(c.iterations * steps(w) / steps(totals[i]))) if steps(totals[i]) else 1

    times = flag_times(blocks, stretch, [c.time_us for c in cores], p.cross_flag_latency_cycles * to_us)
    for c, t in zip(cores, times or [], strict=False):
        c.stall_us, c.time_us = t - c.time_us, t


def estimate(counters: dict, target: str, min_gm_bytes: int | None = None,
             problem_macs: tuple[int, bool] | None = None, problem_vector_cycles: float | None = None) -> Estimate:
    """Estimate the kernel time of one launch from the emulator's counters (``RunResult.counters``).

    ``min_gm_bytes``: the least GM traffic of the problem (the bytes of every input and output tensor,
    each crossing once); it sets the memory term of the headline ``ideal_fraction``. Without it the
    traffic the kernel moves is used and the headline equals ``roofline_fraction`` on memory-bound kernels.
    ``problem_macs``: (the problem's multiply-adds, whether its operands are fp32), when the caller knows them
    (forward convolutions: npu_harness/problem_macs.py); it replaces the counters' unpadded Mmad MACs as the
    cube term, which count every column a kernel computes as useful (a sparse conv layout's 15 dead columns
    of each 16 included). ``problem_vector_cycles``: the vector cycles the problem needs (all AIV together), when the
    caller has the DSL program (npu_harness/problem_vector.py); it replaces the kernel's own vector work as the
    vector term of the headline, so a kernel doing more vector work than the problem needs no longer raises its
    own ideal. Without it (ascend-sim on foreign AscendC) the kernel's own work stays the term."""
    p = load_params(target_for(target))
    blocks = counters.get("blocks", [])
    active = max(1, len(blocks))
    to_us = 1.0 / (p.clock_ghz * 1e3)  # cycles -> us
    cores: list[CoreEstimate] = []
    total_in = total_out = total_l2 = total_rr = 0
    total_ideal_vec = 0.0
    total_reps = 0
    total_macs = 0
    total_macs_f32 = 0
    useful_cycles = 0.0
    ratio = max(1, int(counters.get("aiv_per_aic", 1)))  # MIX kernels: AIV blocks sharing one AIC
    aic_driven = any(b.get("core") == "aic" for b in blocks)
    if aic_driven:
        # a MIX launch whose AIC ran as blocks of their own (cross-core flags, docs/cost_model.md "AIC-driven MIX
        # kernels"): every block, AIC or AIV, is its own chain of pipes; the flags between them are timed below
        # (_flag_timed: each wait ends no earlier than the sets that release it)
        ratio = 1
    # the launch's workspace tensors stay in L2 when they all fit it (the target's [l2] section): their bytes are timed at
    # the L2 figures and cross HBM once (the write-back of the dirty lines), not at every access
    ws_bytes = int(counters.get("workspace_bytes", 0))
    in_l2 = 0 < ws_bytes <= p.l2_bytes

    def l2_of(b: dict, key: str) -> int:
        return int(b.get(key, 0)) if in_l2 else 0
    # the vector units' re-reads of inputs within the L2's reach (_l2_rereads): L2 traffic as well
    reread_cap = p.l2_bytes - (ws_bytes if in_l2 else 0)
    group_macs = [_cube_cycles(sum(b.get("cube_macs", 0) for b in blocks[g:g + ratio]),
                               sum(b.get("cube_macs_f32", 0) for b in blocks[g:g + ratio]), p) * p.cube_macs_per_cycle
                  for g in range(0, len(blocks), ratio)]
    # the cube's operand loads from inputs: the share `first` crosses HBM, re-reads hit L2 when everything fits
    # (_hbm_share) or when the panel is loaded again within the L2's reach (_panel_share); workspace loads come from
    # L2 when the workspace fits (l2_of)
    operand_loads = sum(b.get("gm2l1", 0) - l2_of(b, "ws_gm2l1") for b in blocks)
    first = min(_hbm_share(counters, operand_loads, p), _panel_share(blocks, operand_loads, reread_cap, p))
    l1_bw = min(p.gm_to_l1_core_gbps, p.hbm_gbps / max(1, len(group_macs))) * 1e3  # bytes per us, one AIC
    l2_bw = p.l2_to_l1_core_gbps * 1e3 if p.l2_to_l1_core_gbps else l1_bw

    def l1_us(b: dict) -> float:  # the AIC's operand loads for block b: from HBM, and from L2
        ws = l2_of(b, "ws_gm2l1")
        operands = b.get("gm2l1", 0) - ws
        return operands * first / l1_bw + (operands * (1 - first) + ws) / l2_bw

    group_l1 = [sum(l1_us(b) for b in blocks[g:g + ratio]) for g in range(0, len(blocks), ratio)]
    # the cube's L0C -> GM writes (fixpipe.py): each AIC's bytes bound for HBM share the aggregate write bandwidth; with one
    # L0C buffer they follow the Mmad they drain on the cube (in M), with two they are a pipe of their own (FIX)
    fix_gbps = _shared_gbps([sum(b.get("l0c2gm", 0) - l2_of(b, "ws_l0c2gm") for b in blocks[g:g + ratio])
                             for g in range(0, len(blocks), ratio)], p.l0c_to_gm_core_gbps, p.ub_to_gm_all_gbps)
    fix_of = [_fix_us(b.get("l0c2gm", 0), l2_of(b, "ws_l0c2gm"), b.get("l0c2gm_n", 0), fix_gbps[i // ratio],
                      p.l0c_to_gm_core_gbps, p.dma_latency_cycles * to_us) for i, b in enumerate(blocks)]
    group_fix = [sum(fix_of[g:g + ratio]) for g in range(0, len(blocks), ratio)]
    double = [l0c_double(b) for b in blocks]
    unit = [l0c_unitflag(b) for b in blocks]
    m_us = [max(on_m(group_macs[i // ratio] / p.cube_macs_per_cycle * to_us, group_fix[i // ratio], double[i], unit[i]),
                group_l1[i // ratio]) for i in range(len(blocks))]
    # the share of the AIC's time spent on this AIV's own requests (the part of M the AIV itself waits for)
    m_own_us = [max(on_m(_cube_cycles(b.get("cube_macs", 0), b.get("cube_macs_f32", 0), p) * to_us, fix_of[i], double[i],
                         unit[i]), l1_us(b)) for i, b in enumerate(blocks)]
    # ... of it, the part issued synchronously (IterateAll<false> work, cube_macs_async / gm2l1_async, is not waited for
    # in line: the AIV's other pipes overlap it, docs/cost_model.md "MIX cores"); its result writes by the MACs' share
    m_sync_us = [max(on_m(_cube_cycles(b.get("cube_macs", 0) - b.get("cube_macs_async", 0),
                                       min(b.get("cube_macs_f32", 0), b.get("cube_macs", 0) - b.get("cube_macs_async", 0)), p) * to_us,
                          fix_of[i] * (1 - b.get("cube_macs_async", 0) / b["cube_macs"] if b.get("cube_macs") else 1.0),
                          double[i], unit[i]),
                     l1_us(b) * (1 - b.get("gm2l1_async", 0) / b["gm2l1"]) if b.get("gm2l1") else 0.0)
                 for i, b in enumerate(blocks)]
    # MIX kernels that SyncAll (split-K: the cube's partial sums, then the vector cores add them) run in phases
    phased = ratio > 1 and any(b.get("sync_all", 0) for b in blocks)
    cube_phase = max(m_us, default=0.0)
    # the HBM bytes of each block's copies (the L2 hits left out) share the aggregate bandwidth (_shared_gbps)
    rereads_of = [_l2_rereads(b, active, reread_cap, p) for b in blocks]
    demands = [b.get("gm2ub", {}).get("bytes", 0) - l2_of(b, "ws_gm2ub") - r for b, r in zip(blocks, rereads_of, strict=True)]
    mte2_gbps = _shared_gbps(demands, p.gm_to_ub_core_gbps, p.gm_to_ub_all_gbps)
    # an AIC block's MTE2 copies (AIC-driven launches: DataCopy GM -> L1, Nd2Nz included; the AIC has no UB) at the
    # GM -> L1 / L2 -> L1 figures (ascendc.md §5.3: 135 / 221 GB/s), as the Matmul API's operand loads (l1_us)
    l1_gbps = _shared_gbps(demands, p.gm_to_l1_core_gbps, p.gm_to_ub_all_gbps) if aic_driven else []
    mte3_gbps = _shared_gbps([b.get("ub2gm", {}).get("bytes", 0) - l2_of(b, "ws_ub2gm") for b in blocks],
                             p.ub_to_gm_core_gbps, p.ub_to_gm_all_gbps)
    for i, b in enumerate(blocks):
        gm2ub, ub2gm, ub2ub = b.get("gm2ub", {}), b.get("ub2gm", {}), b.get("ub2ub", {})
        ws_in, l2_out = l2_of(b, "ws_gm2ub") + l2_of(b, "ws_gm2l1"), l2_of(b, "ws_ub2gm") + l2_of(b, "ws_l0c2gm")
        operands = b.get("gm2l1", 0) - l2_of(b, "ws_gm2l1")  # the cube's loads from inputs (see l1_us)
        rereads = rereads_of[i]
        total_in += gm2ub.get("bytes", 0) - l2_of(b, "ws_gm2ub") - rereads + operands * first
        total_out += ub2gm.get("bytes", 0) + b.get("l0c2gm", 0) - l2_out
        total_l2 += ws_in + l2_out + operands * (1 - first) + rereads
        total_rr += rereads
        vcyc, videal, reps = _vec_cycles(b.get("vec", {}), p)
        vcyc += _copy_cycles(ub2ub.get("bytes", 0), ub2ub.get("transfers", 0), p)
        total_ideal_vec += videal + _copy_cycles(ub2ub.get("bytes", 0), 0, p)  # no heads in the ideal
        total_reps += reps
        total_macs += b.get("cube_macs", 0)
        total_macs_f32 += b.get("cube_macs_f32", 0)
        useful_cycles += _cube_cycles(b.get("cube_macs_useful", b.get("cube_macs", 0)), b.get("cube_macs_useful_f32", 0), p)
        pipes = {
            "MTE2": _gm_to_l1_us(gm2ub, l2_of(b, "ws_gm2ub") + rereads, l1_gbps[i], p) if b.get("core") == "aic" else
                    _dma_us(gm2ub, p.gm_to_ub_core_gbps, p.gm_to_ub_all_gbps, active, p,
                            (l2_of(b, "ws_gm2ub") + rereads, p.l2_to_ub_core_gbps), mte2_gbps[i]),
            "V": vcyc * to_us,
            "MTE3": _dma_us(ub2gm, p.ub_to_gm_core_gbps, p.ub_to_gm_all_gbps, active, p, (l2_of(b, "ws_ub2gm"), p.ub_to_l2_core_gbps),
                            mte3_gbps[i]),
            "S": _scalar_us(b.get("ub_get", 0) + b.get("ub_set", 0), b.get("gm_get", 0) + b.get("gm_set", 0), p),
            "M": m_us[i],
            # L1 -> L0A / L0B loads of the low-level cube API (LoadData 2-D / 3-D), at the bandwidth the emulator
            # charged per call (ascend_sim/cube.h, load3d.h)
            "MTE1": b.get("mte1_cycles", 0) * to_us,
        }
        if double[i]:
            pipes["FIX"] = group_fix[i // ratio]  # two L0C buffers: Fixpipe drains one while Mmad fills the other
        n_in, n_out = gm2ub.get("transfers", 0), ub2gm.get("transfers", 0)
        if b.get("in_queues") or b.get("out_queues"):
            # pipeline iterations = DMA instructions per queue (stream), the busier direction
            iters = max(n_in / max(1, b.get("in_queues", 0)) if b.get("in_queues") else 0,
                        n_out / max(1, b.get("out_queues", 0)) if b.get("out_queues") else 0)
            iters = max(1, round(iters))
        else:
            iters = max(1, min(n for n in (n_in, n_out) if n) if (n_in or n_out) else 1)
        # Pipes overlap when every queue the core uses is double-buffered; a kernel without output
        # queues (a reduction to an accumulator) has no output side to serialise on.
        queued = [b[k] for k in ("in_bufs", "out_bufs") if k in b]
        overlapped = bool(queued) and min(queued) >= 2
        stages = _cube_pingpong(b) if ratio == 1 and not queued else 0
        if stages:
            # a cube kernel alternating two L1 buffers and two L0 halves (docs/cost_model.md "Ping-pong cube kernels")
            overlapped, iters = True, stages
        if phased:
            # split-K (MIX with SyncAll): every core waits at SyncAll for the slowest cube phase, then its
            # vector phase (adding the slices, the epilogue) runs on its own
            rest = {k: v for k, v in pipes.items() if k != "M"}
            top = max(rest, key=lambda k: rest[k])
            t = cube_phase + (rest[top] + (sum(rest.values()) - rest[top]) / iters if overlapped else sum(rest.values()))
            top = "M" if cube_phase >= t - cube_phase else top
        elif ratio > 1:
            # MIX without SyncAll (separated mode, docs/cost_model.md "MIX cores"): the AIC is a core of its own that
            # serves the requests of both AIV of its group while each AIV runs its own pipes. An AIV waits for its
            # own cube work (M_own) besides its other pipes; the AIC is busy for the whole group (M): the core takes
            # max(M, its own chain), not their sum (which charged it the other AIV's cube work as well). Asynchronous
            # cube work (IterateAll<false>) leaves the chain; the AIV still cannot finish before its own cube work
            own = dict(pipes, M=m_sync_us[i])
            top = max(own, key=lambda k: own[k])
            total = sum(own.values())
            chain = own[top] + (total - own[top]) / iters if overlapped else total
            if m_own_us[i] > chain:
                chain, top = m_own_us[i], "M"
            t = max(pipes["M"], chain)
            top = "M" if pipes["M"] >= chain else top
        else:
            top = max(pipes, key=lambda k: pipes[k])
            total = sum(pipes.values())
            t = pipes[top] + (total - pipes[top]) / iters if overlapped else total
        cores.append(CoreEstimate(i, pipes, iters, overlapped, t, top, fix_us=group_fix[i // ratio]))

    if aic_driven:
        _flag_timed(blocks, cores, [l1_us(b) for b in blocks], fix_of, double, unit, p)
    slowest = max((c.time_us for c in cores), default=0.0)
    if total_l2 - total_rr:
        total_out += ws_bytes  # the workspace's dirty lines, written back once
    hbm_us = (total_in + total_out) / (p.hbm_gbps * 1e3)
    kernel_us = max(slowest, hbm_us)
    hbm_bound = hbm_us > slowest
    if hbm_bound:
        bottleneck = "MTE2" if total_in >= total_out else "MTE3"
    elif cores:
        bottleneck = max(cores, key=lambda c: c.time_us).bottleneck
    else:
        bottleneck = "none"
    vec_roof = total_ideal_vec / (p.clock_ghz * 1e3 * p.aiv)
    cube_roof = _cube_cycles(total_macs, total_macs_f32, p) / (p.clock_ghz * 1e3 * p.aic)
    roofs = {"memory": hbm_us, "vector": vec_roof, "cube": cube_roof}
    kind = max(roofs, key=lambda k: roofs[k])
    roof_us = roofs[kind]
    fraction = min(1.0, roof_us / kernel_us) if kernel_us > 0 else 1.0
    least = min_gm_bytes if min_gm_bytes else total_in + total_out
    if problem_macs is not None:
        macs, f32 = problem_macs
        useful_cycles = _cube_cycles(macs, macs if f32 else 0, p)
    vec_ideal = vec_roof if problem_vector_cycles is None else problem_vector_cycles / (p.clock_ghz * 1e3 * p.aiv)
    ideals = {"memory": least / (p.hbm_gbps * 1e3), "vector": vec_ideal,
              "cube": useful_cycles / (p.clock_ghz * 1e3 * p.aic)}
    ideal_kind = max(ideals, key=lambda k: ideals[k])
    ideal_us = ideals[ideal_kind]
    ideal_fraction = min(1.0, ideal_us / kernel_us) if kernel_us > 0 else 1.0
    mean = sum(c.time_us for c in cores) / len(cores) if cores else 0.0
    return Estimate(
        target=p.target, blocks=len(blocks), cores_available=p.aiv,
        time_us=kernel_us + p.launch_overhead_us, kernel_us=kernel_us, launch_overhead_us=p.launch_overhead_us,
        bottleneck=bottleneck, hbm_bound=hbm_bound, roofline_kind=kind, roofline_us=roof_us, roofline_fraction=fraction,
        load_balance=(mean / slowest) if slowest > 0 else 1.0,
        gm_read_bytes=round(total_in), gm_write_bytes=total_out, vector_repeats=total_reps, cores=cores,
        ideal_kind=ideal_kind, ideal_us=ideal_us, ideal_fraction=ideal_fraction, min_gm_bytes=int(min_gm_bytes or 0),
        l2_bytes=int(total_l2), cube_ideal_us=ideals["cube"], vector_ideal_us=vec_ideal, kernel_vector_us=vec_roof,
        vector_basis="kernel" if problem_vector_cycles is None else "problem")
