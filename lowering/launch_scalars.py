"""Launch scalars: kernel-scope scalars the host tiling code computes (ScalarAssign.launch, set by
lowering/passes/hoist_scalars.py) and hands to the kernel as fields of the tiling data.

The host has <cmath>, so every scalar op of the DSL is one C++ expression here, with torch's
semantics for the DSL's f32 (float) and integer (int64_t) scalars: NaN propagates through max/min/relu
as in torch.maximum, `**` is std::pow. Casts of a scalar to f16/bf16 are not computed on the host
(UNSUPPORTED: cast the tile instead).
"""

from __future__ import annotations

from ascend_dsl import ir, printer
from ascend_dsl.diagnostics import DslError
from ascend_dsl.dtypes import DType

_BINARY = {"add": "+", "sub": "-", "mul": "*", "div": "/", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==",
           "ne": "!="}
_UNARY_F = {"exp": "std::exp({})", "log": "std::log({})", "sqrt": "std::sqrt({})", "rsqrt": "(1.0f / std::sqrt({}))",
            "reciprocal": "(1.0f / {})", "tanh": "std::tanh({})", "erf": "std::erf({})",
            "sigmoid": "(1.0f / (1.0f + std::exp(-{})))"}
#: NaN-propagating max/min/relu (torch.maximum, torch.relu), for floats and integers alike (x != x is false for ints).
_MAX = "[](auto a, auto b) {{ return a != a ? a : b != b ? b : a > b ? a : b; }}({}, {})"
_MIN = "[](auto a, auto b) {{ return a != a ? a : b != b ? b : a < b ? a : b; }}({}, {})"


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
            case ir.Op(op="cast", args=(a,)):
                if x.type.dtype in (DType.F16, DType.BF16):
                    raise DslError.at("UNSUPPORTED", f"a scalar cast to {x.type.dtype} at kernel scope cannot be "
                                      "lowered", x.span, "cast the tile instead")
                if a.type.dtype.is_float and not x.type.dtype.is_float:  # truncate, saturate, NaN -> 0 (as Cast)
                    lo, hi = -(2 ** 31), 2 ** 31 - 1  # integer scalars are i32
                    return (f"[](double v) {{ return v != v ? int64_t(0) : v <= {lo}.0 ? int64_t({lo}LL) : "
                            f"v >= {hi}.0 ? int64_t({hi}LL) : static_cast<int64_t>(v); }}({go(a)})")
                return f"static_cast<{ct}>({go(a)})"
            case ir.Op(op="neg", args=(a,)):
                return f"(-{go(a)})"
            case ir.Op(op=op, args=(a, b)) if op in _BINARY:
                return f"({go(a)} {_BINARY[op]} {go(b)})"
            case ir.Op(op="select", args=(m, a, b)):
                return f"({go(m)} ? {go(a)} : {go(b)})"
            case ir.Op(op="max", args=(a, b)):
                return _MAX.format(go(a), go(b))
            case ir.Op(op="min", args=(a, b)):
                return _MIN.format(go(a), go(b))
            case ir.Op(op="relu", args=(a,)):
                return _MAX.format(go(a), "0.0f" if ct == "float" else "static_cast<int64_t>(0)")
            case ir.Op(op="abs", args=(a,)):
                return f"std::fabs({go(a)})" if ct == "float" else f"std::llabs({go(a)})"
            case ir.Op(op="pow", args=(a, b)):
                return f"std::pow({go(a)}, {go(b)})"
            case ir.Op(op=op, args=(a,)) if op in _UNARY_F and ct == "float":
                return _UNARY_F[op].format(go(a))
        raise DslError.at("UNSUPPORTED", f"scalar expression '{getattr(x, 'op', x)}' cannot be computed at launch",
                          x.span)
    return go(e)


def view(kernel: ir.Kernel, source_name: str) -> list[dict]:
    """Per launch scalar: its tiling field, the host code computing it (a local `launch_<name>`, then stored
    into the tiling data) and the kernel member it arrives in (`<name>_`)."""
    names = {p.name: p.name for p in kernel.scalars} | {s: s for s in kernel.symbols}
    out = []
    for s in launch_assigns(kernel):
        local = f"launch_{s.name}"
        out.append({"name": s.name, "member": f"{s.name}_", "local": local, "expr": host_expr(s.value, names),
                    "comment": f"{source_name}:{s.span.line}: {s.name} = {printer.expr(s.value)}"})
        names[s.name] = local
    return out


def init_lines(kernel: ir.Kernel) -> list[str]:
    """The kernel's Init: each launch scalar from the tiling data into its member."""
    return [f"{s.name}_ = tiling.{s.name};  // computed by the host at launch" for s in launch_assigns(kernel)]
