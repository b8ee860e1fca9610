"""Reference interpreter: runs a surface kernel on torch tensors (the DSL's semantic oracle).

Tensors are flat views; a split gives each of `num_cores` cores a contiguous share and a tile loop
walks that share in tiles of `tile` elements, evaluating expressions in the kernel's dtypes.
"""

from __future__ import annotations

import math

import torch

from . import cast_bound as cb
from . import ir, launches, scan_bound, views
from .diagnostics import DslError
from .diagnostics import ErrorCode as E
from .ops import OPS, POOLS, Rule, element_scatter_ref, row_scatter_ref, scan_in_order
from .parser_scatter import named, tensor_name

#: Float dtypes of the current run: their own (torch.float16, ...), or all float64 in a widened run; and
#: the select coverage being recorded, if any.
_FLOAT = {"widen": False, "coverage": None, "compare_nudge": 0.0, "cast_nudge": 0.0, "math_nudge": 0.0,
          "math_floor": 0.0, "nan_skip": False, "math_signs": {}, "round_casts": False, "sum_nudge": 0,
          "sum_alternate": False, "cast_bound": False}
#: Ops a device computes to within a few units of rounding, not exactly (instructions and lowered sequences).
APPROXIMATE_OPS = ("exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "erf", "div", "pow")


def _dt(dtype) -> torch.dtype:
    return torch.float64 if _FLOAT["widen"] and dtype.is_float else dtype.torch


def run(kernel: ir.Kernel, tensors: dict[str, torch.Tensor], scalars: dict[str, float] | None = None,
        num_cores: int = 4, tile: int = 4096, widen: bool = False,
        coverage: dict | None = None, compare_nudge: float = 0.0, cast_nudge: float = 0.0,
        math_nudge: float = 0.0, math_floor: float = 0.0, nan_skip: bool = False,
        round_casts: bool = False, sum_nudge: int = 0, sum_alternate: bool = False,
        cast_bound: bool = False) -> dict[str, torch.Tensor]:
    """Run `kernel`; `tensors` maps every tensor parameter (inputs and outputs) to a torch tensor.

    Outputs are written in place and also returned by name. Rank-1 parameters are viewed flat; row
    loops walk blocks of whole rows (`tile` elements' worth of rows, at least one). `widen`: every float
    value is float64 (the tensors given too), e.g. to measure how much f32/f16 rounding moves a result.
    `coverage`: filled with, per tile select (by its span), [some element took `a`, some took `b`].
    The nudges serve the differential fuzzer's oracle (how far last-bit differences can move a discontinuous
    result): with `compare_nudge` a comparison `a OP b` of floats compares a + `compare_nudge` * max(|a|, |b|)
    with b (for == and != with a positive nudge: a and b that close are equal); with `cast_nudge` a float cast to
    an integer first moves its value by `cast_nudge` * max(1, |x|); with `math_nudge` the result of every
    APPROXIMATE_OPS op on tiles is scaled by 1 + `math_nudge` or 1 - `math_nudge`, the sign alternating between
    ops in the order they are first evaluated (the errors of two ops are independent: the same scale on both
    cancels in x / (x / c), which a device's x * (1 / c) does not give exactly), and moved by at least `math_floor`
    times the smallest subnormal of the op's dtype (near zero a dtype's resolution is absolute: an f16 result off by
    a unit there is off by much of its value); with `nan_skip` max/min reductions and
    accumulators skip NaN instead of propagating it (what a device's reduction may do: not specified); with
    `round_casts` a widened run still rounds `cast(x, f16)` / `cast(x, bf16)` to that dtype (a rounding the
    program asks for: where it decides a comparison, last-bit differences before it matter); with `sum_nudge`
    (+1 or -1) every float sum (sum, mean, the parts and totals of accumulators) moves up or down by one unit of
    its dtype at the magnitude of its absolute sum, which bounds every partial sum (with `sum_alternate` the sign
    alternates between sums in the order they are first evaluated): a device adds in another order, and where the
    values or a later rounded operation cancel, a unit of a partial sum shows; and
    float scans run as an f32 loop, element after element (ops.scan_in_order), then moved the same way by the
    bound of any order of their adds or multiplies (a running sum: scan_bound.depth(n) units of 2^-24 times each
    prefix's sum of |x|; a product: k - 1 units of its |value|: ascend_dsl/scan_bound.py).
    `cast_bound` (a widened run only): every float value carries a first-order bound on how far the roundings of
    the casts to f16/bf16 before it can move it, in any order of the work after them (ascend_dsl/cast_bound.py);
    the outputs returned (not the tensors given, whose values are written as usual) are cast_bound.Bounded."""
    if cast_bound:
        if not widen:
            raise ValueError("cast_bound needs a widened run (widen=True)")
        tensors = {n: cb.bounded(t) if t.is_floating_point() else t for n, t in tensors.items()}
    _FLOAT.update(widen=widen, coverage=coverage, compare_nudge=compare_nudge, cast_nudge=cast_nudge,
                  math_nudge=math_nudge, math_floor=math_floor, nan_skip=nan_skip, math_signs={},
                  round_casts=round_casts, sum_nudge=sum_nudge, sum_alternate=sum_alternate, cast_bound=cast_bound)
    try:
        if launches.is_launches(kernel):  # several launches (ascend_dsl/launches.py): in order, on shared tensors
            symbols = _sizes(kernel, tensors)
            if kernel.views:  # a launch reads a workspace tensor through a view: its dims (ascend_dsl/views.py)
                given = {p.name: p.default for p in kernel.scalars} | dict(scalars or {})
                symbols |= views.bind_symbols(kernel, symbols, given)
            shared = {**tensors, **_workspaces(kernel, tensors, symbols)}
            for sub in launches.launch_kernels(kernel):
                own = {p.name: shared[p.name].view([symbols[d] if isinstance(d, str) else d for d in p.shape])
                       for p in sub.tensors if kernel.param(p.name).shape != p.shape}
                _run(sub, {**shared, **own}, scalars, num_cores, tile)
            return {p.name: tensors[p.name] for p in kernel.outputs}
        return _run(kernel, tensors, scalars, num_cores, tile)
    finally:
        _FLOAT.update(widen=False, coverage=None, compare_nudge=0.0, cast_nudge=0.0, math_nudge=0.0, math_floor=0.0,
                      nan_skip=False, math_signs={}, round_casts=False, sum_nudge=0,
                      sum_alternate=False, cast_bound=False)


def _run(kernel: ir.Kernel, tensors: dict[str, torch.Tensor], scalars: dict[str, float] | None, num_cores: int,
         tile: int) -> dict[str, torch.Tensor]:
    scalars = dict(scalars or {})
    for p in kernel.scalars:
        if p.name not in scalars:
            if p.default is None:
                raise DslError.at(E.BINDING, f"no value for scalar parameter '{p.name}'", p.span)
            scalars[p.name] = p.default
    views = {}
    tensors = {**_workspaces(kernel, tensors), **tensors}  # a launch's workspace tensors come allocated
    for p in kernel.tensors:
        t = tensors[p.name]
        if t.dtype != _dt(p.dtype):
            raise DslError.at(E.BINDING, f"'{p.name}' is {p.dtype} in the kernel but {t.dtype} was given", p.span)
        views[p.name] = t.reshape(-1) if len(p.shape) == 1 else t.reshape(-1, t.shape[-1]) if len(p.shape) == 2 \
            and t.dim() > 2 else t
    symbols = _symbols(kernel, views)
    _row_views(kernel, views)
    scalars.update({k: float(v) for k, v in symbols.items()})
    for stmt in kernel.body:
        if isinstance(stmt, ir.AccDecl):
            scalars[stmt.name] = stmt.init
        elif isinstance(stmt, ir.ScalarAssign):
            scalars[stmt.name] = _scalar(_eval(stmt.value, {}, views, scalars, slice(0)))
        elif isinstance(stmt, ir.ScalarLoad):
            scalars[stmt.name] = _scalar(views[stmt.tensor].reshape(-1)[0])
        elif isinstance(stmt, ir.ScalarStore):
            views[stmt.tensor].reshape(-1)[0] = _eval(stmt.value, {}, views, scalars, slice(0))
        elif isinstance(stmt, ir.SlotAccDecl):
            _slot_rows(stmt, kernel, views, scalars, symbols)
        elif isinstance(stmt, ir.CubeLoop):
            _run_cube(stmt, kernel, views, scalars, symbols)
        elif isinstance(stmt, ir.ConvLoop):
            _run_conv(stmt, views, symbols, kernel.param(stmt.out))
        else:
            _run_split(kernel, stmt, tensors, views, scalars, symbols, num_cores, tile)
    return {p.name: tensors[p.name] for p in kernel.outputs}


def _scalar(x) -> float | torch.Tensor:
    """A scalar's value: a Python float, or in a cast_bound run a 0-d float64 Bounded with its bound."""
    return x.reshape(()) if _FLOAT["cast_bound"] and isinstance(x, cb.Bounded) else float(x)


def _nan_or(a, b, pick):
    """max / min that propagate NaN, as torch.maximum / torch.minimum (builtin max(x, nan) drops the NaN, and
    with it every value before it)."""
    if _FLOAT["nan_skip"]:
        return b if a != a else a if b != b else pick(a, b)
    return a if a != a else b if b != b else pick(a, b)


_COMBINE = {ir.Combine.ADD: lambda a, b: a + b, ir.Combine.MAX: lambda a, b: _nan_or(a, b, max),
            ir.Combine.MIN: lambda a, b: _nan_or(a, b, min)}


def _run_split(kernel: ir.Kernel, loop: ir.SplitLoop, tensors, views, scalars, symbols, num_cores: int,
               tile: int) -> None:
    """Each core starts its accumulators from their initial value; the per-core values are combined
    when the loop ends, as the emitted kernel does across cores."""
    accs = {s.name for s in ir.walk(loop.body) if isinstance(s, ir.Accumulate)}
    slot_accs = {s.name for s in ir.walk(loop.body) if isinstance(s, ir.SlotAccumulate)}
    partials: dict[str, list[float]] = {a: [] for a in accs}
    slot_partials: dict[str, list[torch.Tensor]] = {a: [] for a in slot_accs}
    total = 1
    for s in loop.extent:
        total *= symbols[s]
    share = -(-total // num_cores) if total else 0
    for core in range(num_cores):
        core_scalars = dict(scalars)
        for a in slot_accs:  # this core's partial vector, one f32 per slot
            core_scalars[a] = torch.zeros(views[("slots", a)][1], dtype=_dt(ir.DType.F32))
            if _FLOAT["cast_bound"]:
                core_scalars[a] = cb.bounded(core_scalars[a])
        lo, hi = core * share, min(total, (core + 1) * share)
        for tl in loop.body:
            assert isinstance(tl, ir.TileLoop)
            step = tile if tl.kind is not ir.LoopKind.ROWS else max(1, tile // max(_product(tl.shape.row, symbols), 1))
            tviews = views
            if tl.kind is ir.LoopKind.PLANES:  # [N, C, *spatial] tensors as (N * C) planes; a tile is a block of planes
                lead = len(loop.extent)
                planar = [p for p in kernel.tensors if len(p.shape) > lead  # not a grid_sample grid [N, OH, OW, 2]
                          and tuple(p.shape[:lead]) == tuple(loop.extent)]
                tviews = {**views, **{p.name: tensors[p.name].reshape(total, *tensors[p.name].shape[lead:])
                                      for p in planar}}
                plane = max([tviews[p.name][0].numel() for p in planar if len(tviews[p.name])] + [1])
                step = max(1, tile // max(plane, 1))
            if tl.kind is ir.LoopKind.BOX:  # box loops: each position's values along the extra axis as one row
                tviews, step = _box_views(kernel, loop, tl, tensors, views, symbols, total, tile)
            for start in range(lo, hi, step):
                _run_tile(tl.body, tviews, core_scalars, slice(start, min(hi, start + step)))
            if tl.kind is ir.LoopKind.BOX:
                _box_write_back(kernel, loop, tl, tensors, tviews, symbols)
        for a in accs:
            partials[a].append(core_scalars[a])
        for a in slot_accs:
            slot_partials[a].append(core_scalars[a])
    for a, parts in slot_partials.items():  # every core's vector added in core order, as the kernel does
        totals = torch.zeros_like(parts[0])
        for p in parts:
            totals = totals + p
        views[a] = totals[views[("slots", a)][0]]  # read back per row: row r -> its slot's total
    for s in ir.walk(loop.body):
        if isinstance(s, ir.Accumulate) and s.name in partials:
            value = scalars[s.name]
            parts = partials.pop(s.name)
            summed = _slots_reduce_sum(parts) if len(accs) == 1 else _tree_sum(parts)
            for p in parts if s.combine is not ir.Combine.ADD else summed:
                value = _COMBINE[s.combine](value, p)
            scalars[s.name] = value


def _slots_reduce_sum(parts: list[float]) -> list[float]:
    """The per-core sums of a split loop's only accumulator added as the kernel's combine does (snippets/acc_combine:
    one ReduceSum over the cores' 32-byte slots, lane 0 the value and the other 7 lanes 0): the count form reduces
    each 256-byte repeat (8 slots) as a binary tree, zero-padded to a power of two, and adds the repeats' sums in
    order (ascend_sim/reduce.h, ReduceSum.md); [] for no cores. A loop with a chunked path (rows longer than UB, a
    lowering decision the interpreter does not see) keeps the halving tree: the two orders differ by the sum
    slack the oracle allows."""
    total = None
    for r in range(0, len(parts), 8):
        v = list(parts[r:r + 8])
        w = 1
        while w < len(v):
            w <<= 1
        v += [0.0] * (w - len(v))
        while len(v) > 1:
            v = [v[2 * i] + v[2 * i + 1] for i in range(len(v) // 2)]
        total = v[0] if total is None else total + v[0]
    return [] if total is None else [total]


def _tree_sum(parts: list[float]) -> list[float]:
    """The per-core sums added as the kernel's combine adds its slots (snippets/acc_combine): while n > 1 the
    last n // 2 onto the first n // 2 (the middle one of an odd n kept); [] for no cores."""
    parts = list(parts)
    n = len(parts)
    while n > 1:
        h = n // 2
        for i in range(h):
            parts[i] = parts[i] + parts[n - h + i]
        n -= h
    return parts[:1]


def _slot_rows(decl: ir.SlotAccDecl, kernel: ir.Kernel, views, scalars, symbols) -> None:
    """The row -> slot map of a slot accumulator: slot (r // rows_per_slot) % slots."""
    def value(name: str) -> int:
        return symbols[name] if name in symbols else int(scalars[name])

    slots = 1
    for d in decl.slots:
        slots *= value(d)
    rows_total = 1
    for s in kernel.phases[0].extent:
        rows_total *= symbols[s]
    per, groups = 1, 1
    for d in decl.rows_per_slot:
        per *= value(d)
    for d in decl.groups:
        groups *= value(d)
    if groups <= 0 or per % groups:
        raise DslError.at(E.SHAPE, f"{' * '.join(decl.groups)} = {groups} does not divide "
                          f"{' * '.join(decl.rows_per_slot)} = {per}: the rows of '{decl.name}' cannot be grouped",
                          decl.span)
    rows = torch.arange(rows_total)
    views[("slots", decl.name)] = ((rows // (per // groups)) % max(slots, 1), slots)


def _box_views(kernel: ir.Kernel, loop: ir.SplitLoop, tl: ir.TileLoop, tensors, views, symbols, total: int,
               tile: int) -> tuple[dict, int]:
    """Box tensors [.., R, ..] as (positions, R) rows, the reduced axis moved last; tensors over the split's
    dims flat. A tile is `tile` elements' worth of positions (at least one)."""
    axis, dim = tl.shape.axis, tl.shape.dim
    out = dict(views)
    for p in kernel.tensors:
        t = tensors[p.name]
        if tuple(p.shape) == loop.extent:
            out[p.name] = t.reshape(-1)
        elif len(p.shape) == len(loop.extent) + 1 and p.shape[axis] == dim:
            shaped = t.reshape([symbols[d] if isinstance(d, str) else d for d in p.shape])
            out[p.name] = shaped.movedim(axis, -1).reshape(total, symbols[dim])
    return out, max(1, tile // max(symbols[dim], 1))


def _box_write_back(kernel: ir.Kernel, loop: ir.SplitLoop, tl: ir.TileLoop, tensors, tviews, symbols) -> None:
    """Stored boxes: the (positions, R) rows back into their tensors, the reduced axis in its place."""
    axis = tl.shape.axis
    stored = {s.tensor for s in ir.walk(tl.body) if isinstance(s, ir.Store) and s.value.type.layout is ir.Layout.BOX}
    for p in kernel.tensors:
        if p.name in stored:
            shaped = tensors[p.name].view([symbols[d] if isinstance(d, str) else d for d in p.shape])
            moved = shaped.movedim(axis, -1)
            moved.copy_(tviews[p.name].reshape(moved.shape).clone())  # a view of the tensor itself when A == 1


def _workspaces(kernel: ir.Kernel, tensors: dict[str, torch.Tensor], symbols: dict[str, int] | None = None
                ) -> dict[str, torch.Tensor]:
    """The kernel's own GM tensors (`p = workspace(...)`) not in `tensors`, sized from the bound tensors' shapes
    and `symbols` (those a view defines) and filled with NaN (integers: their minimum), so a stage reading what no
    stage wrote shows in the result."""
    sizes = {**_sizes(kernel, tensors), **(symbols or {})}
    out = {}
    for p in kernel.workspaces:
        if p.name in tensors:
            continue
        dt = _dt(p.dtype)
        fill = float("nan") if dt.is_floating_point else torch.iinfo(dt).min
        out[p.name] = torch.full([sizes[d] for d in p.shape], fill, dtype=dt)
        if _FLOAT["cast_bound"] and dt.is_floating_point:
            out[p.name] = cb.bounded(out[p.name])
    return out


def _sizes(kernel: ir.Kernel, tensors: dict[str, torch.Tensor]) -> dict[str, int]:
    """Shape symbols of the bound tensors declared at their own rank."""
    sizes: dict[str, int] = {}
    for p in kernel.tensors:
        if not p.workspace and p.name in tensors and tensors[p.name].dim() == len(p.shape):
            for d, n in zip(p.shape, tensors[p.name].shape, strict=True):
                if isinstance(d, str):
                    sizes.setdefault(d, n)
    return sizes


def _product(names: tuple[str, ...], symbols: dict[str, int]) -> int:
    out = 1
    for s in names:
        out *= symbols[s]
    return out


def _row_views(kernel: ir.Kernel, views: dict) -> None:
    """Tensors whose leading dims are the split extent become 2-D: rows x the rest."""
    if not kernel.phases:
        return
    extent = kernel.phases[0].extent
    k = len(extent)
    for p in kernel.tensors:
        if len(p.shape) > max(k, 1) and tuple(p.shape[:k]) == extent and views[p.name].dim() == len(p.shape):
            rows = 1
            for d in views[p.name].shape[:k]:
                rows *= d
            views[p.name] = views[p.name].reshape(rows, -1)
        elif k > 1 and tuple(p.shape) == extent and views[p.name].dim() == k:  # one value per row: y[N, K], split(N * K)
            views[p.name] = views[p.name].reshape(-1)


def _symbols(kernel: ir.Kernel, views) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in kernel.tensors:
        dims = list(views[p.name].shape)
        for d, n in zip(p.shape, dims, strict=False):
            if isinstance(d, str):
                out.setdefault(d, n)
    return out


def _is_resize(e: ir.Expr) -> bool:
    return isinstance(e, ir.Op) and OPS[e.op].rule is Rule.RESIZE


def _resized(e: ir.Op, target: torch.Tensor, env, views, scalars, sl: slice) -> torch.Tensor:
    """Resize op `e` of the planes at `sl`, to the spatial size of `target` (the tensor that stores it)."""
    planes = _eval(e.args[0], env, views, scalars, sl)
    if len(e.args) == 2:  # grid_sample: plane q of the N * C samples at grid[q // C]
        grid = views[e.args[1].value]
        per_batch = target.shape[0] // grid.shape[0]
        rows = torch.arange(target.shape[0])[sl] // per_batch
        return OPS[e.op].ref(planes, grid[rows]).to(_dt(e.type.dtype))
    return OPS[e.op].ref(planes, tuple(target.shape[1:])).to(_dt(e.type.dtype))


def _run_tile(body, views, scalars, sl: slice) -> None:
    env: dict[str, object] = {}
    for s in body:
        if isinstance(s, ir.Assign) and _is_resize(s.value):  # to the size of the tensor that stores it
            (dest,) = {t.tensor for t in body if isinstance(t, ir.Store) and t.value == ir.Ref(s.name, s.value.type)}
            env[s.name] = _resized(s.value, views[dest], env, views, scalars, sl)
        elif isinstance(s, ir.Assign):
            env[s.name] = _eval(s.value, env, views, scalars, sl)
        elif isinstance(s, ir.Store):
            target = views[s.tensor]
            if _is_resize(s.value):  # to the stored planes' size
                target[sl] = _resized(s.value, target, env, views, scalars, sl)
                continue
            value = _eval(s.value, env, views, scalars, sl)
            if s.index.rows:
                target[sl, :] = value.expand(target[sl, :].shape)
            elif s.value.type.layout is ir.Layout.BOX:  # the tile's positions x the extra axis (_box_views)
                target[sl, :] = value
            elif s.value.type.layout is ir.Layout.POOLED:
                target[sl] = value
            else:
                target[sl] = value.reshape(-1) if value.dim() > 1 else value
        elif isinstance(s, ir.SlotAccumulate):  # each row's value into its slot
            value = _eval(s.value, env, views, scalars, sl).to(_dt(ir.DType.F32)).reshape(-1)
            scalars[s.name].index_add_(0, views[("slots", s.name)][0][sl], value)
        elif isinstance(s, ir.Accumulate):
            value = _skip_nan(s.reduce, _eval(s.value, env, views, scalars, sl).to(_dt(ir.DType.F32)))
            part = {"reduce_sum": torch.sum, "reduce_max": torch.max, "reduce_min": torch.min}[s.reduce](value)
            if _FLOAT["sum_nudge"] and s.reduce == "reduce_sum":  # this tile's part, then the running total
                part = _unit_moved(part.to(torch.float32), s, torch.sum(value.abs()).to(torch.float32))
            scalars[s.name] = _COMBINE[s.combine](scalars[s.name], _scalar(part))
            if _FLOAT["sum_nudge"] and s.combine is ir.Combine.ADD:
                scalars[s.name] = float(_unit_moved(torch.tensor(scalars[s.name], dtype=torch.float32), s))


def _row_gather(table: torch.Tensor, numbers: torch.Tensor, e: ir.Load) -> torch.Tensor:
    """Rows `numbers` of `table` ([V, ...]); negative numbers count from the end, as PyTorch's w[idx]."""
    table = table.reshape(table.shape[0], -1)
    v = table.shape[0]
    outside = (numbers < -v) | (numbers >= v)
    if bool(outside.any()):
        raise DslError.at(E.INDEX, f"{e.tensor}[{e.index.by}[...], :]: row number {int(numbers[outside][0])} is "
                          f"outside [-{v}, {v}) ('{e.tensor}' has {v} rows)", e.span)
    return table[numbers.long()].clone()


def _group_gather(table: torch.Tensor, index: torch.Tensor, e: ir.Load, scalars, sl) -> torch.Tensor:
    """Loop rows g = (a, k) of a gather along a middle dim: row (g / K) * R + n of `table` ([A.., R, *row]), n =
    index[g] (index[g % K] for a [K] index); negative numbers count from the end of R (take_along_dim)."""
    group = e.index.group
    k, r = int(scalars[group.k]), int(scalars[group.r])
    row_len = math.prod(int(scalars[n.strip()]) for n in group.row.split("*"))
    g = torch.arange(sl.start, sl.stop)
    numbers = index[g % k] if group.periodic else index[g]
    outside = (numbers < -r) | (numbers >= r)
    if bool(outside.any()):
        raise DslError.at(E.INDEX, f"{e.tensor}[{e.index.by}[...], :]: row number {int(numbers[outside][0])} is "
                          f"outside [-{r}, {r}) (dim {group.r} of '{e.tensor}')", e.span)
    rows = (g // k) * r + numbers.long() + r * (numbers < 0).long()
    return table.reshape(-1, row_len)[rows].clone()


def _broadcast_rows(view: torch.Tensor, index: ir.TileIndex, layout: ir.Layout, scalars, sl) -> torch.Tensor:
    """Global row q reads row (q / stride) % period of `view` (parser_broadcast.py)."""
    def product(names: str | None) -> int:
        return math.prod(int(scalars[n.strip()]) for n in names.split("*")) if names else 1

    period = product(index.period)
    rows = (torch.arange(sl.start, sl.stop) // product(index.stride)) % period
    table = view.reshape(period, -1)
    return table[rows].clone() if layout is ir.Layout.ROWS else table.reshape(-1)[rows].reshape(-1, 1).clone()


def _eval(e: ir.Expr, env, views, scalars, sl):
    match e:
        case ir.Const(value=v, type=t):
            return torch.tensor(v, dtype=_dt(t.dtype))
        case ir.Ref(name=n, type=t):
            if n in env:
                return env[n]
            if isinstance(scalars[n], cb.Bounded):  # a cast_bound run's scalar, with its bound
                return scalars[n].to(_dt(t.dtype))
            return torch.tensor(scalars[n], dtype=_dt(t.dtype))
        case ir.Load(tensor=name, type=t) as e:
            view = views[name]
            if e.index.by and e.index.group:  # w[idx[r], :] of w [A.., R, *row]: along its middle dim
                return _group_gather(view, views[e.index.by].reshape(-1), e, scalars, sl)
            if e.index.by:  # w[idx[r], :]: the rows of w at the tile's row numbers
                return _row_gather(view, views[e.index.by].reshape(-1)[sl], e)
            if e.index.period and (e.index.stride or t.layout is ir.Layout.ROWS):  # broadcast over split symbols
                return _broadcast_rows(view, e.index, t.layout, scalars, sl)
            if t.layout in (ir.Layout.ROWS, ir.Layout.BOX):
                return view[sl, :].clone()
            if t.layout is ir.Layout.ROW:
                return view.reshape(1, -1).clone()
            if t.layout is ir.Layout.COL and e.index.period:  # rows n*C + c read w[c]
                return view.reshape(-1)[torch.arange(sl.start, sl.stop) % view.numel()].reshape(-1, 1).clone()
            if t.layout is ir.Layout.COL:
                return view[sl].reshape(-1, 1).clone()
            return view[sl].clone()
        case ir.Op(op=op, args=(a, *params), type=t) if op in POOLS:
            window = (int(_eval(q, env, views, scalars, sl)) for q in params)  # kernel, stride, padding, dilation
            return OPS[op].ref(_eval(a, env, views, scalars, sl), *window).to(_dt(t.dtype))
        case ir.Op(op=op, args=(a,), type=t) if a.type.layout is ir.Layout.BOX and t.layout is ir.Layout.FLAT:
            box = _skip_nan(op, _eval(a, env, views, scalars, sl))
            return OPS[op].ref(box).reshape(-1).to(_dt(t.dtype))  # a box reduction
        case ir.Op(op="cast", args=(a,), type=t):
            return _cast(_eval(a, env, views, scalars, sl), t.dtype)
        case ir.Op(op="col_index", args=(d,)):  # element j of each of the tile's rows holds j
            n = int(_eval(d, env, views, scalars, sl))
            return torch.arange(n, dtype=torch.int32).expand(sl.stop - sl.start, n).clone()
        case ir.Op(op="row_index" | "col_minus_row" as op, args=(p, d)):  # global row g holds g % P in every element
            n, period = int(_eval(d, env, views, scalars, sl)), int(_eval(p, env, views, scalars, sl))
            rows = (torch.arange(sl.start, sl.stop, dtype=torch.int64) % period).to(torch.int32).reshape(-1, 1)
            if op == "col_minus_row":  # the lowering's col_index() - row_index()
                return torch.arange(n, dtype=torch.int32).reshape(1, -1) - rows
            return rows.expand(-1, n).clone()
        case ir.Op(op="gather_middle", args=(i, x, rr, kk), type=t):  # x [A.., R, *row] read whole
            r, k = int(_eval(rr, env, views, scalars, sl)), int(_eval(kk, env, views, scalars, sl))
            idx = _eval(i, env, views, scalars, sl).long()
            outside = (idx < 0) | (idx >= r)
            if bool(outside.any()):
                raise DslError.at(E.INDEX, f"gather: index {int(idx[outside][0])} is outside [0, {r}) (the middle dim "
                                  f"of '{tensor_name(x)}')", e.span)
            table = views[tensor_name(x)].reshape(-1, idx.shape[1])
            rows = (torch.arange(sl.start, sl.stop) // k * r).reshape(-1, 1) + idx
            return table[rows, torch.arange(idx.shape[1]).expand_as(rows)].to(_dt(t.dtype))
        case ir.Op(op="index_select_cols", args=(i, x, d), type=t):  # x read whole: rows sl of [rows, D]
            cols, idx = int(_eval(d, env, views, scalars, sl)), _eval(i, env, views, scalars, sl)
            outside = (idx < 0) | (idx >= cols)
            if bool(outside.any()):
                call = "gather" if i.type.layout is ir.Layout.ROWS else "index_select"
                raise DslError.at(E.INDEX, f"{call}: column index {int(idx[outside][0])} is outside "
                                  f"[0, {cols}) (the columns of '{tensor_name(x)}')", e.span)
            table = views[tensor_name(x)].reshape(-1, cols)[sl]
            if i.type.layout is ir.Layout.ROWS:  # gather(x, load(idx[r, :])): one index row per output row
                return torch.gather(table, 1, idx.long()).to(_dt(t.dtype))
            return table[:, idx.reshape(-1).long()].to(_dt(t.dtype))
        case ir.Op(op="scatter_dim0" | "scatter_add_dim0" as op, args=(a, i, v, n, _), type=t):
            rows, count = _eval(a, env, views, scalars, sl), int(_eval(n, env, views, scalars, sl))
            index = views[tensor_name(i)]
            index = index.reshape(index.shape[0], -1)
            src = views[tensor_name(v)].reshape(index.shape) if named(v) else \
                torch.full(index.shape, float(_eval(v, env, views, scalars, sl)), dtype=rows.dtype)  # value=
            outside = (index < 0) | (index >= count)
            if bool(outside.any()):
                raise DslError.at(E.INDEX, f"{OPS[op].call}: row number {int(index[outside][0])} in "
                                  f"'{tensor_name(i)}' is outside [0, {count})", e.span)
            return element_scatter_ref(op, rows, sl.start, index, src.to(rows.dtype)).to(_dt(t.dtype))
        case ir.Op(op="index_add" | "index_copy" | "index_put" | "index_put_acc" as op, args=(a, i, v, n, al), type=t):
            rows, first = _eval(a, env, views, scalars, sl), sl.start
            index, src = views[tensor_name(i)].reshape(-1), views[tensor_name(v)]
            count, alpha = int(_eval(n, env, views, scalars, sl)), _eval(al, env, views, scalars, sl)
            low = -count if op.startswith("index_put") else 0
            outside = (index < low) | (index >= count)
            if bool(outside.any()):
                raise DslError.at(E.INDEX, f"{OPS[op].call or op}: row number {int(index[outside][0])} in "
                                  f"'{tensor_name(i)}' is outside [{low}, {count})", e.span)
            return row_scatter_ref(op, rows, first, index, src.reshape(src.shape[0], -1).to(rows.dtype), count,
                                   alpha.to(rows.dtype)).to(_dt(t.dtype))
        case ir.Op(op="scatter" | "scatter_add" as op, args=(a, i, v), type=t):
            rows, idx, src = (_eval(x, env, views, scalars, sl) for x in (a, i, v))
            outside = (idx < 0) | (idx >= rows.shape[-1])
            if bool(outside.any()):
                raise DslError.at(E.INDEX, f"{op}: column index {int(idx[outside][0])} is outside the rows' "
                                  f"[0, {rows.shape[-1]})", e.span)
            return OPS[op].ref(rows, idx, src).to(_dt(t.dtype))
        case ir.Op(op="gather", args=(a, i), type=t):
            rows, idx = _eval(a, env, views, scalars, sl), _eval(i, env, views, scalars, sl)
            if i.type.layout is ir.Layout.ROW:  # the same columns for every row
                idx = idx.reshape(1, -1).expand(rows.shape[0], -1)
            outside = (idx < 0) | (idx >= rows.shape[-1])
            if bool(outside.any()):
                raise DslError.at(E.INDEX, f"gather: column index {int(idx[outside][0])} is outside the rows' "
                                  f"[0, {rows.shape[-1]})", e.span)
            return OPS["gather"].ref(rows, idx).to(_dt(t.dtype))
        case ir.Op(op=op, args=args, type=t):
            if OPS[op].extern:  # its reference lives in the user's file, which this process never executes
                raise DslError.at(E.UNSUPPORTED, f"the interpreter cannot run extern op '{op}' (its PyTorch reference "
                                  "runs only in the task worker)", e.span, "validate with --validate sim")
            vals = [_eval(a, env, views, scalars, sl) for a in args]
            if t.layout is ir.Layout.BOX:  # a per-position value (flat, one per position) along the box's extra axis
                vals = [v.reshape(-1, 1) if a.type.kind is ir.Kind.TILE and a.type.layout is ir.Layout.FLAT else v
                        for a, v in zip(args, vals, strict=True)]
            if op in ("reduce_max", "reduce_min"):
                vals = [_skip_nan(op, vals[0])]
            if op == "select" and t.kind is ir.Kind.TILE and _FLOAT["coverage"] is not None:
                seen = _FLOAT["coverage"].setdefault(e.span, [False, False])
                seen[0] |= bool(vals[0].any())
                seen[1] |= bool((~vals[0]).any())
            nudge = _FLOAT["compare_nudge"]
            if nudge and op in _COMPARISONS and vals[0].dtype.is_floating_point:
                a, b = vals
                margin = nudge * torch.maximum(a.abs(), b.abs())
                if op in ("eq", "ne") and nudge > 0:  # values this close count as equal
                    near = (a - b).abs() <= margin
                    return near if op == "eq" else ~near
                vals = [a + margin, b]  # and the other way: different unless both are 0
            if _FLOAT["sum_nudge"] and OPS[op].rule is Rule.SCAN and vals[0].dtype.is_floating_point:
                out = scan_in_order(OPS[op], vals[0])  # instead of the ref's scan accumulated in double
                out = scan_bound.moved(OPS[op], out, vals[0], _nudge_sign(e, "scan"))  # and as far as any order may be
            else:
                out = OPS[op].ref(*vals)
            if _FLOAT["sum_nudge"] and op in ("reduce_sum", "reduce_mean") and out.dtype.is_floating_point:
                out = _unit_moved(out.to(_dt(t.dtype)), e, OPS[op].ref(*([vals[0].abs()] + list(vals[1:]))).to(_dt(t.dtype)))
            if _FLOAT["math_nudge"] and op in APPROXIMATE_OPS and out.dtype.is_floating_point:
                out = _nudged(out, e, t.dtype)
            return out if t.dtype.value == "bool" else out.to(_dt(t.dtype))
    raise TypeError(e)


_COMPARISONS = ("lt", "le", "gt", "ge", "eq", "ne")


def _nudged(out: torch.Tensor, e: ir.Op, dtype) -> torch.Tensor:
    """`out` moved away from its value by math_nudge relative, at least math_floor subnormals of `dtype`."""
    signs = _FLOAT["math_signs"]
    n = _FLOAT["math_nudge"] * signs.setdefault(id(e), 1 - 2 * (len(signs) % 2))
    finfo = torch.finfo(dtype.torch)
    step = torch.clamp((n * out).abs(), min=_FLOAT["math_floor"] * finfo.tiny * finfo.eps)
    return out + torch.where(out < 0, -1.0, 1.0).to(out.dtype) * (1.0 if n > 0 else -1.0) * step


def _nudge_sign(key: object, kind: str = "sum") -> int:
    """sum_nudge's direction for the sum (`kind` "sum") or scan ("scan") `key`; with sum_alternate alternating
    between those of its kind in the order first met (scans apart, so a scan between two sums leaves the sums'
    signs as they were)."""
    sign = _FLOAT["sum_nudge"]
    if _FLOAT["sum_alternate"]:
        signs = _FLOAT["math_signs"]
        if (kind, id(key)) not in signs:
            signs[(kind, id(key))] = 1 - 2 * (sum(isinstance(k, tuple) and k[0] == kind for k in signs) % 2)
        sign *= signs[(kind, id(key))]
    return sign


def _unit_moved(out: torch.Tensor, key: object, magnitude: torch.Tensor | None = None) -> torch.Tensor:
    """sum_nudge: `out` one unit (of its own dtype) up or down; `key` names the sum for sum_alternate's sign.

    With `magnitude` (the same sum over the absolute values: no partial sum, in any order, is larger), the unit
    is that of `magnitude`: a device adding in another order rounds its partial sums, and where the values cancel,
    one unit of a partial is many units of the result (fuzz seed 3307, r2431: 256 values of +-1000 summing to
    ~1,500, four units of the sum apart, one unit of their absolute sum)."""
    sign = _nudge_sign(key)
    toward = torch.full_like(out, float("inf") if sign > 0 else float("-inf"))
    if magnitude is None:
        return torch.nextafter(out, toward)
    big = torch.maximum(magnitude.to(out.dtype).abs(), out.abs())
    unit = torch.nextafter(big, torch.full_like(big, float("inf"))) - big
    return torch.where(torch.isfinite(unit), out + (1.0 if sign > 0 else -1.0) * unit, torch.nextafter(out, toward))


def _skip_nan(op: str, x: torch.Tensor) -> torch.Tensor:
    """With nan_skip, NaN entries of a max (min) reduction's input become -inf (+inf): they are skipped."""
    if not _FLOAT["nan_skip"] or op not in ("reduce_max", "reduce_min") or not x.dtype.is_floating_point:
        return x
    return torch.nan_to_num(x, nan=float("-inf") if op == "reduce_max" else float("inf"), posinf=float("inf"),
                            neginf=float("-inf"))


def _cast(x: torch.Tensor, dtype) -> torch.Tensor:
    """`cast(x, dtype)`: float to integer truncates toward zero and saturates, NaN gives 0 (the Cast
    instruction's behaviour; torch leaves NaN and out-of-range values platform-defined)."""
    if x.dtype.is_floating_point and not dtype.is_float and dtype.value != "bool":
        info = torch.iinfo(dtype.torch)
        x = x.double()
        if _FLOAT["cast_nudge"]:
            x = x + _FLOAT["cast_nudge"] * x.abs().clamp(min=1.0)
        x = torch.nan_to_num(x, nan=0.0).trunc().clamp(info.min, info.max)
    elif _FLOAT["round_casts"] and x.dtype.is_floating_point and dtype in (ir.DType.F16, ir.DType.BF16):
        x = x.to(dtype.torch)
    elif _FLOAT["cast_bound"] and x.dtype.is_floating_point and dtype in (ir.DType.F16, ir.DType.BF16):
        return cb.cast_rounding(x, dtype.torch)
    return x.to(_dt(dtype))


def _run_conv(loop: ir.ConvLoop, views, symbols, param: ir.TensorParam) -> None:
    """torch's convolution on the f16/bf16 operands widened to f32 (the cube multiplies them exactly and
    accumulates in f32) plus the f32 bias, then relu and the cast to the output dtype."""
    c = loop.conv
    f32 = _dt(ir.DType.F32)
    bias = views[c.bias].to(f32) if c.bias else None
    x, w = views[c.x], views[c.w]
    groups = symbols[c.groups] if isinstance(c.groups, str) else c.groups
    op = f"conv_transpose{c.rank}d" if c.transposed else f"conv{c.rank}d"
    out = views[loop.out]
    if out.dim() != len(param.shape):  # viewed as rows for a later split loop (a workspace tensor): its own shape
        out = out.view([symbols[d] if isinstance(d, str) else d for d in param.shape])
    if c.transposed:
        if groups < 1 or x.shape[1] % groups or out.shape[1] != w.shape[1] * groups:
            raise DslError.at(E.BINDING, f"groups={groups}: {c.name} = {op}(...) needs {x.shape[1]} input channels "
                              f"divisible by groups and {out.shape[1]} output channels = {w.shape[1]} (the weight's "
                              "dim 1) x groups", c.span)
        fn = {1: torch.nn.functional.conv_transpose1d, 2: torch.nn.functional.conv_transpose2d,
              3: torch.nn.functional.conv_transpose3d}[c.rank]
        want = tuple((i - 1) * s - 2 * p + d * (k - 1) + op_ + 1 for i, k, s, p, d, op_ in
                     zip(x.shape[2:], w.shape[2:], c.stride, c.padding, c.dilation, c.output_padding, strict=True))
        if tuple(out.shape[2:]) != want or min(want) < 1:
            raise DslError.at(E.BINDING, f"'{loop.out}' has shape {list(out.shape)} but {c.name} = {op}(...) has "
                              f"spatial size {list(want)}", loop.span,
                              "output size = (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + "
                              "output_padding + 1")
        acc = fn(x.to(f32), w.to(f32), bias, stride=c.stride, padding=c.padding, output_padding=c.output_padding,
                 groups=groups, dilation=c.dilation)
    else:
        if groups < 1 or x.shape[1] != w.shape[1] * groups or w.shape[0] % groups:
            raise DslError.at(E.BINDING, f"groups={groups}: {c.name} = {op}(...) needs {x.shape[1]} input channels = "
                              f"{w.shape[1]} (the weight's dim 1) x groups and {w.shape[0]} output channels divisible "
                              "by groups", c.span)
        fn = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d, 3: torch.nn.functional.conv3d}[c.rank]
        acc = fn(x.to(f32), w.to(f32), bias, stride=c.stride, padding=c.padding, dilation=c.dilation, groups=groups)
    if loop.relu:
        acc = torch.relu(acc)
    if tuple(acc.shape) != tuple(out.shape):
        raise DslError.at(E.BINDING, f"'{loop.out}' has shape {list(out.shape)} but {c.name} = {op}(...) "
                          f"has shape {list(acc.shape)}", loop.span,
                          "output size = (in + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1")
    out.copy_(acc.to(out.dtype))


def _run_cube(loop: ir.CubeLoop, kernel: ir.Kernel, views, scalars, symbols) -> None:
    """C = A @ B (+ bias) accumulated in f32 per batch, then the epilogue over all rows at once."""
    mm = loop.matmul
    sizes = [symbols[d] for d in loop.batch]
    params = {p.name: p for p in kernel.tensors}
    batches = 1
    for s in sizes:
        batches *= s
    # the tensors the epilogue reads or stores (a stage of a chain launch sees its sibling stages' tensors too,
    # whose lead dims need not line up with this stage's batch)
    used = sorted(launches.tensor_names(loop.epilogue.body, set(params), set(), False))
    for bi in range(batches):
        idx, rest = [], bi  # bi row-major over the batch dims
        for s in reversed(sizes):
            idx.insert(0, rest % s)
            rest //= s

        def pick(name: str, idx: list[int] = idx) -> torch.Tensor:
            """The operand's matrix for this batch index: its dims before the matrix line up with the batch dims
            from the right (own index, 0 for a dim of 1, index // group for a grouped dim)."""
            t = views[name]
            per_row = name in params and tuple(params[name].shape) == (*loop.batch, loop.m)  # one value per row
            lead = (t.shape[:-1] if per_row else t.shape[:-2]) if name in params else ()
            for j, n in enumerate(lead):
                i, full = idx[len(idx) - len(lead) + j], sizes[len(sizes) - len(lead) + j]
                t = t[0 if n == 1 else i // (full // n)]
            return t

        a = pick(mm.a).to(_dt(ir.DType.F32))
        b = pick(mm.b).to(_dt(ir.DType.F32))
        acc = (a.T if mm.transpose_a else a) @ (b.T if mm.transpose_b else b)
        if mm.bias:
            acc = acc + views[mm.bias].to(_dt(ir.DType.F32))
        local = {n: pick(n) for n in used}
        local[mm.name] = acc
        _run_tile(loop.epilogue.body, local, scalars, slice(0, acc.shape[0]))
