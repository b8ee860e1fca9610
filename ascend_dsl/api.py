"""`@kernel`: the Python-embedded entry. The decorated function's source goes to the DSL grammar."""

from __future__ import annotations

import inspect
import textwrap

from . import ir
from .diagnostics import DslError, register_source
from .dtypes import BY_NAME, DType
from .parser import KernelSource, parse_text


class KernelFunction:
    """A parsed `@kernel` function. `.ir(T=f16)` gives the typed IR; calling it runs the interpreter."""

    def __init__(self, source: KernelSource):
        self.source = source
        self.__name__ = source.name

    def ir(self, **dtypes: DType | str) -> ir.Kernel:
        return self.source.instantiate(dtypes)

    def __call__(self, *tensors, **scalars):
        k = self.ir()
        names = [p.name for p in k.tensors]
        if len(tensors) != len(names):
            raise TypeError(f"{k.name} takes {len(names)} tensors ({', '.join(names)}), got {len(tensors)}")
        from . import interpreter  # torch is imported only when a kernel is run

        return interpreter.run(k, dict(zip(names, tensors, strict=True)), scalars)

    def __repr__(self) -> str:
        return f"<ascend_dsl kernel {self.source.name}>"


def kernel(fn=None, **type_vars):
    """Decorator: `@kernel` or `@kernel(T=[f32, f16])`. Parses at definition time."""

    def wrap(f) -> KernelFunction:
        file = inspect.getsourcefile(f) or "<unknown>"
        lines, first = inspect.getsourcelines(f)
        snippet = "".join(lines)
        dedented = textwrap.dedent(snippet)
        col = len(snippet.splitlines()[0]) - len(dedented.splitlines()[0])
        try:
            register_source(file, open(file).read())
        except OSError:
            pass
        kernels = parse_text(dedented, file, first - 1, col)
        return KernelFunction(kernels[0])

    return wrap(fn) if fn is not None else wrap


class _TensorAnnotation:
    """`Tensor[f32, "N"]` is only read by the parser; at run time it is an inert marker."""

    def __class_getitem__(cls, item):
        return cls


Tensor = _TensorAnnotation
globals().update(BY_NAME)
AIV, AIC, auto = "AIV", "AIC", "auto"


def _outside_kernel(name: str):
    def f(*args, **kwargs):
        raise DslError.at("KERNEL-STRUCTURE", f"{name}() can only be used inside an @kernel function", None,
                          "did you forget @kernel?")

    f.__name__ = name
    return f


split, tile, load, store, select, cast = (_outside_kernel(n) for n in ("split", "tile", "load", "store", "select",
                                                                       "cast"))
