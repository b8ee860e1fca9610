"""`--cap N`: choose smaller sizes for a task, keeping the relations between them (pure Python, no torch).

The task worker first runs the task on PyTorch's meta device (no data), which gives every tensor's shape
however the sizes were written: module constants of any name, literals inside get_inputs() or
get_input_groups(), a sibling JSON's shapes, sizes passed to the Model's constructor. From those shapes
`choose_scaling` picks a value map (old size -> new size) over the sizes of the tensors that exceed the cap.
`scale_source` applies it to the task file's integer literals (through the AST, so `4 * 1024` and `2 ** 12`
count as the value they compute) and `scale_json` to the JSON's tensor shapes; the task then runs as if its
author had written the smaller numbers, so every use of a size (get_inputs, the constructor, forward's
reshapes) agrees. Values computed at run time from scaled literals are never mapped a second time. The
worker runs the scaled task on the meta device again to check the cap before any data is made.

The map, in order of preference:
1. Uniform: every size divided by one integer s (sizes ending a row longer than UB by their own s_row), so
   every relation between sizes (equal, multiple, sum) holds exactly; s keeps each size a multiple of the
   task's small integer constants that divided it (a channel count stays a multiple of num_groups).
2. Rounded, when sizes have no common divisor that reaches the cap (primes, 1000003): each size becomes
   about size / s, rounded down to a multiple of every scaled size and small constant that divided it, so
   equal sizes stay equal and multiples stay multiples.
Sizes <= 16 are never scaled and scaled sizes stay >= 16 while the cap allows; a row longer than UB stays
longer than every target's UB (> LONG_ROW_MIN elements), so the chunked row path is what gets validated.
"""

from __future__ import annotations

import ast
import json
import math
from dataclasses import dataclass, field

#: sizes below this are never scaled (channels, kernel sizes, heads, small batches)
SCALABLE_MIN = 17
#: scaled sizes stay at least this large while the cap allows
SIZE_FLOOR = 16
#: a row of more elements than this does not fit the 910B Unified Buffer (192 KB) in f32
UB_ROW_ELEMS = 192 * 1024 // 4
#: rows longer than UB are kept longer than this: more than 256 KB (310P's UB) of 2-byte elements
LONG_ROW_MIN = 256 * 1024 // 2 + 1
#: integer literals up to this size that divide a scaled size stay its divisors (num_groups, heads, kernel sizes)
FIXED_MAX = 64


class CannotScale(Exception):
    """No choice of sizes meets the cap (the message says why)."""


@dataclass
class Scaling:
    sizes: dict[int, int]  # old size -> new size (only sizes that change)
    method: str  # "uniform (/s)" or "rounded"
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        pairs = ", ".join(f"{a}->{b}" for a, b in sorted(self.sizes.items()))
        return f"{pairs} ({self.method})"


def _numel(shape, f: dict[int, int]) -> int:
    n = 1
    for d in shape:
        n *= f.get(d, d)
    return n


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def choose_scaling(cases: list[tuple[list, list]], rows: set[int], cap: int, fixed: set[int],
                   extra_sizes: set[int] = frozenset()) -> Scaling | None:
    """cases: per case, (the shapes of the tensors the task makes: forward() arguments, parameters; the shapes
    of its outputs); rows: sizes that end a tensor of rank >= 2; fixed: the task's integers that are no tensor
    size (their divisibility is kept); extra_sizes: further sizes to scale (literals that divide a size
    computed at run time). None when every tensor of every case is within the cap already. The sizes come
    from the tensors the task makes; an output is predicted only when its sizes are among them (a pooled or
    otherwise computed size is checked by running the scaled task)."""
    over = [ins + [o for o in outs if all(d in _dims(ins) for d in o)] for ins, outs in cases
            if max((_numel(s, {}) for s in ins + outs), default=0) > cap]
    if not over:
        return None
    domain = sorted({d for c in over for s in c for d in s if d >= SCALABLE_MIN} | set(extra_sizes))
    if not domain:
        raise CannotScale("every size of the tensors over the cap is at most 16")
    fixed = {c for c in fixed if 1 < c <= FIXED_MAX and c not in domain}
    long_rows = {v for v in domain if v in rows and v > UB_ROW_ELEMS}
    found = _uniform(over, domain, long_rows, cap, fixed) or _rounded(over, domain, long_rows, cap, fixed)
    if found is None:
        worst = max((s for c in over for s in c), key=lambda s: _numel(s, {}))
        raise CannotScale(f"no sizes >= 1 bring the tensor of shape {list(worst)} under {cap} elements")
    return found


def _dims(shapes) -> set[int]:
    return {d for s in shapes for d in s} | set(range(SCALABLE_MIN))


def _need(v: int, fixed: set[int]) -> int:
    """The lcm of the fixed divisors of v: a scaled v stays a multiple of it."""
    return math.lcm(1, *(c for c in fixed if v % c == 0))


