"""Child process for the `get_input_groups()` task variant (never imported into the parent).

    python -m kernelgen.groups_worker TASK.py OUT.pt REQUEST.json

REQUEST: {"seed": int, "max_groups": int, "input_dtypes": [str|null, ...]}. Each group is the list
of forward() inputs of one case (tensors and attributes). Writes {"groups": [{"inputs", "outputs",
"attrs"}, ...], "total": int} with torch.save. Mirrors npu_harness.task_worker for the standard format.
"""

from __future__ import annotations

import json
import os
import runpy
import sys

from npu_harness.task_worker import quantise_inputs


def main(argv: list[str]) -> int:
    import torch

    task, out, request_path = argv
    req = json.loads(open(request_path).read())
    torch.manual_seed(req.get("seed", 0))
    os.chdir(os.path.dirname(os.path.abspath(task)))  # get_input_groups() reads its sibling JSONL
    ns = runpy.run_path(task, run_name="__task__")
    for key in ("Model", "get_input_groups"):
        if key not in ns:
            print(f"task file defines no '{key}'", file=sys.stderr)
            return 3
    groups = list(ns["get_input_groups"]())
    total = len(groups)
    groups = groups[: int(req.get("max_groups") or total)]
    init = ns["get_init_inputs"]() if "get_init_inputs" in ns else []
    dtypes = req.get("input_dtypes") or []
    results = []
    for group in groups:
        torch.manual_seed(req.get("seed", 0))
        model = ns["Model"](*init)
        inputs = list(group) if isinstance(group, (list, tuple)) else [group]
        kernel_inputs, inputs = quantise_inputs(inputs, dtypes)
        with torch.no_grad():
            outputs = model(*inputs)
        outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
        attrs = {k: v for k, v in vars(model).items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        # scalar (non-tensor) inputs are attributes too, named by position
        attrs.update({f"arg{i}": v for i, v in enumerate(kernel_inputs)
                      if isinstance(v, (int, float)) and not isinstance(v, bool)})
        results.append({"inputs": kernel_inputs, "outputs": outputs, "attrs": attrs})
    torch.save({"groups": results, "total": total}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
