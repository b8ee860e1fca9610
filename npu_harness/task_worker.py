"""Child process that runs a KernelBench / NPUKernelBench task file (never imported into the parent).

    python -m npu_harness.task_worker TASK.py OUT.npz REQUEST.json

REQUEST (JSON), every key optional:
- "seed": int. The Model is built under this seed (its weights are what the reference and the kernel see),
  then the inputs are made.
- "set": {NAME: value}: module-level constants overridden before anything runs.
- "cap": int: scale the task's sizes until no tensor has more elements (npu_harness.task_scale).
- "meta": true: run on PyTorch's meta device and return shapes and dtypes only (no data).
- "kernel": {"inputs": [name, ...], "variants": [[torch dtype name per input], ...]}: the kernel's dtype
  variants. Per case the worker picks the variant matching the task's data, and rounds every tensor the
  kernel takes (forward() tensors and the parameters/buffers it names) to that variant's dtype; the
  reference runs on the rounded values in the task's own precision (npu_harness.task_binding).
A task defines Model and get_inputs()/get_init_inputs() (one case) or get_input_groups() (one case per
group; a sibling <task>.json / .jsonl gives the cases' attributes by name).

OUT: npu_harness.task_result.save_cases. A problem the parent reports as an error of its own (the task file's
format, a dtype that cannot be converted, a cap that cannot be met, the memory limit) is written to
OUT.error.json; exit code 3 (4 for the memory limit). The task's own exceptions exit 1 with the traceback.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import inspect
import json
import math
import os
import shutil
import sys
import tempfile
from pathlib import Path

from npu_harness.arrays import STORAGE, from_torch, torch_dtype_name
from npu_harness.task_binding import (
    INT_RANGE,
    as_number,
    conversion,
    conversion_error,
    match_inputs,
    param_key,
    pick_variant,
)
from npu_harness.task_result import TensorShape, save_cases
from npu_harness.task_scale import CannotScale, choose_scaling, int_literals, scale_json, scale_source

EXIT_REPORTED = 3
EXIT_MEMORY = 4


class WorkerError(Exception):
    """A problem the parent reports as error[code]."""

    def __init__(self, code: str, message: str, hint: str | None = None):
        super().__init__(message)
        self.code, self.message, self.hint = code, message, hint


class TaskFormatError(WorkerError):
    def __init__(self, message: str, hint: str | None = None):
        super().__init__("TASK-ERROR", message, hint)


# ---- loading -------------------------------------------------------------------------------------------------

def sidecars(task: Path) -> list[Path]:
    """The JSON files a get_input_groups() task reads its cases from."""
    return [p for p in (task.with_suffix(".json"), task.with_suffix(".jsonl")) if p.is_file()]


@contextlib.contextmanager
def _cwd(path: Path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


class Task:
    """A task file executed as a module (its integer literals optionally rescaled), with the case inputs and a
    fresh Model on demand."""

    def __init__(self, path: Path, overrides: dict | None = None, sizes: dict[int, int] | None = None,
                 scaled_dir: Path | None = None):
        self.path = path
        self.tree = ast.parse(path.read_text(), filename=str(path))
        tree = scale_source(copy.deepcopy(self.tree), sizes) if sizes else self.tree
        self.file = scaled_dir / path.name if scaled_dir else path
        self.ns: dict = {"__name__": "__task__", "__file__": str(self.file), "__builtins__": builtins}
        with _cwd(self.file.parent):
            exec(compile(tree, str(path), "exec"), self.ns)  # noqa: S102 - the task file is the user's own code
        if "Model" not in self.ns:
            raise TaskFormatError("task file defines no 'Model'")
        self.groups = "get_input_groups" in self.ns
        if not self.groups:
            for key in ("get_inputs", "get_init_inputs"):
                if key not in self.ns:
                    raise TaskFormatError(f"task file defines no '{key}'",
                                          "a task defines Model and get_inputs()/get_init_inputs(), or get_input_groups()")
        for k, v in (overrides or {}).items():
            if k not in self.ns or isinstance(self.ns[k], bool) or not isinstance(self.ns[k], (int, float)):
                raise TaskFormatError(f"task file has no module-level number constant '{k}'")
            v = type(self.ns[k])(v)
            self.ns[k] = (sizes or {}).get(v, v) if isinstance(v, int) else v

    def init_inputs(self) -> list:
        return list(self.ns["get_init_inputs"]()) if "get_init_inputs" in self.ns else []

    def model(self):
        return self.ns["Model"](*self.init_inputs())

    def cases(self) -> list[list]:
        with _cwd(self.file.parent):
            if self.groups:
                return [list(g) if isinstance(g, (list, tuple)) else [g] for g in self.ns["get_input_groups"]()]
            return [list(self.ns["get_inputs"]())]

    def case_attrs(self, n: int) -> list[dict]:
        """Per case, the number attributes of its JSON line (when the sidecar has one line per case)."""
        files = sidecars(self.file)
        if not self.groups or not files:
            return [{} for _ in range(n)]
        lines = [ln for ln in files[0].read_text().splitlines() if ln.strip()]
        if len(lines) != n:
            return [{} for _ in range(n)]
        out = []
        for ln in lines:
            try:
                entries = json.loads(ln).get("inputs", [])
            except (ValueError, AttributeError):
                entries = []
            out.append({e["name"]: e["value"] for e in entries if isinstance(e, dict) and e.get("type") == "attr"
                        and "name" in e and as_number(e.get("value")) is not None})
        return out

    def constants(self) -> dict:
        """Module-level integer constants (the sizes, after --set and scaling)."""
        return {k: v for k, v in self.ns.items() if isinstance(v, int) and not isinstance(v, bool)
                and not k.startswith("_")}


# ---- the Model's parameters and attributes -------------------------------------------------------------------

def _plain(v):
    """A number, or a list of numbers (a tuple attribute such as kernel_size=(4,)); None for anything else."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, (tuple, list)) and v and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        return list(v)
    return None


