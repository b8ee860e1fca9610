"""`@kernel` functions as PyTorch ops: `kernel(x, ...)` on torch tensors compiles the kernel (cached) and
runs the emitted AscendC, registered through `torch.library` so it also works inside `torch.compile`d
code (forward only).

- CPU tensors: the emitted project's kernel library built for the emulator (emulator_build), driven
  through its ACL runtime in this process (device.emulated);
- NPU tensors (torch_npu): the same project built with CANN, launched on the current NPU stream with
  outputs allocated on the device (device.npu); torch_npu is imported only then.

Calling convention (docs/npu.md): `kernel(*inputs, **scalars)` returns the outputs (one tensor, or a
tuple in declaration order); `kernel(*all_tensors, **scalars)`, every tensor parameter in declaration
order, writes the outputs in place and returns them. Output shapes: an output declared with the same
dimensions as an input (e.g. `y: Tensor[T, "N"]` beside `x: Tensor[T, "N"]`) takes that input's shape,
any other output the shape of its declared dimensions ("B" -> [B], "M, N" -> [M, N]). The dtype
variant of `@kernel(T=[...])` is picked from the input dtypes. The target is $ASCEND_DSL_TARGET (default
ascend910b1; on an NPU, the device's SoC). `kernel.interpret(...)` runs the DSL interpreter instead.

Importing this module registers it as the runner of `ascend_dsl` (entry point "ascend_dsl.runners").
"""

from __future__ import annotations

import hashlib
import os
import threading
import weakref
from dataclasses import dataclass, field

import torch

from ascend_dsl import KernelCallError, ir, printer, register_runner
from ascend_dsl.api import KernelFunction
from lowering import DEFAULT_TARGET, EmittedProject, PassContext, lower

from .call_shapes import bind_call, output_shapes

TARGET_ENV = "ASCEND_DSL_TARGET"
NPU_DEVICE_TYPES = ("npu", "privateuseone")


@dataclass
class KernelOp:
    """One dtype variant of one kernel for one target: its torch op and, once run, its builds."""

    kernel: ir.Kernel
    target: str
    qualname: str
    op: object = None
    lowered: tuple[EmittedProject, PassContext] | None = None
    emulated: object = None  # device.emulated.EmulatedDevice
    npu: object = None  # device.npu.NpuKernel
    #: several launches (device/launches.py): {(form, device type): (Plan, its backend's builds)}
    launches: dict = field(default_factory=dict)
    #: a row-fallback kernel: the form its host rule picks (row_fallback.pick), by (symbols, scalars)
    forms: dict = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def project(self) -> tuple[EmittedProject, PassContext]:
        if self.lowered is None:
            self.lowered = lower(self.kernel, self.target)
        return self.lowered


#: KernelFunction -> {dtype variant key: (typed kernel, {target: KernelOp})}: a warm call is dict lookups only
_VARIANTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_OPS: dict[str, KernelOp] = {}  # qualname -> KernelOp (a re-defined identical kernel reuses its op)
_REGISTER_LOCK = threading.Lock()


def _emulator_target() -> str:
    return os.environ.get(TARGET_ENV, DEFAULT_TARGET)


# ----------------------------------------------------------------------------- argument checks


def _call_error(code: str, message: str, span=None, hint: str | None = None) -> KernelCallError:
    return KernelCallError.at(code, message, span, hint)


def _variant(kfn: KernelFunction, tensors: tuple) -> tuple[ir.Kernel, dict, dict]:
    """The dtype variant whose tensor dtypes match the arguments: (kernel, variant, its ops by target)."""
    per_fn = _VARIANTS.setdefault(kfn, {})
    tried = []
    for variant in kfn.source.dtype_variants:
        key = tuple(sorted((k, v.value) for k, v in variant.items()))
        if key not in per_fn:
            per_fn[key] = (kfn.source.instantiate(variant), {})
        k, ops = per_fn[key]
        params = k.bound_tensors if len(tensors) == len(k.bound_tensors) and len(k.bound_tensors) != len(k.inputs) else k.inputs
        if len(tensors) != len(params):
            names = ", ".join(p.name for p in k.inputs)
            alln = ", ".join(p.name for p in k.bound_tensors)
            raise _call_error("CALL", f"{k.name} takes {len(k.inputs)} input tensor(s) ({names}), or all "
                              f"{len(k.bound_tensors)} tensors ({alln}) to write the outputs in place; got {len(tensors)}",
                              k.span)
        if all(t.dtype == p.dtype.torch for t, p in zip(tensors, params, strict=True)):
            return k, variant, ops
        tried.append(", ".join(f"{p.name}: {p.dtype}" for p in params))
    got = ", ".join(str(t.dtype).removeprefix("torch.") for t in tensors)
    k = per_fn[next(iter(per_fn))][0]
    raise _call_error("CALL-DTYPE", f"{k.name}: no dtype variant takes tensors of dtypes ({got})", k.span,
                      "declared: " + "; ".join(f"({t})" for t in tried))


