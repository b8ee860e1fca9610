"""Child process of `--validate npu`: the task's reference and the kernel on one device, compared and timed.

    python -m npu_harness.device.npu_worker REQUEST.json RESULT.json

REQUEST: {"dsl": path, "kernel": name, "dtypes": {var: dtype}, "target": name, "task": path, "seed": int,
"set": {...}, "cap": int|null, "device": "npu"|"cpu", "correct_trials": int, "warmup": int, "trials": int,
"fast_p": [float, ...]}.

On "npu" the reference is the task's Model run eagerly on the NPU and the kernel runs through the
torch op (CANN build, torch_npu stream); both are timed with NPU events (benchmark.time_events). "cpu"
is the same harness with the emulator as the device (the torch op's CPU path, host timer): it is how
this machine tests the harness, and its times are emulator times, not NPU performance. As in
MultiKernelBench, each correctness trial draws fresh inputs (seed + trial) and a freshly seeded Model (a
get_input_groups() task: each case once). Cases are bound and rounded to the kernel's dtypes as
`--validate sim` does (npu_harness.task_worker.prepare_case): the Model's parameters and buffers reach the
kernel as the inputs named after them, scalars bind to forward() numbers and Model/submodule attributes.
"""

from __future__ import annotations

import copy
import json
import os
import sys
import tempfile
from functools import partial
from pathlib import Path


def _is_tensor(x) -> bool:
    import torch

    return isinstance(x, torch.Tensor)


def _shape_of(x):
    from npu_harness.arrays import torch_dtype_name
    from npu_harness.task_result import TensorShape

    return TensorShape(tuple(x.shape), torch_dtype_name(x)) if _is_tensor(x) else x


def _kernel_call(kernel, record: dict, kernel_inputs: list, kernel_params: dict, params: dict, refs: list):
    """(the kernel's input tensors in declaration order, its scalar values, its shape symbols) for one case,
    bound by the task binding's rules (npu_harness.binding) on the tensors' shapes."""
    from npu_harness.binding import bind
    from npu_harness.task import TaskRun
    from npu_harness.task_binding import match_inputs

    rounded = {k: kernel_params.get(k, t) for k, t in params.items()}
    run = TaskRun([_shape_of(x) for x in kernel_inputs], [_shape_of(r) for r in refs], record["attrs"],
                  params={k: _shape_of(t) for k, t in rounded.items()}, arg_names=record["arg_names"],
                  sub_attrs=record["sub_attrs"], case_attrs=record["case_attrs"], args=record["args"])
    b = bind(kernel, run)
    args = [x for x in kernel_inputs if _is_tensor(x)]
    match = match_inputs([p.name for p in kernel.inputs], len(args), {k: t.is_floating_point() for k, t in params.items()})
    tensors = [args[src] if kind == "arg" else rounded[src].detach() for kind, src in match.sources]
    return tensors, b.scalars, b.symbols


def _cases(task, seed: int, trials: int):
    """(label, Model, forward() arguments, case attributes) to compare: a get_inputs() task `trials` times with
    fresh inputs and a freshly seeded Model (seed + trial), a get_input_groups() task once per case."""
    import torch

    if task.groups:
        torch.manual_seed(seed)
        model0 = task.model()
        cases = task.cases()
        for i, (inputs, attrs) in enumerate(zip(cases, task.case_attrs(len(cases)), strict=True)):
            yield f"case {i}", copy.deepcopy(model0), inputs, attrs
        return
    for trial in range(trials):
        torch.manual_seed(seed + trial)
        model = task.model()
        yield f"trial {trial}", model, task.cases()[0], {}


def run(req: dict) -> dict:
    import torch

    from ascend_dsl import load_file
    from ascend_dsl.api import KernelFunction
    from npu_harness import torch_op
    from npu_harness.compare import Comparison, compare, cube_tolerance
    from npu_harness.task_worker import Task, WorkerError, model_params, prepare_case, scale
    from npu_harness.validate import kernel_spec
    from npu_harness.validate_cases import KernelVariants

    from . import benchmark, env

    os.environ[torch_op.TARGET_ENV] = req["target"]
    source = next(s for s in load_file(req["dsl"]) if s.name == req["kernel"])
    kernels = KernelVariants(source, req.get("dtypes") or {}, req["target"], Path(req["dsl"]).name).kernels
    kfn = KernelFunction(source)  # picks the variant by the dtypes the case was rounded to
    if req["device"] == "npu":
        torch_npu = env.require_torch_npu()
        device = torch.device("npu", 0)
        timer = partial(benchmark.time_events, event_cls=torch_npu.npu.Event, synchronize=torch_npu.npu.synchronize)
        device_name = str(torch_npu.npu.get_device_name(0))
    else:
        device = torch.device("cpu")
        timer = benchmark.time_host
        device_name = "cpu (emulator stand-in)"
    path, seed = Path(req["task"]).resolve(), int(req.get("seed", 0))
    with tempfile.TemporaryDirectory(prefix="ascend-npu-scaled-") as tmp:
        try:
            scaling, scaled_dir = scale(path, req.get("set"), seed, int(req["cap"]), Path(tmp)) if req.get("cap") \
                else (None, None)
            sizes = {int(k): v for k, v in scaling["sizes"].items()} if scaling else None
            task = Task(path, req.get("set"), sizes, scaled_dir)
        except WorkerError as e:
            return {"ok": False, "error": f"error[{e.code}]: {e.message}"}
        comparisons: list[Comparison] = []
        shapes: dict = {}
        for label, model, inputs, attrs in _cases(task, seed, int(req.get("correct_trials", 5))):
            inputs = list(inputs)
            record, kin, kparams, params = prepare_case(label, model, inputs, kernel_spec(kernels), attrs)
            if record["error"]:
                return {"ok": False, "error": f"{label}: error[{record['error']['code']}]: {record['error']['message']}"}
            kernel = kernels[record["variant"] or 0]
            model = model.to(device).eval()
            rin = [x.to(device) if _is_tensor(x) else x for x in inputs]
            kin = [x.to(device) if _is_tensor(x) else x for x in kin]
            kparams = {k: t.to(device) for k, t in kparams.items()}
            params = model_params(model)  # on the device now
            with torch.no_grad():
                ref = model(*rin)
                refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
                tensors, scalars, symbols = _kernel_call(kernel, record, kin, kparams, params, refs)
                got = kfn(*tensors, **scalars)
            gots = list(got) if isinstance(got, tuple) else [got]
            shapes = {k: int(v) for k, v in symbols.items()}
            for p, g, r in zip(kernel.outputs, gots, refs, strict=True):
                g, r = g.detach().cpu().reshape(-1), r.detach().cpu().reshape(-1)
                if g.numel() != r.numel():
                    comparisons.append(Comparison(p.name, False, float("inf"), r.numel(), r.numel(), 0.0))
                else:
                    comparisons.append(compare(p.name, g, r, p.dtype.value, tol=cube_tolerance(kernel, p.dtype.value)))
            if not all(c.ok for c in comparisons):
                break
    ok = bool(comparisons) and all(c.ok for c in comparisons)
    out = {"ok": ok, "device": device_name, "shapes": shapes, "comparisons": [c.__dict__ for c in comparisons]}
    if not ok:
        return out
    warmup, trials = int(req.get("warmup", benchmark.WARMUP)), int(req.get("trials", benchmark.TRIALS))
    with torch.no_grad():  # the last case compared, as MultiKernelBench times fresh inputs after its checks
        k = timer(lambda: kfn(*tensors, **scalars), warmup=warmup, trials=trials)
        r = timer(lambda: model(*rin), warmup=warmup, trials=trials)
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
