"""Reference interpreter: runs a surface kernel on torch tensors (the DSL's semantic oracle).

Tensors are flat views; a split gives each of `num_cores` cores a contiguous share and a tile loop
walks that share in tiles of `tile` elements, evaluating expressions in the kernel's dtypes.
"""

from __future__ import annotations

import torch

from . import ir
from .diagnostics import DslError
from .diagnostics import ErrorCode as E
from .ops import OPS, POOLS


def run(kernel: ir.Kernel, tensors: dict[str, torch.Tensor], scalars: dict[str, float] | None = None,
        num_cores: int = 4, tile: int = 4096) -> dict[str, torch.Tensor]:
    """Run `kernel`; `tensors` maps every tensor parameter (inputs and outputs) to a torch tensor.

    Outputs are written in place and also returned by name. Rank-1 parameters are viewed flat; row
    loops walk blocks of whole rows (`tile` elements' worth of rows, at least one)."""
    scalars = dict(scalars or {})
    for p in kernel.scalars:
        if p.name not in scalars:
            if p.default is None:
                raise DslError.at(E.BINDING, f"no value for scalar parameter '{p.name}'", p.span)
            scalars[p.name] = p.default
    views = {}
    for p in kernel.tensors:
        t = tensors[p.name]
        if t.dtype != p.dtype.torch:
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
            scalars[stmt.name] = float(_eval(stmt.value, {}, views, scalars, slice(0)))
        elif isinstance(stmt, ir.ScalarLoad):
            scalars[stmt.name] = float(views[stmt.tensor].reshape(-1)[0])
        elif isinstance(stmt, ir.ScalarStore):
            views[stmt.tensor].reshape(-1)[0] = _eval(stmt.value, {}, views, scalars, slice(0))
        elif isinstance(stmt, ir.SlotAccDecl):
            _slot_rows(stmt, kernel, views, scalars, symbols)
        elif isinstance(stmt, ir.CubeLoop):
            _run_cube(stmt, kernel, views, scalars, symbols)
        else:
            _run_split(kernel, stmt, tensors, views, scalars, symbols, num_cores, tile)
    return {p.name: tensors[p.name] for p in kernel.outputs}


_COMBINE = {ir.Combine.ADD: lambda a, b: a + b, ir.Combine.MAX: max, ir.Combine.MIN: min}


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
            core_scalars[a] = torch.zeros(views[("slots", a)][1], dtype=torch.float32)
        lo, hi = core * share, min(total, (core + 1) * share)
        for tl in loop.body:
            assert isinstance(tl, ir.TileLoop)
            step = tile if tl.kind is not ir.LoopKind.ROWS else max(1, tile // max(_product(tl.shape.row, symbols), 1))
            tviews = views
            if tl.kind is ir.LoopKind.PLANES:  # [N, C, *spatial] tensors as (N * C) planes; a tile is a block of planes
                lead = len(loop.extent)
                tviews = {**views, **{p.name: tensors[p.name].reshape(total, *tensors[p.name].shape[lead:])
                                      for p in kernel.tensors if len(p.shape) > lead}}
                plane = max([tviews[p.name][0].numel() for p in kernel.tensors
                             if len(p.shape) > lead and len(tviews[p.name])] + [1])
                step = max(1, tile // max(plane, 1))
            if tl.kind is ir.LoopKind.BOX:  # box loops: each position's values along the extra axis as one row
                tviews, step = _box_views(kernel, loop, tl, tensors, views, symbols, total, tile)
            for start in range(lo, hi, step):
                _run_tile(tl.body, tviews, core_scalars, slice(start, min(hi, start + step)))
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
            for p in partials.pop(s.name):
                value = _COMBINE[s.combine](value, p)
            scalars[s.name] = value


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


def _symbols(kernel: ir.Kernel, views) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in kernel.tensors:
        dims = list(views[p.name].shape)
        for d, n in zip(p.shape, dims, strict=False):
            if isinstance(d, str):
                out.setdefault(d, n)
    return out


def _run_tile(body, views, scalars, sl: slice) -> None:
    env: dict[str, object] = {}
    for s in body:
        if isinstance(s, ir.Assign):
            env[s.name] = _eval(s.value, env, views, scalars, sl)
        elif isinstance(s, ir.Store):
            value = _eval(s.value, env, views, scalars, sl)
            target = views[s.tensor]
            if s.index.rows:
                target[sl, :] = value.expand(target[sl, :].shape)
            elif s.value.type.layout is ir.Layout.POOLED:
                target[sl] = value
            else:
                target[sl] = value.reshape(-1) if value.dim() > 1 else value
        elif isinstance(s, ir.SlotAccumulate):  # each row's value into its slot
            value = _eval(s.value, env, views, scalars, sl).float().reshape(-1)
            scalars[s.name].index_add_(0, views[("slots", s.name)][0][sl], value)
        elif isinstance(s, ir.Accumulate):
            value = _eval(s.value, env, views, scalars, sl).float()
            part = {"reduce_sum": torch.sum, "reduce_max": torch.max, "reduce_min": torch.min}[s.reduce](value)
            scalars[s.name] = _COMBINE[s.combine](scalars[s.name], float(part))


def _eval(e: ir.Expr, env, views, scalars, sl):
    match e:
        case ir.Const(value=v, type=t):
            return torch.tensor(v, dtype=t.dtype.torch)
        case ir.Ref(name=n, type=t):
            if n in env:
                return env[n]
            return torch.tensor(scalars[n], dtype=t.dtype.torch)
        case ir.Load(tensor=name, type=t) as e:
            view = views[name]
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
            return OPS[op].ref(_eval(a, env, views, scalars, sl), *window).to(t.dtype.torch)
        case ir.Op(op=op, args=(a,), type=t) if a.type.layout is ir.Layout.BOX and t.layout is ir.Layout.FLAT:
            return OPS[op].ref(_eval(a, env, views, scalars, sl)).reshape(-1).to(t.dtype.torch)  # a box reduction
        case ir.Op(op="cast", args=(a,), type=t):
            return _eval(a, env, views, scalars, sl).to(t.dtype.torch)
        case ir.Op(op=op, args=args, type=t):
            if OPS[op].extern:  # its reference lives in the user's file, which this process never executes
                raise DslError.at(E.UNSUPPORTED, f"the interpreter cannot run extern op '{op}' (its PyTorch reference "
                                  "runs only in the task worker)", e.span, "validate with --validate sim")
            vals = [_eval(a, env, views, scalars, sl) for a in args]
            out = OPS[op].ref(*vals)
            return out if t.dtype.value == "bool" else out.to(t.dtype.torch)
    raise TypeError(e)


def _run_cube(loop: ir.CubeLoop, kernel: ir.Kernel, views, scalars, symbols) -> None:
    """C = A @ B (+ bias) accumulated in f32 per batch, then the epilogue over all rows at once."""
    mm = loop.matmul
    batches = symbols[loop.batch] if loop.batch else 1
    for bi in range(batches):
        def pick(name: str, bi: int = bi) -> torch.Tensor:
            t = views[name]
            return t[bi] if loop.batch and t.dim() == 3 else t

        a = pick(mm.a).to(torch.float32)
        b = pick(mm.b).to(torch.float32)
        acc = (a.T if mm.transpose_a else a) @ (b.T if mm.transpose_b else b)
        if mm.bias:
            acc = acc + views[mm.bias].to(torch.float32)
        local = {p.name: pick(p.name) for p in kernel.tensors}
        local[mm.name] = acc
        _run_tile(loop.epilogue.body, local, scalars, slice(0, acc.shape[0]))