def _own_attrs(module) -> dict:
    return {k: p for k, v in vars(module).items() if not k.startswith("_") and k != "training"
            and (p := _plain(v)) is not None}


def model_attrs(model) -> tuple[dict, dict]:
    """(the Model's own number attributes, every submodule's by dotted name)."""
    sub = {}
    for name, mod in model.named_modules():
        if name:
            sub.update({f"{name}.{k}": v for k, v in _own_attrs(mod).items()})
    return _own_attrs(model), sub


def model_params(model) -> dict:
    """Kernel-style name -> live tensor of every parameter and buffer (state_dict order, then buffers that
    are not persistent)."""
    out = {}
    for name, t in model.state_dict(keep_vars=True).items():
        out.setdefault(param_key(name), t)
    for name, t in model.named_buffers():
        out.setdefault(param_key(name), t)
    return out


def arg_names(model, n: int) -> list[str]:
    """forward()'s parameter names for n arguments (argK where forward takes *args)."""
    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            break
    return [names[i] if i < len(names) else f"arg{i}" for i in range(n)]


# ---- one case ------------------------------------------------------------------------------------------------

def _is_tensor(x) -> bool:
    import torch

    return isinstance(x, torch.Tensor)


def _host(t):
    return TensorShape(tuple(t.shape), torch_dtype_name(t)) if t.device.type == "meta" else from_torch(t)


def _fits(t, dtype: str) -> bool:
    lo, hi = INT_RANGE[dtype]
    return t.numel() == 0 or (int(t.min()) >= lo and int(t.max()) <= hi)


def run_case(label: str, model, inputs: list, kernel: dict | None, case_attrs: dict, wide: bool = False) -> dict:
    """Bind (by the task_binding rules), round to the kernel's dtypes, run the reference; one case's record.
    `wide`: the reference runs in float64 instead (npu_harness/wide_reference.py); no outputs when a floating
    input, parameter or buffer is not float32."""
    import torch

    record, kernel_inputs, kernel_params, params = prepare_case(label, model, inputs, kernel, case_attrs)
    record["inputs"] = [_host(x) if _is_tensor(x) else x for x in kernel_inputs]
    record["params"] = {k: _host(kernel_params.get(k, t).detach()) for k, t in params.items()}
    if record["error"]:
        record["outputs"] = []
        return record
    if wide:
        model, inputs = _widened(model, inputs)
        if model is None:
            record["outputs"] = []
            return record
    with torch.no_grad():
        outputs = model(*inputs)
    outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    for what, ts in (("get_inputs()", kernel_inputs), ("forward()", outputs)):
        for t in ts:
            if _is_tensor(t) and torch_dtype_name(t) not in STORAGE:
                raise WorkerError("TASK-ERROR", f"{what} gives a {t.dtype} tensor; supported: {', '.join(STORAGE)}")
    record["outputs"] = [_host(t) if _is_tensor(t) else t for t in outputs]
    return record


def _widened(model, inputs: list) -> tuple:
    """A float64 copy of the model and its arguments, or (None, None) unless every floating tensor is float32
    (a model computing in f16 / bf16 has no float64 twin that means the same)."""
    import torch

    tensors = [x for x in inputs if _is_tensor(x)] + list(model.parameters()) + list(model.buffers())
    if any(t.is_floating_point() and t.dtype != torch.float32 for t in tensors):
        return None, None
    return (copy.deepcopy(model).double(),
            [x.double() if _is_tensor(x) and x.is_floating_point() else x for x in inputs])


