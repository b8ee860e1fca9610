"""Front-end mutation fuzzing: mutated gallery kernels through parse, type check and lowering on every
target; an INTERNAL error or a traceback is a finding (saved under tests/fuzz_cases/frontend). The work is
in npu_harness/fuzz/mutate.py.

    python benchmarks/fuzz_frontend.py --seconds 120 --seed 1

Last line: programs N, internal errors I, crashes X
"""

import sys

from npu_harness.fuzz.mutate import main

if __name__ == "__main__":
    sys.exit(main())
