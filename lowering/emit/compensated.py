"""Compensated f32 sums on the scalar unit (Neumaier's variant of Kahan summation): the scans' carried offsets
over a row split between a group of cores (lowering/passes/scan_offsets.py; emitted by emit/chunk.py and
emit/row_groups.py). A sum is a pair (hi, lo): hi the running f32 sum, lo the sum of its additions' rounding
errors, so hi + lo is the sum to about one rounding whatever the number of terms."""

from __future__ import annotations


def compensation(name: str) -> str:
    """The member holding the rounding error of compensated sum `name` (its value is `<name>Row_` + this)."""
    return f"{name}Lo_"


def neumaier(hi: str, lo: str, x: str) -> list[str]:
    """C++ lines adding `x` to the compensated sum (hi, lo) (Neumaier's variant of Kahan summation: the error of
    each addition, whichever operand is larger, goes to lo)."""
    return ["{",
            f"    const float t_ = {x};",
            f"    const float s_ = {hi} + t_;",
            f"    {lo} += (({hi}) >= 0.0f ? ({hi}) : -({hi})) >= (t_ >= 0.0f ? t_ : -t_) ? ({hi} - s_) + t_ : (t_ - s_) + {hi};",
            f"    {hi} = s_;",
            "}"]