def prepare_case(label: str, model, inputs: list, kernel: dict | None, case_attrs: dict
                 ) -> tuple[dict, list, dict, dict]:
    """Bind and round one case, before the reference runs: (the record without tensors, forward()'s arguments
    for the kernel, the parameters rounded for the kernel by name, every parameter by name). `inputs` and the
    Model's parameters are rounded in place: the reference sees the values the kernel gets."""
    import torch

    params = model_params(model)
    names = arg_names(model, len(inputs))
    arg_tensors = [i for i, x in enumerate(inputs) if _is_tensor(x)]
    args = {names[i]: x for i, x in enumerate(inputs) if as_number(x) is not None}
    attrs, sub_attrs = model_attrs(model)
    record = {"label": label, "arg_names": names, "args": args, "attrs": attrs, "sub_attrs": sub_attrs,
              "case_attrs": case_attrs, "variant": None, "conversions": [], "error": None}
    kernel_inputs = list(inputs)
    kernel_params: dict = {}
    if kernel:
        variants = kernel["variants"]
        arg_dtypes = [torch_dtype_name(inputs[i]) for i in arg_tensors]
        v = pick_variant(arg_dtypes, variants)
        record["variant"] = v
        match = match_inputs(kernel["inputs"], len(arg_tensors),
                             {k: t.is_floating_point() for k, t in params.items()})
        for name, (kind, src), dtype in zip(kernel["inputs"], match.sources, variants[v], strict=False):
            if kind == "missing":
                continue
            t = inputs[arg_tensors[src]] if kind == "arg" else params[src]
            c = conversion(name, torch_dtype_name(t), dtype)
            if c.kind == "same":
                continue
            if c.kind == "error":
                record["error"] = {"code": "DTYPE", "message": conversion_error(c)}
                break
            if c.data in INT_RANGE and c.kernel in INT_RANGE and t.device.type != "meta" and not _fits(t, c.kernel):
                record["error"] = {"code": "DTYPE", "message": f"'{name}' holds {c.data} values outside the range of "
                                   f"the kernel's {c.kernel}"}
                break
            if c.kind == "convert":
                record["conversions"].append(c.describe())
            q = t.detach().to(getattr(torch, dtype))
            if kind == "arg":
                kernel_inputs[arg_tensors[src]] = q
                inputs[arg_tensors[src]] = q.to(t.dtype)  # the reference sees the rounded values
            else:
                kernel_params[src] = q
                with torch.no_grad():
                    t.copy_(q.to(t.dtype))
    return record, kernel_inputs, kernel_params, params


# ---- a whole run ---------------------------------------------------------------------------------------------

def run_cases(task: Task, seed: int, kernel: dict | None, meta: bool, wide: bool = False) -> list[dict]:
    import torch

    device = torch.device("meta") if meta else contextlib.nullcontext()
    with device:
        torch.manual_seed(seed)
        model0 = task.model()
        cases = task.cases()
        attrs = task.case_attrs(len(cases))
        out = []
        for i, inputs in enumerate(cases):
            model = copy.deepcopy(model0) if len(cases) > 1 else model0
            label = f"case {i}" if task.groups else "task"
            out.append(run_case(label, model, inputs, kernel, attrs[i], wide))
    return out


def _shapes(records: list[dict]) -> list[tuple[list, list]]:
    """Per case, (the shapes of forward()'s tensors and the parameters, the shapes of the outputs)."""
    def shapes(xs):
        return [tuple(x.shape) for x in xs if hasattr(x, "shape")]

    return [(shapes(r["inputs"] + list(r["params"].values())), shapes(r["outputs"])) for r in records]


def _probe(path: Path, overrides, seed, sizes=None, scaled_dir=None) -> tuple[Task, list[dict]]:
    """The task run on the meta device (shapes only). A task that cannot run there (an op without a meta
    kernel, .item() on an input) is run on the CPU instead, within the worker's memory limit."""
    task = Task(path, overrides, sizes, scaled_dir)
    try:
        return task, run_cases(task, seed, None, meta=True)
    except (NotImplementedError, RuntimeError):
        return task, run_cases(task, seed, None, meta=False)


def _scaled_dir(path: Path, sizes: dict[int, int], tmp: Path) -> Path | None:
    """A copy of the task's JSON sidecars with scaled shapes (the task then runs as if it lived there)."""
    files = sidecars(path)
    if not files:
        return None
    for f in files:
        (tmp / f.name).write_text(scale_json(f.read_text(), sizes))
    return tmp