# ----------------------------------------------------------------------------- the op


def _qualname(kernel: ir.Kernel, variant: dict, target: str) -> str:
    digest = hashlib.sha256(f"{target}\n{printer.kernel(kernel)}".encode()).hexdigest()[:10]
    tag = "".join(f"_{v.value}" for v in variant.values())
    return f"ascend_dsl::{kernel.name}{tag}_{digest}"


def _op_for(kernel: ir.Kernel, variant: dict, target: str, ops: dict) -> KernelOp:
    kop = ops.get(target)
    if kop is None:
        qualname = _qualname(kernel, variant, target)
        with _REGISTER_LOCK:
            kop = _OPS.get(qualname)
            if kop is None:
                kop = KernelOp(kernel, target, qualname)
                kop.op = _register(kop)
                _OPS[qualname] = kop
        ops[target] = kop
    return kop


def _register(kop: KernelOp):
    k = kop.kernel
    n_in, n_out = len(k.inputs), len(k.outputs)
    args = [f"Tensor {p.name}" for p in k.inputs] + [f"float {p.name}" for p in k.scalars]
    result = "Tensor" if n_out == 1 else "(" + ", ".join("Tensor" for _ in range(n_out)) + ")"
    schema = f"({', '.join(args)}) -> {result}"

    def fake(*a):
        ins = a[:n_in]
        outs = output_shapes(k, [tuple(t.shape) for t in ins])
        res = [ins[0].new_empty(s, dtype=p.dtype.torch) for s, p in zip(outs, k.outputs, strict=True)]
        return res[0] if n_out == 1 else tuple(res)

    def impl(*a):
        ins = [t.contiguous() for t in a[:n_in]]
        scalars = [float(x) for x in a[n_in:]]
        in_shapes = [tuple(t.shape) for t in ins]
        outs = output_shapes(k, in_shapes)
        symbols, _ = bind_call(k, in_shapes, outs, {p.name: v for p, v in zip(k.scalars, scalars, strict=True)})
        sym = [int(symbols[s]) for s in k.symbols]
        res = [torch.empty(s, dtype=p.dtype.torch, device=ins[0].device) for s, p in zip(outs, k.outputs, strict=True)]
        on_npu = ins[0].device.type in NPU_DEVICE_TYPES
        form = _launches_form(kop, sym, scalars)
        if form is not None:  # several launches in order (device/launches.py)
            tensors = dict(zip([p.name for p in k.inputs + k.outputs], ins + res, strict=True))
            _run_launches(kop, form, on_npu, tensors, dict(zip(k.symbols, sym, strict=True)),
                          {p.name: v for p, v in zip(k.scalars, scalars, strict=True)})
        elif on_npu:
            from .device import npu

            npu.run(kop, ins, res, sym, scalars)
        else:
            _run_emulated(kop, ins, res, sym, scalars)
        return res[0] if n_out == 1 else tuple(res)

    op = torch.library.custom_op(kop.qualname, impl, mutates_args=(), schema=schema)
    op.register_fake(fake)
    return op


def _run_emulated(kop: KernelOp, ins: list, outs: list, symbols: list[int], scalars: list[float]) -> None:
    from .device.emulated import EmulatedDevice
    from .device.emulator_build import build_library

    with kop.lock:
        if kop.emulated is None:
            project, ctx = kop.project()
            kop.emulated = EmulatedDevice(build_library(project, ctx), project.manifest["entry"])
    shapes = ", ".join(f"{s}={v}" for s, v in zip(kop.kernel.symbols, symbols, strict=True))
    kop.emulated.run(ins, outs, symbols, scalars, f"{kop.kernel.name} ({shapes})")


def _launches_form(kop: KernelOp, symbols: list[int], scalars: list[float]) -> str | None:
    """None when the op runs its one kernel; "launches" for a LAUNCHES kernel; "fallback" when the row-fallback
    kernel's host rule (row_fallback.pick, cached by shapes) picks its launches at these shapes."""
    project, ctx = kop.project()
    if project.launches:
        return "launches"
    if project.fallback is None:
        return None
    key = (tuple(symbols), tuple(scalars))
    name = kop.forms.get(key)
    if name is None:
        from .row_fallback import pick

        k = kop.kernel
        name = pick(k, ctx.lowered, project, ctx, dict(zip(k.symbols, symbols, strict=True)),
                    {p.name: v for p, v in zip(k.scalars, scalars, strict=True)}).name
        kop.forms[key] = name
    return None if name == "fused" else name


