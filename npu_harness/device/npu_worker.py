"""Child process of `--validate npu`: the task's reference and the kernel on one device, compared and timed.

    python -m npu_harness.device.npu_worker REQUEST.json RESULT.json

REQUEST: {"dsl": path, "kernel": name, "dtypes": {var: dtype}, "target": name, "task": path, "seed": int,
"set": {...}, "cap": int|null, "device": "npu"|"cpu", "correct_trials": int, "warmup": int, "trials": int,
"fast_p": [float, ...]}.

On "npu" the reference is the task's Model run eagerly on the NPU and the kernel runs through the
torch op (CANN build, torch_npu stream); both are timed with NPU events (benchmark.time_events). "cpu"
is the same harness with the emulator as the device (the torch op's CPU path, host timer): it is how
this machine tests the harness, and its times are emulator times, not NPU performance. As in
MultiKernelBench, each correctness trial draws fresh inputs (seed + trial) and a freshly seeded Model.
"""

from __future__ import annotations

import json
import os
import sys
from functools import partial
from pathlib import Path


def _tensors(torch, xs):
    return [x for x in xs if isinstance(x, torch.Tensor)]


def run(req: dict) -> dict:
    import torch

    from ascend_dsl import load_file
    from ascend_dsl.api import KernelFunction
    from npu_harness import torch_op
    from npu_harness.arrays import TORCH_NAME
    from npu_harness.call_shapes import symbols_from
    from npu_harness.compare import Comparison, compare, cube_tolerance
    from npu_harness.task_worker import _attrs, _load_task, _scaled_constants, quantise_inputs

    from . import benchmark, env

    os.environ[torch_op.TARGET_ENV] = req["target"]
    source = next(s for s in load_file(req["dsl"]) if s.name == req["kernel"])
    kernel = source.instantiate(req.get("dtypes") or {})
    kfn = KernelFunction(source)
    if req["device"] == "npu":
        torch_npu = env.require_torch_npu()
        device = torch.device("npu", 0)
        timer = partial(benchmark.time_events, event_cls=torch_npu.npu.Event, synchronize=torch_npu.npu.synchronize)
        device_name = str(torch_npu.npu.get_device_name(0))
    else:
        device = torch.device("cpu")
        timer = benchmark.time_host
        device_name = "cpu (emulator stand-in)"
    ns, get_inputs = _load_task(req["task"], req.get("set"))
    constants = _scaled_constants(get_inputs.__globals__, int(req["cap"]), get_inputs) if req.get("cap") else {}
    dtypes = [TORCH_NAME[p.dtype.value] for p in kernel.inputs]
    comparisons: list[Comparison] = []
    shapes = {}
    for trial in range(int(req.get("correct_trials", 5))):
        torch.manual_seed(int(req.get("seed", 0)) + trial)
        model = ns["Model"](*ns["get_init_inputs"]()).to(device).eval()
        kin, rin = quantise_inputs(list(get_inputs()), dtypes)
        kin = [x.to(device) if isinstance(x, torch.Tensor) else x for x in kin]
        rin = [x.to(device) if isinstance(x, torch.Tensor) else x for x in rin]
        attrs = _attrs(model)
        scalars = {p.name: attrs[p.name] for p in kernel.scalars if p.name in attrs}
        with torch.no_grad():
            ref = model(*rin)
            got = kfn(*_tensors(torch, kin), **scalars)
        refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
        gots = list(got) if isinstance(got, tuple) else [got]
        shapes = {k: int(v) for k, v in symbols_from(kernel.inputs, [t.shape for t in _tensors(torch, kin)]).items()}
        if len(refs) != len(gots):
            return {"ok": False, "error": f"the kernel returns {len(gots)} outputs, forward() {len(refs)}"}
        for p, g, r in zip(kernel.outputs, gots, refs, strict=True):
            g, r = g.detach().cpu().reshape(-1), r.detach().cpu().reshape(-1)
            if g.numel() != r.numel():
                comparisons.append(Comparison(p.name, False, float("inf"), r.numel(), r.numel(), 0.0))
            else:
                comparisons.append(compare(p.name, g, r, p.dtype.value, tol=cube_tolerance(kernel, p.dtype.value)))
        if not all(c.ok for c in comparisons):
            break
    ok = bool(comparisons) and all(c.ok for c in comparisons)
    out = {"ok": ok, "device": device_name, "shapes": shapes, "constants": constants,
           "comparisons": [c.__dict__ for c in comparisons]}
    if not ok:
        return out
    tensors = _tensors(torch, kin)
    with torch.no_grad():
        k = timer(lambda: kfn(*tensors, **scalars), warmup=int(req.get("warmup", benchmark.WARMUP)),
                  trials=int(req.get("trials", benchmark.TRIALS)))
        r = timer(lambda: model(*rin), warmup=int(req.get("warmup", benchmark.WARMUP)),
                  trials=int(req.get("trials", benchmark.TRIALS)))
    speedup = r.mean_ms / k.mean_ms if k.mean_ms > 0 else None
    out.update(kernel_ms=k.to_dict(), reference_ms=r.to_dict(), speedup=speedup,
               fast_p=benchmark.fast_p(ok, speedup, [float(p) for p in req.get("fast_p", [1.0])]))
    return out


def main(argv: list[str]) -> int:
    from ascend_dsl.diagnostics import DslError

    from .env import NpuUnavailable
    from .runtime import KernelRunError

    request, result = argv
    req = json.loads(Path(request).read_text())
    try:
        out = run(req)
    except (DslError, KernelRunError, NpuUnavailable) as e:
        out = {"ok": False, "error": str(e)}
    Path(result).write_text(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
