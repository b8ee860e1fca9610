"""First-order bounds on how far the roundings of `cast(x, f16)` / `cast(x, bf16)` can move every later value,
whatever the order of the work after the cast (the interpreter's `cast_bound` mode; the fuzz oracle's slack).

A widened (float64) interpreter run in which every float value is a `Bounded` tensor: its exact value and `bound`,
a non-negative float64 tensor of the same shape. A cast to f16/bf16 adds u * |x| (u the dtype's unit roundoff:
2^-11, 2^-8; an infinity or NaN rounds to itself, exactly); every torch function the interpreter applies
propagates the bounds of its operands (running error analysis, first order):

- add/sub: ea + eb; mul: |a| eb + |b| ea; div: ea / |b| + |a| eb / b^2; matmul and convolutions: |A| @ eB + eA @ |B|;
  sum/mean/cumsum: the same reduction of the bounds (the triangle inequality: any order of the adds);
- max/min: the bound of the operand that is the result whatever the errors, else the larger bound (reductions:
  the largest); select: the chosen branch's bound (where a comparison flips, the value is discontinuous: the
  oracle's nudged runs cover it);
- monotone unary math (exp, log, sqrt, rsqrt, reciprocal, tanh, sigmoid, erf): max |f(x +- e) - f(x)| (NaN where
  x - e leaves the domain: the oracle treats a NaN slack as not judged); pow: the same at the corners of
  [a +- ea] x [b +- eb];
- views, copies, indexing, gathers and stores (`__setitem__`, `copy_`, `scatter_`): the same function on the
  bounds, so a bound stored to a workspace is read back with it (a workspace's bound aliases it as its data does);
- casts to an integer or bool, comparisons: no bound (discontinuous).

A term whose bound is 0 adds nothing, even beside an infinite factor. Scalars (accumulators, scalar assignments)
are 0-d Bounded tensors in such a run, so they carry their bound too. A function without a rule drops the bound of
its result (the oracle's slack is then the pre-session-35 one for that value: never larger than the truth claims)
and is recorded in `DROPPED`. Second-order terms (ea * eb) are left out: the bound is a first-order one, as u * |x| is small.
"""

from __future__ import annotations

import torch

#: Unit roundoff of the narrow float dtypes a cast rounds to.
UNIT = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}
#: torch functions met on a Bounded operand without a propagation rule (their results carry no bound).
DROPPED: set[str] = set()


class Bounded(torch.Tensor):
    """A float64 tensor with `bound`: how far (first order) the casts before it may move each element."""

    bound: torch.Tensor

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        with torch._C.DisableTorchFunctionSubclass():
            out = func(*args, **kwargs)
            return _propagate(func, args, kwargs, out)


def bounded(data: torch.Tensor, bound: torch.Tensor | None = None) -> torch.Tensor:
    """`data` (a float tensor, sharing its storage) as Bounded; bound zero unless given."""
    with torch._C.DisableTorchFunctionSubclass():
        return _wrap(data.as_subclass(torch.Tensor), torch.zeros_like(data, dtype=torch.float64) if bound is None
                     else bound)


def bound_of(x) -> torch.Tensor | float:
    """The bound of an operand: its own, or 0 (a plain tensor, a Python number)."""
    if isinstance(x, Bounded):
        return x.bound
    if isinstance(x, torch.Tensor):
        return torch.zeros_like(x, dtype=torch.float64) if x.is_floating_point() else x
    return 0.0


