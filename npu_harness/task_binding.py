"""Which task value each kernel parameter takes: pure rules over names and dtype names, shared by the task
worker (which must know them to round the right tensors to the kernel's dtypes before it runs the reference)
and the parent (which binds and reports errors at the kernel's source spans). No torch, no DSL imports.

Tensor inputs: the first kernel inputs take forward()'s tensor arguments in order; every further input
takes the Model's parameter or buffer whose state_dict name with '.' replaced by '_' is the input's name
(`fc.weight` -> `fc_weight`, a top-level `self.bias = nn.Parameter(...)` -> `bias`). Every floating-point
parameter and buffer must be taken (a kernel that ignored one would pass against a default-initialised
LayerNorm weight of ones and be wrong for any trained model); integer buffers (BatchNorm's
`num_batches_tracked`) may be left out.

Scalars, first match wins: a number argument of forward() with that name; a Model attribute; a submodule
attribute by its dotted name with '.' -> '_' (`avg_pool.stride` -> `avg_pool_stride`); a submodule
attribute's leaf name (`stride`) when every submodule attribute of that leaf name has the same value; an
attribute of the case (a `get_input_groups()` task's JSON line, `"type": "attr"`); else the kernel's
default, which the caller reports.

Dtypes: the k-th forward() tensor has a dtype; a kernel variant matches when its k-th input has that dtype
(bool data into a u8 input counts as a match: 0/1 exactly). Without an explicit --dtype the first variant
with the most matches is used. Float data into another float dtype is converted (and said so); int data
into another int dtype is converted when every value fits; int or bool data into a float input, and float
data into an int input, are errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FLOATS = ("float32", "float16", "bfloat16", "float64")
INTS = ("int64", "int32", "int16", "int8", "uint8")
#: value ranges of the integer dtypes (int data converts to another int dtype only when every value fits)
INT_RANGE = {"int64": (-(1 << 63), (1 << 63) - 1), "int32": (-(1 << 31), (1 << 31) - 1), "int16": (-32768, 32767),
             "int8": (-128, 127), "uint8": (0, 255)}


def param_key(state_dict_name: str) -> str:
    """The kernel input name of a Model parameter or buffer: its state_dict name with '.' -> '_'."""
    return state_dict_name.replace(".", "_")


@dataclass(frozen=True)
class TensorMatch:
    """Where each kernel input comes from: ("arg", k) for forward()'s k-th tensor, ("param", key) for a
    parameter or buffer; and what does not fit."""

    sources: tuple[tuple[str, int | str], ...]
    missing: tuple[str, ...] = ()  # kernel inputs that are neither a forward() tensor nor a parameter's name
    extra: tuple[str, ...] = ()  # floating-point parameters/buffers no kernel input takes
    untaken_args: int = 0  # forward() tensors beyond the kernel's inputs

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.untaken_args)


def match_inputs(kernel_inputs: list[str], n_args: int, params: dict[str, bool]) -> TensorMatch:
    """kernel_inputs: the kernel's input names in order; n_args: forward()'s tensor argument count;
    params: kernel-style parameter/buffer name -> whether it is floating point (required)."""
    if len(kernel_inputs) < n_args:
        return TensorMatch(tuple(("arg", k) for k in range(len(kernel_inputs))), untaken_args=n_args - len(kernel_inputs),
                           extra=tuple(k for k, required in params.items() if required))
    sources: list[tuple[str, int | str]] = [("arg", k) for k in range(n_args)]
    missing = []
    for name in kernel_inputs[n_args:]:
        if name in params:
            sources.append(("param", name))
        else:
            sources.append(("missing", name))
            missing.append(name)
    taken = set(kernel_inputs[n_args:])
    extra = tuple(k for k, required in params.items() if required and k not in taken)
    return TensorMatch(tuple(sources), tuple(missing), extra)


# ---- dtypes ---------------------------------------------------------------------------------------------------

def _matches(data: str, kernel: str) -> bool:
    return data == kernel or (data == "bool" and kernel == "uint8")


def pick_variant(arg_dtypes: list[str], variants: list[list[str]]) -> int:
    """The variant whose first len(arg_dtypes) input dtypes match the most forward() tensors (the first one
    on a tie, so the kernel's default wins when nothing matches)."""
    def score(v: list[str]) -> int:
        return sum(_matches(d, k) for d, k in zip(arg_dtypes, v, strict=False))

    scores = [score(v) for v in variants]
    return scores.index(max(scores)) if scores else 0


@dataclass(frozen=True)
class Conversion:
    """How one task tensor becomes a kernel input: kind 'same' (no change), 'exact' (bool -> u8), 'convert'
    (rounded or narrowed: reported), or 'error' (no meaningful conversion)."""

    name: str
    data: str
    kernel: str
    kind: str

    def describe(self) -> str:
        return f"{self.name} {self.data} -> {self.kernel}"


def conversion(name: str, data: str, kernel: str) -> Conversion:
    if data == kernel:
        return Conversion(name, data, kernel, "same")
    if data == "bool" and kernel in INTS:
        return Conversion(name, data, kernel, "exact")
    if data in FLOATS and kernel in FLOATS:
        return Conversion(name, data, kernel, "convert")
    if data in INTS and kernel in INTS:
        return Conversion(name, data, kernel, "convert")  # the caller checks that every value fits
    return Conversion(name, data, kernel, "error")


def conversion_error(c: Conversion) -> str:
    what = "bool" if c.data == "bool" else "integer" if c.data in INTS else "floating-point"
    into = "float" if c.kernel in FLOATS else "integer"
    return (f"'{c.name}' holds {c.data} data but the kernel declares it {c.kernel}: {what} data is not converted "
            f"to a{'n' if into == 'integer' else ''} {into} input")


# ---- scalars --------------------------------------------------------------------------------------------------

def as_number(value):
    """A number for a scalar parameter: the value itself, or the element of a tuple whose elements are all
    equal (nn.AvgPool1d keeps kernel_size=4 as (4,), nn.MaxPool2d(2) may keep (2, 2)); else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                           for v in value) and len(set(value)) == 1:
        return value[0]
    return None


@dataclass(frozen=True)
class ScalarSource:
    value: object  # a number, or (for an error) the unusable value
    origin: str  # where it came from, e.g. "forward() argument s", "Model.eps", "avg_pool.stride"


@dataclass
class ScalarLookup:
    """Everything a scalar parameter can bind to, for one case."""

    args: dict = field(default_factory=dict)  # forward() number arguments by parameter name
    attrs: dict = field(default_factory=dict)  # the Model's own attributes
    sub_attrs: dict = field(default_factory=dict)  # submodule attributes by dotted name ("avg_pool.stride")
    case_attrs: dict = field(default_factory=dict)  # the case's attributes (get_input_groups JSON)

    def find(self, name: str) -> ScalarSource | list[ScalarSource] | None:
        """The value `name` binds to; a list of candidates when the leaf name is ambiguous; None if nothing."""
        if name in self.args:
            return ScalarSource(self.args[name], f"forward() argument {name}")
        if name in self.attrs:
            return ScalarSource(self.attrs[name], f"Model.{name}")
        flat = {param_key(k): k for k in self.sub_attrs}
        if name in flat:
            return ScalarSource(self.sub_attrs[flat[name]], flat[name])
        leaves = [ScalarSource(v, k) for k, v in self.sub_attrs.items() if k.rsplit(".", 1)[-1] == name]
        if leaves:
            values = {repr(as_number(s.value) if as_number(s.value) is not None else s.value) for s in leaves}
            return leaves[0] if len(values) == 1 else leaves
        if name in self.case_attrs:
            return ScalarSource(self.case_attrs[name], f"case attribute {name}")
        return None