def _uniform(over, domain, long_rows, cap, fixed) -> Scaling | None:
    rest = [v for v in domain if v not in long_rows]
    f: dict[int, int] = {}
    if long_rows:  # rows longer than UB: their own divisor, the largest that keeps them longer than UB
        g = math.gcd(*(v // _need(v, fixed) for v in long_rows))
        s_row = max(d for d in _divisors(g) if all(v // d >= min(v, LONG_ROW_MIN) for v in long_rows))
        f.update({v: v // s_row for v in long_rows})
    if not rest:
        return Scaling({a: b for a, b in f.items() if a != b}, "uniform") if _fits(over, f, cap) else None
    g = math.gcd(*(v // _need(v, fixed) for v in rest))
    for s in _divisors(g):
        if any(v // s < SIZE_FLOOR for v in rest):
            return None
        trial = {**f, **{v: v // s for v in rest}}
        if _fits(over, trial, cap):
            return Scaling({a: b for a, b in trial.items() if a != b}, f"uniform: sizes / {s}")
    return None


def _fits(over, f, cap) -> bool:
    return all(_numel(s, f) <= cap for c in over for s in c)


def _rounded(over, domain, long_rows, cap, fixed) -> Scaling | None:
    for floor, keep_rows in ((SIZE_FLOOR, True), (1, True), (1, False)):
        s = 1.0
        top = max(domain)
        while s <= top * 2:
            f = _rounded_map(domain, long_rows if keep_rows else set(), fixed, s, floor)
            if _fits(over, f, cap):
                notes = [] if keep_rows or not long_rows else [
                    f"rows of {', '.join(map(str, sorted(long_rows)))} elements were scaled below the Unified Buffer's "
                    "size: the cap is too small to keep them longer (the chunked row path is not exercised)"]
                return Scaling({a: b for a, b in f.items() if a != b}, f"rounded: sizes / {s:.3g}", notes)
            s *= 1.03
    return None


def _rounded_map(domain, long_rows, fixed, s: float, floor: int) -> dict[int, int]:
    f: dict[int, int] = {}
    for v in domain:  # ascending: the sizes that divide v are mapped already
        step = math.lcm(_need(v, fixed), *(f[a] for a in f if v % a == 0))
        if step > v:  # the scaled divisors no longer fit in v: keep only the fixed ones
            step = _need(v, fixed)
        lo = min(v, LONG_ROW_MIN) if v in long_rows else min(v, floor)
        lo = -(-lo // step) * step
        new = max(math.floor(v / s / step) * step, lo)
        f[v] = min(new, v)
    return f


# ---- applying a map ------------------------------------------------------------------------------------------

_FOLD_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
             ast.FloorDiv: lambda a, b: a // b if b else None, ast.LShift: lambda a, b: a << b if 0 <= b < 64 else None,
             ast.Pow: lambda a, b: a ** b if 0 <= b < 64 and abs(a) < 1 << 16 else None}


def _int_value(node) -> int | None:
    """The value of an integer literal or a constant expression of them (`4 * 1024`, `2 ** 12`), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _FOLD_OPS:
        a, b = _int_value(node.left), _int_value(node.right)
        if a is not None and b is not None:
            return _FOLD_OPS[type(node.op)](a, b)
    return None


class _ScaleLiterals(ast.NodeTransformer):
    def __init__(self, sizes: dict[int, int]):
        self.sizes = sizes

    def visit_Constant(self, node):
        if type(node.value) is int and node.value in self.sizes:
            return ast.copy_location(ast.Constant(self.sizes[node.value]), node)
        return node

    def visit_BinOp(self, node):
        v = _int_value(node)
        if v is not None and v in self.sizes:
            return ast.copy_location(ast.Constant(self.sizes[v]), node)
        return self.generic_visit(node)


def scale_source(tree: ast.Module, sizes: dict[int, int]) -> ast.Module:
    """The task's AST with every integer literal (or constant expression) whose value is a key of `sizes`
    replaced by its new size."""
    return ast.fix_missing_locations(_ScaleLiterals(sizes).visit(tree))


def int_literals(tree: ast.Module) -> set[int]:
    """Every non-negative integer literal and constant integer expression of the task file."""
    out = set()
    for node in ast.walk(tree):
        v = _int_value(node)
        if v is not None and v >= 0:
            out.add(v)
    return out


def scale_json(text: str, sizes: dict[int, int]) -> str:
    """A get_input_groups() JSONL file with the shapes of its tensor entries mapped (attributes unchanged)."""
    out = []
    for line in text.splitlines():
        try:
            case = json.loads(line) if line.strip() else None
        except ValueError:
            case = None
        if not isinstance(case, dict) or not isinstance(case.get("inputs"), list):
            out.append(line)
            continue
        for entry in case["inputs"]:
            if isinstance(entry, dict) and entry.get("type") == "tensor" and isinstance(entry.get("shape"), list):
                entry["shape"] = [sizes.get(d, d) if type(d) is int else d for d in entry["shape"]]
        out.append(json.dumps(case))
    return "\n".join(out) + "\n"