def cast_rounding(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The value of `cast(x, dtype)` for a narrow float `dtype` in a bound run: x exact, its bound grown by u|x|."""
    with torch._C.DisableTorchFunctionSubclass():
        plain = x.as_subclass(torch.Tensor).to(torch.float64)  # a new tensor object: x keeps its own bound
        return _wrap(plain, bound_of(x) + _rounding(plain, dtype))


def _rounding(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """u * |x| for a finite x (an infinity or NaN rounds to itself: no bound from the cast)."""
    return torch.where(torch.isfinite(x), UNIT[dtype] * x.abs(), torch.zeros_like(x))


def _times(m, e):
    """m * e, 0 where e is 0 (a term with no bound adds nothing, even beside an infinite value)."""
    return torch.where(torch.as_tensor(e) == 0, 0.0, m * e)


def _value_bound(x):
    """The bound a stored or copied value brings: its own, else 0 (a plain float or integer tensor, a number)."""
    return x.bound if isinstance(x, Bounded) else 0.0


def _plain(x):
    return x.as_subclass(torch.Tensor) if isinstance(x, Bounded) else x


def _wrap(out, bound):
    if not isinstance(out, torch.Tensor) or not out.is_floating_point():
        return out
    if not isinstance(bound, torch.Tensor):
        bound = torch.full_like(out, float(bound), dtype=torch.float64)
    t = out.as_subclass(Bounded) if not isinstance(out, Bounded) else out
    bound = bound.to(torch.float64)
    # the same shape: kept as it is (a view of a workspace's bound stays one); else materialised, so an in-place
    # store into the result never writes through a broadcast
    t.bound = bound if bound.shape == out.shape else torch.broadcast_to(bound, out.shape).contiguous()
    return t


def _mag(x):
    """|x| as float64 (a tensor or a Python number)."""
    if isinstance(x, torch.Tensor):
        return _plain(x).to(torch.float64).abs()
    return abs(float(x))


def _substituted(args, kwargs):
    """args / kwargs with every float tensor replaced by its bound (index tensors and numbers kept)."""
    def sub(a):
        if isinstance(a, torch.Tensor) and a.is_floating_point():
            return bound_of(a)
        if isinstance(a, (list, tuple)):
            return type(a)(sub(x) for x in a)
        return a
    return sub(args), {k: (torch.float64 if k == "dtype" else sub(v)) for k, v in kwargs.items()}


def _float_target(args, kwargs) -> bool:
    """`.to(...)` / `.type(...)` to a float dtype (the bound stays) rather than to an integer or bool."""
    for a in list(args[1:]) + list(kwargs.values()):
        if isinstance(a, torch.dtype):
            return a.is_floating_point
        if isinstance(a, torch.Tensor):
            return a.is_floating_point()
    return True  # .to(device) and the like


_STRUCTURAL = {"reshape", "view", "__getitem__", "expand", "expand_as", "clone", "contiguous", "flatten", "squeeze",
               "unsqueeze", "transpose", "permute", "movedim", "t", "narrow", "select", "index_select", "gather",
               "take_along_dim", "repeat", "repeat_interleave", "cat", "stack", "broadcast_to", "reshape_as", "view_as",
               "detach", "flip", "roll", "tile", "double", "float", "unfold", "split", "chunk", "unbind",
               "index_copy", "scatter", "pad"}
_LINEAR_POSITIVE = {"sum", "mean", "cumsum", "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d",
                    "max_pool3d", "amax", "amin", "index_add", "scatter_add", "nansum"}
_INPLACE = {"__setitem__", "copy_", "scatter_", "index_copy_", "index_put_", "fill_", "zero_", "masked_fill_",
            "index_add_"}
_MONOTONE = {"exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
             "reciprocal": torch.reciprocal, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "erf": torch.erf,
             "exp2": torch.exp2, "log2": torch.log2, "expm1": torch.expm1, "log1p": torch.log1p}
_CONV = {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "linear"}


def _name(func) -> str:
    """The function's name, dunders stripped (`__radd__` -> radd; a property getter: the property's name, `T` -> t)."""
    name = getattr(func, "__name__", "")
    if name == "__get__":
        return {"T": "t", "mT": "t", "H": "t", "mH": "t"}.get(getattr(getattr(func, "__self__", None), "__name__", ""), "")
    if name.startswith("__") and name not in ("__getitem__", "__setitem__"):
        return name.strip("_")
    return name


def _propagate(func, args, kwargs, out):
    """The bound of `func(*args, **kwargs)` = `out`, attached to it."""
    if not any(isinstance(a, Bounded) for a in _flat(args) + _flat(list(kwargs.values()))):
        return out
    name = _name(func)
    if name in _INPLACE:
        target = args[0]
        if not isinstance(target, Bounded):
            DROPPED.add(name)
            return out
        sargs, skw = _substituted(args[1:], kwargs)
        if name == "__setitem__":
            value = args[2]
            target.bound[args[1]] = _value_bound(value)
        elif name == "copy_":
            target.bound.copy_(torch.broadcast_to(torch.as_tensor(_value_bound(args[1]), dtype=torch.float64),
                                                  target.shape))
        elif name in ("fill_", "zero_"):
            target.bound.zero_()
        elif name == "masked_fill_":
            target.bound.masked_fill_(args[1], 0.0)
        else:
            getattr(target.bound, name)(*sargs, **skw)
        return out
    if not isinstance(out, torch.Tensor) or not out.is_floating_point():
        if isinstance(out, (tuple, list)) and name in ("split", "chunk", "unbind"):
            sargs, skw = _substituted(args, kwargs)
            return type(out)(_wrap(o, b) for o, b in zip(out, func(*sargs, **skw), strict=True))
        return out  # comparisons, shapes, Python numbers, integer results: nothing to carry
    rule = _RULES.get(name)
    if rule is not None:
        return _wrap(out, rule(args, kwargs, out))
    if name in ("to", "type", "type_as", "half", "bfloat16"):
        if not _float_target(args, kwargs) and name in ("to", "type", "type_as"):
            return out
        narrow = out.dtype if out.dtype in UNIT else None
        return _wrap(out, bound_of(args[0]) + (_rounding(_plain(out).double(), narrow) if narrow else 0.0))
    if name in _STRUCTURAL or name in _LINEAR_POSITIVE:
        sargs, skw = _substituted(args, kwargs)
        return _wrap(out, func(*sargs, **skw))
    if name in _MONOTONE:
        return _wrap(out, _monotone(_MONOTONE[name], args[0], out))
    if name in _CONV:
        return _wrap(out, _conv(func, args, kwargs))
    DROPPED.add(name)
    return out


def _flat(xs) -> list:
    out = []
    for x in xs:
        out.extend(_flat(x) if isinstance(x, (list, tuple)) else [x])
    return out


def _monotone(f, x, out):
    """max |f(x +- e) - f(x)| for f monotone on each side of its domain; NaN where x - e leaves it."""
    xv, e = _plain(x).to(torch.float64), bound_of(x)
    y = _plain(out).to(torch.float64)
    up, down = (f(xv + e) - y).abs(), (f(xv - e) - y).abs()
    b = torch.maximum(up, down)
    if f in (torch.reciprocal, torch.rsqrt):  # the pole at 0 inside [x - e, x + e]: not bounded
        b = torch.where((xv.abs() <= e) & (e > 0), float("nan"), b)
    return torch.where(e > 0, b, torch.zeros_like(b))


def _add(args, kwargs, out):
    alpha = abs(float(kwargs.get("alpha", 1.0)))
    return bound_of(args[0]) + alpha * bound_of(args[1])


def _mul(args, kwargs, out):
    a, b = args[0], args[1]
    return _times(_mag(a), bound_of(b)) + _times(_mag(b), bound_of(a))


def _div(args, kwargs, out, flip: bool = False):
    a, b = (args[1], args[0]) if flip else (args[0], args[1])
    mb = _mag(b)
    return _times(1 / mb, bound_of(a)) + _times(_mag(a) / (mb * mb), bound_of(b))


def _pow(args, kwargs, out, flip: bool = False):
    """max |f(a', b') - f(a, b)| over the corners of [a +- ea] x [b +- eb] (and a' = 0 where that interval holds it):
    a^b is monotone in a on each side of 0 and in b (the extremes lie at the corners)."""
    a, b = (args[1], args[0]) if flip else (args[0], args[1])
    av = _plain(a).to(torch.float64) if isinstance(a, torch.Tensor) else torch.tensor(float(a), dtype=torch.float64)
    bv = _plain(b).to(torch.float64) if isinstance(b, torch.Tensor) else torch.tensor(float(b), dtype=torch.float64)
    ea, eb = torch.as_tensor(bound_of(a), dtype=torch.float64), torch.as_tensor(bound_of(b), dtype=torch.float64)
    y = _plain(out).to(torch.float64)
    worst = torch.zeros_like(y)
    for da in (-1, 1):
        for db in (-1, 1):
            worst = torch.maximum(worst, (torch.pow(av + da * ea, bv + db * eb) - y).abs())
    for db in (-1, 1):
        at_zero = (torch.pow(torch.zeros_like(av), bv + db * eb) - y).abs()
        worst = torch.where((av.abs() <= ea) & (ea > 0), torch.maximum(worst, at_zero), worst)
    return torch.where((ea > 0) | (eb > 0), worst, torch.zeros_like(worst))


def _neg(args, kwargs, out):
    return bound_of(args[0])


def _pick2(args, kwargs, out, low: bool = False):
    """Element-wise max / min: the bound of the operand that is the result whatever the errors, else the larger
    of the two (a reduction, given one tensor: the largest bound over what it reduces)."""
    if len(args) == 1 or not isinstance(args[1], torch.Tensor):
        sargs, skw = _substituted(args, kwargs)
        return torch.amax(sargs[0], *sargs[1:], **skw) if len(args) > 1 or skw else sargs[0].max()
    a, b = args[0], args[1]
    av, bv = _plain(a).to(torch.float64), _plain(b).to(torch.float64)
    ea, eb = torch.as_tensor(bound_of(a)), torch.as_tensor(bound_of(b))
    first = av - ea > bv + eb  # a is the larger whatever the errors
    second = bv - eb > av + ea
    if low:  # min: b is the result where a is clearly the larger
        first, second = second, first
    return torch.where(first, ea, torch.where(second, eb, torch.maximum(ea, eb)))


def _low(args, kwargs, out):
    return _pick2(args, kwargs, out, low=True)


def _where(args, kwargs, out):
    cond, a, b = args[0], args[1], args[2]
    return torch.where(cond, torch.as_tensor(bound_of(a)), torch.as_tensor(bound_of(b)))


def _matmul(args, kwargs, out):
    a, b = args[0], args[1]
    ma, mb = _mag(a), _mag(b)
    return ma @ bound_of(b) + bound_of(a) @ mb


def _conv(func, args, kwargs):
    x, w = args[0], args[1]
    rest, kw = list(args[2:]), dict(kwargs)
    bias = rest.pop(0) if rest else kw.pop("bias", None)
    eb = bound_of(bias) if isinstance(bias, torch.Tensor) else None
    return func(bound_of(x), _mag(w), eb, *rest, **kw) + func(_mag(x), bound_of(w), None, *rest, **kw)


def _relu(args, kwargs, out):
    return bound_of(args[0])


_RULES = {"add": _add, "radd": _add, "iadd": _add, "sub": _add, "rsub": _add, "isub": _add,
          "mul": _mul, "rmul": _mul, "imul": _mul,
          "truediv": _div, "div": _div, "itruediv": _div, "rtruediv": lambda a, k, o: _div(a, k, o, flip=True),
          "rdiv": lambda a, k, o: _div(a, k, o, flip=True), "divide": _div,
          "pow": _pow, "rpow": lambda a, k, o: _pow(a, k, o, flip=True), "float_power": _pow,
          "neg": _neg, "negative": _neg, "abs": _neg, "absolute": _neg, "pos": _neg, "relu": _relu,
          "maximum": _pick2, "fmax": _pick2, "max": _pick2, "minimum": _low, "fmin": _low, "min": _low,
          "where": _where, "matmul": _matmul, "rmatmul": lambda a, k, o: _matmul((a[1], a[0]), k, o), "mm": _matmul,
          "bmm": _matmul, "clamp": _neg, "clip": _neg, "clamp_min": _neg, "clamp_max": _neg, "nan_to_num": _neg,
          # discontinuous (rounding to an integer, a sign): no first-order bound; the nudged runs see the jumps
          "zeros_like": lambda a, k, o: 0.0, "ones_like": lambda a, k, o: 0.0, "full_like": lambda a, k, o: 0.0,
          "trunc": lambda a, k, o: 0.0, "floor": lambda a, k, o: 0.0, "ceil": lambda a, k, o: 0.0,
          "round": lambda a, k, o: 0.0, "sign": lambda a, k, o: 0.0}