def scale(path: Path, overrides: dict | None, seed: int, cap: int, tmp: Path) -> tuple[dict | None, Path | None]:
    """(the size map, the directory of the scaled sidecars) that brings every tensor of every case to at most
    `cap` elements; (None, None) when the task is within the cap already."""
    task, records = _probe(path, overrides, seed)
    shapes = _shapes(records)
    rows = {s[-1] for ins, outs in shapes for s in ins + outs if len(s) >= 2}
    # integers of the task that are no tensor size (num_groups, heads, kernel sizes): sizes they divide stay
    # multiples of them
    dims = {d for ins, outs in shapes for s in ins + outs for d in s}
    fixed = int_literals(task.tree) | {v for v in task.init_inputs() if isinstance(v, int)}
    fixed |= {int(v) for r in records for v in list(r["case_attrs"].values()) + list(r["args"].values())
              if isinstance(v, int)}
    fixed -= dims
    extra: set[int] = set()
    target = cap
    for _attempt in range(6):
        try:
            scaling = choose_scaling(shapes, rows, target, fixed, extra)
        except CannotScale as e:
            raise WorkerError("CAP", f"--cap {cap} cannot be met: {e}") from None
        if scaling is None:
            return None, None
        scaled_dir = _scaled_dir(path, scaling.sizes, tmp)
        try:
            _, after = _probe(path, overrides, seed, scaling.sizes, scaled_dir)
        except Exception as e:  # noqa: BLE001 - the task's own failure at the new sizes
            raise WorkerError("CAP", f"the task fails at the sizes --cap {cap} chose ({scaling.describe()}): "
                              f"{type(e).__name__}: {e}", "the task relates its sizes in a way the scaling does not "
                              "keep; choose sizes with --set NAME=VALUE instead") from None
        big = [(r["label"], s) for r, (ins, outs) in zip(after, _shapes(after), strict=True) for s in ins + outs
               if math.prod(s) > cap]
        if not big:
            return {"sizes": scaling.sizes, "method": scaling.method, "notes": scaling.notes}, scaled_dir
        # a size computed at run time from a literal that is no tensor size itself (2 * D): scale that literal
        stuck = {d for _, s in big for d in s if d in dims and d not in scaling.sizes.values() and d >= 17}
        extra |= {lit for lit in int_literals(task.tree) - dims if lit >= 17 and any(d % lit == 0 for d in stuck)}
        # an output whose sizes are computed (pooling): ask for more
        target = max(1, int(target * cap / max(math.prod(s) for _, s in big) * 0.95))
    label, s = big[0]
    raise WorkerError("CAP", f"--cap {cap} cannot be met: after scaling ({scaling.describe()}) a tensor of {label} "
                      f"still has shape {list(s)}", "its sizes are computed at run time rather than written as "
                      "integer literals or constants of the task file (or its JSON); choose sizes with --set")


def run_request(path: Path, req: dict, tmp: Path) -> dict:
    import torch

    seed = int(req.get("seed", 0))
    overrides = req.get("set") or {}
    scaling, scaled_dir = None, None
    if req.get("cap"):
        scaling, scaled_dir = scale(path, overrides, seed, int(req["cap"]), tmp)
    sizes = scaling["sizes"] if scaling else None
    task = Task(path, overrides, {int(k): v for k, v in sizes.items()} if sizes else None, scaled_dir)
    torch.manual_seed(seed)
    records = run_cases(task, seed, req.get("kernel"), bool(req.get("meta")), bool(req.get("wide")))
    if scaling:
        scaling["sizes"] = {str(k): v for k, v in scaling["sizes"].items()}
    return {"format": "groups" if task.groups else "standard", "constants": task.constants(), "scaling": scaling,
            "cases": records}


def task_shapes(task: str | Path, overrides: dict | None = None, kernel: dict | None = None) -> dict:
    """run_request on the meta device, in this process (which must have torch): every case's shapes and dtypes,
    the variant picked per case, attributes and size constants; benchmark-scale sizes cost nothing."""
    with tempfile.TemporaryDirectory(prefix="ascend-task-") as tmp:
        return run_request(Path(task).resolve(), {"set": overrides or {}, "meta": True, "kernel": kernel}, Path(tmp))


def _report(out: Path, code: str, message: str, hint: str | None = None) -> None:
    Path(str(out) + ".error.json").write_text(json.dumps({"code": code, "message": message, "hint": hint}))


def main(argv: list[str]) -> int:
    task, out, request_path = argv
    out = Path(out)
    req = json.loads(Path(request_path).read_text())
    tmp = Path(tempfile.mkdtemp(prefix="ascend-task-scaled-"))
    try:
        result = run_request(Path(task).resolve(), req, tmp)
        save_cases(out, result)
        return 0
    except WorkerError as e:
        _report(out, e.code, e.message, e.hint)
        return EXIT_REPORTED
    except MemoryError:
        _report(out, "MEMORY-LIMIT", "the task ran out of memory")
        return EXIT_MEMORY
    except RuntimeError as e:
        if "allocate" in str(e) and "memory" in str(e):  # torch's CPU allocator
            _report(out, "MEMORY-LIMIT", f"the task ran out of memory ({str(e).splitlines()[0]})")
            return EXIT_MEMORY
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
