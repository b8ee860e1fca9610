"""The estimate of a kernel of several launches (LAUNCHES kind): its launches' estimates, one after another.

Times add (each launch waits for the one before it; every launch pays the launch overhead), as do GM traffic
and vector work. The ideal for the problem is the whole kernel's: the least GM traffic of its bound tensors
(the workspace tensors between launches are not part of the problem) or, when larger, the sum of the launches'
compute ideals (cube MACs, vector work), which no schedule avoids. The per-core breakdown is the slowest
launch's.
"""

from __future__ import annotations

from dataclasses import replace

from .model import Estimate, load_params, target_for


def combine(parts: list[Estimate], target: str, min_gm_bytes: int, problem_vector_cycles: float | None = None) -> Estimate:
    """One Estimate for launches run in order (`parts` non-empty, in launch order). `problem_vector_cycles`: the whole
    program's vector work (npu_harness/problem_vector.py), the parts estimated without a vector term of their own:
    the compute ideal is then the larger of the launches' summed compute ideals and that vector work / all AIV (a
    lower bound: a MIX launch may overlap its epilogue with its cube work)."""
    p = load_params(target_for(target))
    kernel_us = sum(e.kernel_us for e in parts)
    overhead = sum(e.launch_overhead_us for e in parts)
    compute_ideal = sum(e.ideal_us for e in parts if e.ideal_kind != "memory")
    compute_kind = max((e for e in parts if e.ideal_kind != "memory"), key=lambda e: e.ideal_us,
                       default=parts[0]).ideal_kind
    vec_us = (sum(e.vector_ideal_us for e in parts) if problem_vector_cycles is None
              else problem_vector_cycles / (p.clock_ghz * 1e3 * p.aiv))
    if problem_vector_cycles is not None and vec_us > compute_ideal:
        compute_ideal, compute_kind = vec_us, "vector"
    memory_ideal = min_gm_bytes / (p.hbm_gbps * 1e3)
    ideal_kind, ideal_us = ("memory", memory_ideal) if memory_ideal >= compute_ideal else (compute_kind, compute_ideal)
    roof_us = sum(e.roofline_us for e in parts)
    slowest = max(parts, key=lambda e: e.kernel_us)
    return replace(
        slowest, blocks=max(e.blocks for e in parts), time_us=kernel_us + overhead, kernel_us=kernel_us,
        launch_overhead_us=overhead, hbm_bound=all(e.hbm_bound for e in parts), roofline_us=roof_us,
        roofline_fraction=min(1.0, roof_us / kernel_us) if kernel_us > 0 else 1.0,
        gm_read_bytes=sum(e.gm_read_bytes for e in parts), gm_write_bytes=sum(e.gm_write_bytes for e in parts),
        vector_repeats=sum(e.vector_repeats for e in parts), ideal_kind=ideal_kind, ideal_us=ideal_us,
        ideal_fraction=min(1.0, ideal_us / kernel_us) if kernel_us > 0 else 1.0, min_gm_bytes=int(min_gm_bytes),
        cube_ideal_us=sum(e.cube_ideal_us for e in parts), vector_ideal_us=vec_us,
        kernel_vector_us=sum(e.kernel_vector_us for e in parts),
        vector_basis="kernel" if problem_vector_cycles is None else "problem",
        note=f"{slowest.note}; {len(parts)} launches in order: "
             + " + ".join(f"{e.time_us:.2f}" for e in parts) + " us")
