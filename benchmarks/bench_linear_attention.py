"""Linear attention (examples/attention/linear_attention: four launches, O(S) work) beside softmax attention
(examples/attention/sdpa, lowered as flash attention: O(S^2) work) at growing sequence lengths, as the cost model
sees them (ESTIMATES, not measurements). They compute different functions (phi(Q) (phi(K)^T V) normalised vs
softmax(Q K^T) V): the figure is what a model switching to linear attention gains or loses per layer.

    python benchmarks/bench_linear_attention.py [--target ascend910b1] [--bt 4] [--d 64] [--seq 256,1024,4096]

Every kernel is validated in the emulator against its task's PyTorch reference (a row is printed with its
PASS/FAIL); a kernel of several launches adds its launches' estimates and launch overheads
(npu_harness/cost/launches.py). The emulator steps every tile, so long sequences take minutes (flash attention's
work grows as S^2).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_launches import row, validate  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="ascend910b1")
    ap.add_argument("--bt", type=int, default=4, help="batch x heads")
    ap.add_argument("--d", type=int, default=64, help="head dim (queries, keys and values)")
    ap.add_argument("--seq", default="256,1024,4096", help="sequence lengths (queries = keys)")
    args = ap.parse_args(argv)
    print("ESTIMATES from the cost model (emulator counters), not measurements; every kernel validated in the emulator")
    for s in map(int, args.seq.split(",")):
        sizes = {"Bt": args.bt, "M": s, "N": s, "Dk": args.d, "Dv": args.d}
        print(f"Bt={args.bt}, S={s}, D={args.d} (f16 operands, f32 out), {args.target}:")
        lin = validate(ROOT / "examples/attention/linear_attention.adsl", [], [], args.target, sizes)
        print(row("linear attention (4 launches)", [lin], None))
        sm = validate(ROOT / "examples/attention/sdpa.adsl", [], [], args.target, sizes)
        print(row("softmax attention (sdpa: flash, 1 launch)", [sm], None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
