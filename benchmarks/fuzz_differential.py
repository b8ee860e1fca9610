"""Differential fuzzing of the compiler: random valid kernels run in the DSL interpreter and, lowered to
AscendC, in the emulator; disagreements, emulator checks, internal errors and crashes are findings,
minimised and saved as regression cases (tests/fuzz_cases). The work is in npu_harness/fuzz/.

    python benchmarks/fuzz_differential.py --seconds 600 --seed 1

Last line: programs N, mismatches M, emulator checks C, internal errors I, crashes X
"""

import sys

from npu_harness.fuzz.campaign import main

if __name__ == "__main__":
    sys.exit(main())
