"""Child process that runs a KernelBench-format task file (never imported into the parent).

    python -m npu_harness.task_worker TASK.py OUT.npz REQUEST.json

REQUEST: {"seed": int, "set": {"NAME": value}, "cap": int|null, "input_dtypes": [str|null, ...]},
or {"shapes_only": true, "set": {...}}: then OUT gets JSON shapes (task_shapes, meta device, no data).
Module-level size constants named in "set" are overridden before get_inputs() runs; with "cap",
every integer size constant is scaled down until the largest input has at most `cap` elements,
staying a multiple of each fixed integer constant that divided it.
Writes inputs, outputs, attrs and constants with npu_harness.arrays.save_result (numpy .npz: the
parent reads it without importing torch).
"""

from __future__ import annotations

import json
import math
import runpy
import sys
from pathlib import Path

from npu_harness.arrays import STORAGE, save_result, torch_dtype_name


def _scaled_constants(ns: dict, cap: int, get_inputs) -> dict:
    used = set(get_inputs.__code__.co_names)  # sizes get_inputs reads, not e.g. a pooling kernel_size / stride
    names = [k for k, v in ns.items() if isinstance(v, int) and not isinstance(v, bool) and not k.startswith("_")
             and v > 1 and k.lower() == k and k in used]
    # A size stays a multiple of every fixed constant that divided it (features of num_groups, say), so
    # the scaled task is still a valid one.
    fixed = [v for k, v in ns.items() if isinstance(v, int) and not isinstance(v, bool) and not k.startswith("_")
             and v > 1 and k not in names]
    step = {k: math.lcm(1, *(d for d in fixed if ns[k] % d == 0)) for k in names}
    for _ in range(64):
        inputs = get_inputs()
        biggest = max((t.numel() for t in inputs if hasattr(t, "numel")), default=0)
        if biggest <= cap:
            break
        shrink = (biggest / cap) ** (1.0 / max(len(names), 1))
        for k in names:
            ns[k] = max(step[k], math.floor(ns[k] / max(shrink, 1.0001)) // step[k] * step[k])
        get_inputs.__globals__.update({k: ns[k] for k in names})
    return {k: ns[k] for k in names}


def quantise_inputs(inputs: list, dtypes: list[str | None]) -> tuple[list, list]:
    """(kernel inputs, reference inputs): the k-th tensor argument is rounded to the kernel's k-th
    input dtype; the reference runs on the rounded values in the task's own precision, so kernel and
    reference see identical inputs. Non-tensor arguments pass through unchanged."""
    import torch

    kernel_inputs, reference_inputs = [], []
    k = 0
    for t in inputs:
        if isinstance(t, torch.Tensor):
            if k < len(dtypes) and dtypes[k]:
                q = t.to(getattr(torch, dtypes[k]))
                kernel_inputs.append(q)
                reference_inputs.append(q.to(t.dtype))
            else:
                kernel_inputs.append(t)
                reference_inputs.append(t)
            k += 1
        else:
            kernel_inputs.append(t)
            reference_inputs.append(t)
    return kernel_inputs, reference_inputs


class TaskFormatError(Exception):
    """The task file lacks what the KernelBench format requires, or a --set names no constant of it."""


def _load_task(task: str | Path, overrides: dict | None):
    """The task file's namespace and its get_inputs, with module-level size constants overridden."""
    ns = runpy.run_path(str(task), run_name="__task__")
    for key in ("Model", "get_inputs", "get_init_inputs"):
        if key not in ns:
            raise TaskFormatError(f"task file defines no '{key}'")
    get_inputs = ns["get_inputs"]
    for k, v in (overrides or {}).items():
        if k not in get_inputs.__globals__:
            raise TaskFormatError(f"task file has no module-level constant '{k}'")
        get_inputs.__globals__[k] = type(get_inputs.__globals__[k])(v)
    return ns, get_inputs


def _attrs(model) -> dict:
    """The Model's number attributes (scalar parameters of the kernel bind to them by name)."""
    return {k: v for k, v in vars(model).items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _size_constants(get_inputs) -> dict:
    return {k: v for k, v in get_inputs.__globals__.items()
            if isinstance(v, int) and not isinstance(v, bool) and not k.startswith("_")}


def task_shapes(task: str | Path, overrides: dict[str, int] | None = None) -> dict:
    """forward()'s tensor argument and result shapes, the Model's attributes and the size constants,
    computed on PyTorch's meta device: no tensor data, so benchmark-scale sizes cost nothing."""
    import torch

    ns, get_inputs = _load_task(task, overrides)
    with torch.device("meta"), torch.no_grad():
        model = ns["Model"](*ns["get_init_inputs"]())
        inputs = list(get_inputs())
        outputs = model(*inputs)
    outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    return {"inputs": [list(t.shape) for t in inputs if isinstance(t, torch.Tensor)],
            "outputs": [list(t.shape) for t in outputs if isinstance(t, torch.Tensor)],
            "attrs": _attrs(model), "constants": _size_constants(get_inputs)}


def main(argv: list[str]) -> int:
    import torch

    task, out, request_path = argv
    req = json.loads(Path(request_path).read_text())
    try:
        if req.get("shapes_only"):
            Path(out).write_text(json.dumps(task_shapes(task, req.get("set"))))
            return 0
        torch.manual_seed(req.get("seed", 0))
        ns, get_inputs = _load_task(task, req.get("set"))
    except TaskFormatError as e:
        print(e, file=sys.stderr)
        return 3
    constants = {}
    if req.get("cap"):
        constants = _scaled_constants(get_inputs.__globals__, int(req["cap"]), get_inputs)
    torch.manual_seed(req.get("seed", 0))
    model = ns["Model"](*ns["get_init_inputs"]())
    inputs = list(get_inputs())
    dtypes = req.get("input_dtypes") or []
    kernel_inputs, inputs = quantise_inputs(inputs, dtypes)
    with torch.no_grad():
        outputs = model(*inputs)
    outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    for what, ts in (("get_inputs()", kernel_inputs), ("forward()", outputs)):
        for t in ts:
            if isinstance(t, torch.Tensor) and torch_dtype_name(t) not in STORAGE:
                print(f"{what} gives a {t.dtype} tensor; supported: {', '.join(STORAGE)}", file=sys.stderr)
                return 3
    save_result(Path(out), kernel_inputs, outputs, _attrs(model), constants or _size_constants(get_inputs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
