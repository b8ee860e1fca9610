"""A whole row's ReduceSum / ReduceMax / ReduceMin (row loops: rowLen_ elements at `row`), halves folded first.

The count form of ReduceSum / ReduceMax / ReduceMin costs about 7 cycles per 256-byte repeat (VCADD, ascendc.md
§5.5; ReduceMax / ReduceMin are charged like it), an element-wise Add / Max / Min 2 (§5.5 binary), each instruction
about 20 cycles of issue head. So a long row is first folded in halves with the element-wise op into the row scratch
(`tmp`, rowPitch_ elements): the upper half onto the lower one, each half a whole number of repeats, the elements
past both halves (fewer than 2 repeats) folded onto the start by one more instruction. Halving r repeats saves about
7 r / 2 cycles of the count form and costs a head and r / 2 binary repeats: it pays from 8 repeats on when the halves
cover the row, from 16 when one more instruction folds the rest (`WORTH`). The count form finishes what is left,
with its own scratch (at most a 32-byte block or two) right after the folded values in `tmp` (n of them, n <=
rowLen_ / 2, a whole number of repeats: aligned). A 4096-element f32 row: 4 Adds of 32, 16, 8, 4 repeats and a
ReduceSum of 4 (about 230 cycles with the heads) instead of a ReduceSum of 64 repeats (about 460); rows of 1000
floats keep the single reduction. Max / Min fold NaN through like the element-wise ops do (a NaN anywhere in the row
gives NaN). Sums add in a different order than the single ReduceSum (pairwise halves: no less accurate);
docs/design.md, session 33.
"""

from __future__ import annotations

FOLD = {"ReduceSum": "Add", "ReduceMax": "Max", "ReduceMin": "Min"}

#: whether to halve n elements once more (C++ over `n` and `lanes`, the elements per repeat): from 8 repeats when the
#: halves cover them, else from 16 (module docstring)
WORTH = "n >= 8 * lanes && (n % (2 * lanes) == 0 || n >= 16 * lanes)"


def lines(api: str, out: str, row: str, tmp: str, ctype: str, count: str = "static_cast<int32_t>(rowLen_)",
          n: str = "rowLen_", fold: str | None = None, what: str = "a row") -> list[str]:
    """C++ lines reducing the row that starts at `row` (a LocalTensor expression, e.g. `x[i * rowPitch_]`) into
    `out` with `api`; `tmp` is the row scratch (rowPitch_ elements of the row's dtype). `n` / `count`: the
    elements (unsigned / int32 C++ expressions); `fold`: where the halves are folded, if not `tmp` (a flat tile's
    own dead buffer, emit/flat_fold.py: then `tmp` is only the unfolded count form's scratch)."""
    if api not in FOLD:
        return [f"{api}({out}, {row}, {tmp}, {count});"]
    red, tmp = tmp, fold or tmp
    base, _, off = row.partition("[")
    at = (lambda k: f"{base}[{off[:-1]} + {k}]") if off else (lambda k: f"{row}[{k}]")
    fold = FOLD[api]
    return [
        f"{{  // {api} of {what}: halves folded with {fold} while that is cheaper (emit/row_fold.py)",
        f"    constexpr uint32_t lanes = 256 / sizeof({ctype});",
        f"    uint32_t n = static_cast<uint32_t>({n});",
        f"    if ({WORTH}) {{",
        "        uint32_t h = n / (2 * lanes) * lanes;  // whole repeats in each half",
        f"        {fold}({tmp}, {row}, {at('h')}, static_cast<int32_t>(h));",
        "        if (n > 2 * h) {  // the elements past both halves (fewer than 2 repeats; h >= 4 repeats)",
        f"            {fold}({tmp}, {tmp}, {at('2 * h')}, static_cast<int32_t>(n - 2 * h));",
        "        }",
        "        n = h;",
        f"        while ({WORTH}) {{",
        "            h = n / (2 * lanes) * lanes;",
        f"            {fold}({tmp}, {tmp}, {tmp}[h], static_cast<int32_t>(h));",
        "            if (n > 2 * h) {",
        f"                {fold}({tmp}, {tmp}, {tmp}[2 * h], static_cast<int32_t>(n - 2 * h));",
        "            }",
        "            n = h;",
        "        }",
        f"        {api}({out}, {tmp}, {tmp}[n], static_cast<int32_t>(n));  // its scratch: past the folded values",
        "    } else {",
        f"        {api}({out}, {row}, {red}, {count});",
        "    }",
        "}",
    ]
