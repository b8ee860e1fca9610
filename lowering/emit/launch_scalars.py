"""Launch scalars: kernel-scope scalars the host tiling code computes (ScalarAssign.launch, set by
lowering/passes/hoist_scalars.py, which also checked that the host can compute each) and hands to the
kernel as fields of the tiling data.

The host has <cmath>, so every scalar op of the DSL is one C++ expression here (`OpInfo.host_c` in
ascend_dsl/ops.py), with torch's semantics for the DSL's f32 (float) and integer (int64_t) scalars: NaN
propagates through max/min/relu as in torch.maximum, `**` is std::pow.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_dsl import ir, printer
from ascend_dsl.diagnostics import DslError
from ascend_dsl.diagnostics import ErrorCode as E
from ascend_dsl.dtypes import DType
from ascend_dsl.ops import OPS


@dataclass(frozen=True)
class LaunchScalarView:
    """A launch scalar: its tiling field `name`, the host code computing it into a local `local` (then
    stored into the tiling data), and the kernel member it arrives in."""

    name: str
    member: str
    local: str
    expr: str
    comment: str


def launch_assigns(kernel: ir.Kernel) -> list[ir.ScalarAssign]:
    return [s for s in kernel.body if isinstance(s, ir.ScalarAssign) and s.launch]


def _ctype(dtype: DType) -> str:
    return "float" if dtype.is_float else "bool" if dtype is DType.BOOL else "int64_t"


def host_expr(e: ir.Expr, names: dict[str, str]) -> str:
    """C++ for `e` in the host tiling function; `names` maps scalar names to their C++ spelling there."""
    def go(x: ir.Expr) -> str:
        ct = _ctype(x.type.dtype)
        match x:
            case ir.Const(value=v):
                if ct == "float":
                    text = repr(float(v))
                    return {"inf": "INFINITY", "-inf": "(-INFINITY)", "nan": "NAN"}.get(text, f"{text}f")
                return f"static_cast<{ct}>({int(v)})"
            case ir.Ref(name=n):
                return f"static_cast<{ct}>({names[n]})"
            case ir.Op(op="cast") if x.type.dtype in (DType.F16, DType.BF16):
                pass  # no host form (hoist_scalars keeps such casts on the device)
            case ir.Op(op="cast", args=(a,)) if a.type.dtype.is_float and not x.type.dtype.is_float:
                lo, hi = -(2 ** 31), 2 ** 31 - 1  # truncate, saturate, NaN -> 0 (as Cast); integer scalars are i32
                return (f"[](double v) {{ return v != v ? int64_t(0) : v <= {lo}.0 ? int64_t({lo}LL) : "
                        f"v >= {hi}.0 ? int64_t({hi}LL) : static_cast<int64_t>(v); }}({go(a)})")
            case ir.Op(op="abs", args=(a,)) if ct != "float":
                return f"std::llabs({go(a)})"
            case ir.Op(op=op, args=args) if OPS[op].host_c is not None:
                zero = "0.0f" if ct == "float" else "static_cast<int64_t>(0)"
                return OPS[op].host_c.format(*map(go, args), T=ct, zero=zero)
        raise DslError.at(E.INTERNAL, f"scalar expression '{getattr(x, 'op', x)}' has no host form "
                          "(hoist_scalars checks every launch scalar)", x.span)
    return go(e)


def views(kernel: ir.Kernel, source_name: str) -> tuple[LaunchScalarView, ...]:
    """Every launch scalar's view; a scalar reads the earlier ones through their host locals."""
    names = {p.name: p.name for p in kernel.scalars} | {s: s for s in kernel.symbols}
    out = []
    for s in launch_assigns(kernel):
        local = f"launch_{s.name}"
        out.append(LaunchScalarView(s.name, f"{s.name}_", local, host_expr(s.value, names),
                                    f"{source_name}:{s.span.line}: {s.name} = {printer.expr(s.value)}"))
        names[s.name] = local
    return tuple(out)


def init_lines(kernel: ir.Kernel) -> list[str]:
    """The kernel's Init: each launch scalar from the tiling data into its member."""
    return [f"{s.name}_ = tiling.{s.name};  // computed by the host at launch" for s in launch_assigns(kernel)]
