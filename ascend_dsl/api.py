"""`@kernel`: the Python-embedded entry. The decorated function's source goes to the DSL grammar."""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable

from . import ir
from .diagnostics import DslError, register_source
from .dtypes import BY_NAME, DType
from .parser import KernelSource, parse_text


class KernelCallError(DslError, TypeError):
    """A `@kernel` function called with arguments that do not match its declaration (count, dtype,
    shape, device), or with no kernel runner installed. Rendered like every located diagnostic."""


#: Runs a kernel called on tensors: runner(kernel_function, args, scalars) -> outputs. Set by the package
#: that compiles and runs kernels (npu_harness.torch_op), found through the "ascend_dsl.runners" entry
#: point group (dependency injection: the language layer imports nothing above it).
_RUNNER: Callable | None = None
RUNNER_GROUP = "ascend_dsl.runners"


def register_runner(runner: Callable) -> None:
    global _RUNNER
    _RUNNER = runner


def _runner() -> Callable:
    if _RUNNER is None:
        from importlib.metadata import entry_points

        for ep in entry_points(group=RUNNER_GROUP):
            ep.load()  # the module registers itself when it is imported
    if _RUNNER is None:
        raise KernelCallError.at("CALL-RUNNER", "no kernel runner is installed, so a @kernel function cannot run on "
                                 "tensors", None, "install ascend-dsl (pip install -e .), whose npu_harness registers "
                                 "one, or call kernel.interpret(...) for the DSL interpreter")
    return _RUNNER


class KernelFunction:
    """A parsed `@kernel` function. `.ir(T=f16)` gives the typed IR.

    Calling it on torch tensors compiles the kernel (cached) and runs the emitted AscendC: on CPU tensors
    in the emulator, on NPU tensors through CANN + torch_npu; `kernel(x)` takes the input tensors and
    returns the outputs (docs/npu.md). `.interpret(...)` runs the DSL interpreter instead.
    """

    def __init__(self, source: KernelSource):
        self.source = source
        self.__name__ = source.name

    def ir(self, **dtypes: DType | str) -> ir.Kernel:
        return self.source.instantiate(dtypes)

    def __call__(self, *tensors, **scalars):
        return _runner()(self, tensors, scalars)

    def interpret(self, *tensors, **scalars):
        """The DSL interpreter on every tensor parameter (inputs and outputs, in declaration order);
        outputs are written in place and returned by name."""
        k = self.ir()
        names = [p.name for p in k.tensors]
        if len(tensors) != len(names):
            raise KernelCallError.at("CALL", f"{k.name}.interpret takes {len(names)} tensors ({', '.join(names)}), "
                                     f"got {len(tensors)}", k.span)
        from . import interpreter  # torch is imported only when a kernel is run

        return interpreter.run(k, dict(zip(names, tensors, strict=True)), scalars)

    def __repr__(self) -> str:
        return f"<ascend_dsl kernel {self.source.name}>"

    # Identity semantics, spelled out: torch.compile treats a kernel function passed to the runner as a
    # constant (torch.utils._pytree.register_constant needs an explicit __eq__).
    def __eq__(self, other) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)


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