def _run_launches(kop: KernelOp, form: str, on_npu: bool, tensors: dict, symbols: dict, scalars: dict) -> None:
    from .device import launches

    project, ctx = kop.project()
    key = (form, "npu" if on_npu else "cpu")
    with kop.lock:
        if key not in kop.launches:
            lowered, sub = (ctx.lowered, project) if form == "launches" else (ctx.fallback.lowered, project.fallback)
            pl = launches.plan(lowered, sub)
            if on_npu:
                from .device import env

                cann, _ = env.require_npu()
                kop.launches[key] = (pl, launches.npu_kernels(pl, ctx, cann))
            else:
                kop.launches[key] = (pl, launches.EmulatedLaunches(pl, ctx))
    pl, built = kop.launches[key]
    if on_npu:
        from .device import env, npu

        device = next(iter(tensors.values())).device
        backend = launches.NpuLaunches(built, device, npu.current_stream(env.require_torch_npu(), device))
    else:
        backend = built
    shapes = ", ".join(f"{s}={v}" for s, v in symbols.items())
    launches.run(pl, backend, tensors, symbols, scalars, f"{kop.kernel.name} ({shapes})")


# ----------------------------------------------------------------------------- the runner


def _run(kfn: KernelFunction, args: tuple, scalars: dict):
    """ascend_dsl's runner: `kfn(*args, **scalars)` on torch tensors."""
    bad = [i for i, t in enumerate(args) if not isinstance(t, torch.Tensor)]
    if bad:
        raise _call_error("CALL", f"{kfn.__name__}: argument {bad[0] + 1} is a {type(args[bad[0]]).__name__}, not a "
                          "torch.Tensor", None, "pass scalar parameters by name, e.g. kernel(x, alpha=0.5)")
    if not args:
        raise _call_error("CALL", f"{kfn.__name__}: no tensors given", None)
    kernel, variant, ops = _variant(kfn, args)
    unknown = sorted(set(scalars) - {p.name for p in kernel.scalars})
    if unknown:
        raise _call_error("CALL", f"{kernel.name} has no scalar parameter {', '.join(unknown)}", kernel.span,
                          f"scalars: {', '.join(p.name for p in kernel.scalars) or '(none)'}")
    devices = {t.device for t in args}
    if len(devices) > 1:
        raise _call_error("CALL-DEVICE", f"{kernel.name}: tensors on several devices ({', '.join(map(str, devices))})",
                          kernel.span)
    device = next(iter(devices))
    in_place = len(args) == len(kernel.bound_tensors) and len(kernel.bound_tensors) != len(kernel.inputs)
    by_name = dict(zip([p.name for p in (kernel.bound_tensors if in_place else kernel.inputs)], args, strict=True))
    inputs = [by_name[p.name] for p in kernel.inputs]
    in_shapes = [tuple(t.shape) for t in inputs]
    given = [by_name[p.name] for p in kernel.outputs] if in_place else None
    outs = output_shapes(kernel, in_shapes)
    _, values = bind_call(kernel, in_shapes, [tuple(t.shape) for t in given] if given else outs, scalars)
    if device.type in NPU_DEVICE_TYPES:
        target = _npu_target(device)
    elif device.type in ("cpu", "meta"):  # meta: shapes only, from the fake implementation
        target = _emulator_target()
    else:
        raise _call_error("CALL-DEVICE", f"{kernel.name}: tensors on {device} cannot run a kernel (CPU tensors run in "
                          "the emulator, NPU tensors on the NPU)", kernel.span)
    kop = _op_for(kernel, variant, target, ops)
    result = kop.op(*inputs, *[float(values[p.name]) for p in kernel.scalars])
    if given is None:
        return result
    results = [result] if len(given) == 1 else list(result)
    for out, res in zip(given, results, strict=True):
        out.copy_(res.reshape(out.shape))
    return given[0] if len(given) == 1 else tuple(given)


def _npu_target(device) -> str:
    from .device import npu

    return npu.device_target(device)


# Inside torch.compile the argument checks and the op lookup run as plain Python (on fake tensors), not
# traced by dynamo; only the custom op call lands in the graph.
torch.utils._pytree.register_constant(KernelFunction)
run = torch._dynamo.nonstrict_trace(_run)
register_runner(run)
