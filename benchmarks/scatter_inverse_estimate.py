"""Cost-model estimate of index_copy / index_add (dim 1, one index shared by every row) on the vector unit.

Issue 21 item 3, session 36: the prototype tests/sim/kernels/scatter_inverse.cpp (the per-core inverse of the
index by Sort32 + MrgSort, then a Gather + Select per row, or per repeat level a Gather + Add + Select) runs in
the emulator; this script charges its counted vector instructions with the 910B1 parameters
(npu_harness/cost/targets/ascend910b1.toml: head 20 cycles per instruction, the per-repeat table; Sort32,
MrgSort, Gather, GatherMask, Brcb and CreateVecIndex are not in the table and fall to its default of 2 cycles
per 256-B repeat, an ASSUMPTION) and sets them against the copy traffic of today's kernel at KernelBench's
128 x 4096 (bench_gallery_model.py --kernelbench, main 26014e3: the slowest core's MTE2 / MTE3 microseconds,
43 cores, 3 rows on the slowest). The rows' copy-in overlaps the per-core inverse; the last row's compute and
copy-out do not overlap anything.

The per-element family (scatter_add, index_put_accumulate, scatter_value: an index per element) would need the
same inverse for every row (its own index row): the second table charges rows x (inverse + row work) from the
same counts (scatter_value: the copy form's Select of the value; scatter_add: the add form's levels). Not built.

    python benchmarks/scatter_inverse_estimate.py [--d 4096] [--rows 3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from npu_harness.cost.model import load_params  # noqa: E402
from npu_harness.sim.compiler import compile_program, run_program  # noqa: E402

SRC = Path(__file__).resolve().parents[1] / "tests" / "sim" / "kernels" / "scatter_inverse.cpp"
SORT_KEYS = ("Sort32", "MrgSort")
# bench_gallery_model.py --kernelbench on main 26014e3 (/work/notes/s35/kb_merged.txt): (ideal us, MTE2 us, MTE3 us,
# today's device us, today's % of the ideal) of the slowest core at 128 x 4096
TODAY = {("copy", "f32"): (3.90, 3.97, 1.76, 200.73, 2), ("copy", "f16"): (1.96, 2.35, 0.96, 200.96, 1),
         ("add", "f32"): (3.90, 3.97, 1.76, 267.19, 1), ("add", "f16"): (1.96, 2.35, 0.96, 267.41, 1)}
PER_ELEMENT = {("scatter_value", "f32"): ("copy", 5.18, 4.86, 1.76, 135.10, 4), ("scatter_value", "f16"): ("copy", 3.88, 4.21, 1.12, 134.65, 3),
               ("scatter_add", "f32"): ("add", 6.47, 6.65, 1.76, 268.53, 2), ("scatter_add", "f16"): ("add", 4.53, 5.35, 1.12, 267.87, 2),
               ("index_put_accumulate", "f32"): ("add", 6.47, 6.65, 1.76, 268.53, 2),
               ("index_put_accumulate", "f16"): ("add", 4.53, 5.35, 1.12, 267.87, 2)}


def vec_us(vec: dict, p, only=None, skip=()) -> float:
    cyc = 0.0
    for key, (instr, reps) in vec.items():
        op = key.split(".", 1)[0]
        if (only and op not in only) or op in skip:
            continue
        cyc += instr * p.vec_head_cycles + max(0, reps - instr) * p.cycles_per_repeat(key)
    return cyc / (p.clock_ghz * 1e3)


def run(binary: Path, mode: str, dtype: str, d: int, rows: int, pattern: str) -> tuple[dict, str]:
    res = run_program(binary, [mode, dtype, str(d), str(rows), pattern], timeout=600)
    if res.returncode != 0 or res.errors:
        raise SystemExit(f"scatter_inverse {mode} {dtype} {d} {rows} {pattern} failed:\n{res.stdout}\n{res.stderr}")
    return res.counters["blocks"][0]["vec"], res.stdout.strip().splitlines()[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--d", type=int, default=4096)
    ap.add_argument("--rows", type=int, default=3, help="rows on the slowest core (128 rows over 43 cores: 3)")
    args = ap.parse_args()
    p = load_params("ascend910b1")
    binary = compile_program([SRC], defines={})
    print(f"cost model ESTIMATES (910B1), D = {args.d}, {args.rows} rows on the slowest core; sort ops at the "
          f"default {p.vec_default_cycles:g} cycles/repeat (ASSUMPTION)")
    print(f"{'kernel':12} {'dtype':5} {'levels':>6} {'inverse us':>10} {'(sort us)':>9} {'rows us':>8} {'V us':>6} "
          f"{'MTE2 us':>7} {'est us':>7} {'ideal us':>8} {'ideal%':>6} {'today us':>9} {'today%':>6}")
    per: dict = {}
    for mode, pattern in (("copy", "perm"), ("add", "randint")):
        for dtype in ("f32", "f16"):
            pre, _ = run(binary, mode, dtype, args.d, 0, pattern)
            full, line = run(binary, mode, dtype, args.d, args.rows, pattern)
            levels = line.split()[1]
            v_pre, v_all = vec_us(pre, p), vec_us(full, p)
            per[(mode, dtype)] = (v_pre, (v_all - v_pre) / args.rows)
            sort = vec_us(pre, p, only=SORT_KEYS)
            v_rows = v_all - v_pre
            ideal, mte2, mte3, today_us, today_pct = TODAY[(mode, dtype)]
            # the copy-in overlaps the inverse and the rows; the last row's compute and copy-out come after both
            est = max(mte2, v_all) + mte3 / args.rows
            name = "index_copy" if mode == "copy" else "index_add"
            print(f"{name:12} {dtype:5} {levels:>6} {v_pre:10.2f} {sort:9.2f} {v_rows:8.2f} {v_all:6.2f} {mte2:7.2f} "
                  f"{est:7.2f} {ideal:8.2f} {100 * ideal / est:5.0f}% {today_us:9.2f} {today_pct:5d}%")
    for dtype, size in (("f32", 4), ("f16", 2)):
        one, line = run(binary, "add", dtype, args.d, 1, "randint")
        pre, _ = run(binary, "add", dtype, args.d, 0, "randint")
        levels = int(line.split()[1])
        row = vec_us(one, p) - vec_us(pre, p)
        reps = 2 * args.d * size // 256  # the row's sources gathered in sorted order (2D elements)
        gather_sorted = (p.vec_head_cycles + (reps - 1) * p.cycles_per_repeat("Gather")) / (p.clock_ghz * 1e3)
        print(f"index_add {dtype}: one row = {row:.2f} us of V: {gather_sorted:.2f} us for the sorted sources + "
              f"{(row - gather_sorted) / levels:.2f} us for each of its {levels} levels (the task's randint index: the "
              f"largest of 4096 columns drawn 4096 times has 6-8 repeats)")
    sort = vec_us(pre, p, only=SORT_KEYS)
    print(f"sensitivity: Sort32 + MrgSort at 2x / 4x the default cycles per repeat would add {sort:.2f} / {3 * sort:.2f} us "
          "to every estimate above (the inverse is on the critical path)")
    print("\nper-element family (an inverse per row; estimate only, not built):")
    print(f"{'kernel':22} {'dtype':5} {'V us':>6} {'MTE2 us':>7} {'est us':>7} {'ideal us':>8} {'ideal%':>6} {'today us':>9} {'today%':>6}")
    for (name, dtype), (mode, ideal, mte2, mte3, today_us, today_pct) in PER_ELEMENT.items():
        v_inv, v_row = per[(mode, dtype)]
        v = args.rows * (v_inv + v_row)
        est = max(mte2, v) + mte3 / args.rows
        print(f"{name:22} {dtype:5} {v:6.2f} {mte2:7.2f} {est:7.2f} {ideal:8.2f} {100 * ideal / est:5.0f}% {today_us:9.2f} "
              f"{today_pct:5d}%")


if __name__ == "__main__":
    main()
