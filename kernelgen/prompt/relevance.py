"""Which gallery kernels to show the model for a task: the ones sharing its operations and kernel kind.

A task's operations are the names its source calls or reads as attributes (`torch.relu`, `F.layer_norm`,
`nn.AvgPool1d`, `x.sum`, `@`), normalised (`LayerNorm` / `layer_norm` -> `layer_norm`, `AvgPool1d` ->
`avg_pool`, `nn.Linear` / `torch.mm` / `@` -> `matmul`). A gallery example's are those of its task file plus
the DSL operations its kernel uses. The kind (cube, plane, row, flat kernel; an accumulator across cores;
parameters bound by name) is read from the kernel, and guessed for the task from its operations. The score
is the sum of the shared operations' rarity in the gallery (idf), plus a bonus for the same kind (about one
rare operation: an activation task is shown element-wise kernels before a matmul with the same epilogue), one
per shared kind of binding (parameters, input groups) or accumulator, and a little for the same category;
ties keep gallery order.
"""

from __future__ import annotations

import ast
import math
import re

SYNONYMS = {"linear": "matmul", "mm": "matmul", "bmm": "matmul", "addmm": "matmul", "baddbmm": "matmul",
            "einsum": "matmul", "matmul": "matmul", "rmsnorm": "rms_norm", "silu": "swish", "mse_loss": "mse",
            "smooth_l1_loss": "huber", "huber_loss": "huber", "hinge_embedding_loss": "hinge", "kl_div": "kl_div",
            "cross_entropy": "cross_entropy", "sub": "sub", "subtract": "sub", "multiply": "mul", "divide": "div",
            "true_divide": "div", "pow": "pow", "square": "pow", "rsqrt": "rsqrt", "amax": "max", "amin": "min",
            "logsumexp": "logsumexp", "normalize": "l2_norm"}
NOISE = {"torch", "nn", "f", "functional", "randn", "rand", "randint", "zeros", "ones", "empty", "tensor", "float",
         "half", "bfloat16", "float16", "float32", "to", "view", "reshape", "shape", "size", "super", "init",
         "forward", "module", "no_grad", "manual_seed", "uniform", "normal", "fill", "item", "contiguous",
         "unsqueeze", "squeeze", "permute", "transpose", "t", "json", "loads", "load", "open", "os", "path", "join",
         "dirname", "append", "get_inputs", "get_init_inputs", "get_input_groups", "range", "len", "list", "dict",
         "int", "dtype", "device", "linspace", "arange", "expand", "clone", "detach", "numel", "dim", "keys",
         "items", "values", "next", "strip", "self", "x", "y", "weight", "bias", "eps", "data", "copy", "store",
         "cast", "split", "tile", "kernel", "isinstance", "tuple", "zip", "enumerate", "print", "sqrt_", "mul_",
         "add_", "std", "type", "sequential", "modulelist", "parameter", "register_buffer", "min_", "max_"}
ROW_OPS = {"layer_norm", "group_norm", "batch_norm", "instance_norm", "rms_norm", "softmax", "log_softmax",
           "cumsum", "cumprod", "l2_norm", "logsumexp"}
REDUCTIONS = {"sum", "mean", "max", "min", "prod", "norm", "argmax", "argmin"}
LOSS_OPS = {"mse", "huber", "hinge", "kl_div", "cross_entropy", "triplet_margin_loss", "cosine_similarity"}
PARAM_MARKS = {"parameter", "register_buffer", "linear", "layernorm", "groupnorm", "batchnorm1d", "batchnorm2d",
               "batchnorm3d", "rmsnorm", "instancenorm2d"}
POOL_MARKS = ("avgpool", "maxpool")
#: kinds of binding an example shows: parameters by name, the cases of a get_input_groups() task
BINDING_KINDS = {"parameters", "groups"}


def canonical(name: str) -> str:
    """`LayerNorm` -> `layer_norm`, `AvgPool1d` -> `avg_pool`, `relu_` -> `relu`, `nn.Linear` -> `matmul`."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower().rstrip("_")
    snake = re.sub(r"_?\d+d$", "", snake)
    return SYNONYMS.get(snake, snake)


def _raw_names(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return re.findall(r"\b([A-Za-z_]\w*)\s*\(", source)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            out.append(node.attr)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            out.append(node.func.id)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            out.append("matmul")
    return out


def task_ops(source: str) -> set[str]:
    """The normalised operations a task file (or any Python source) uses."""
    return {canonical(n) for n in _raw_names(source)} - NOISE - {canonical(n) for n in NOISE}


def dsl_ops(dsl: str) -> set[str]:
    """The DSL operations a kernel uses (every call but the structure)."""
    return {canonical(n) for n in re.findall(r"\b([a-z_][a-z0-9_]*)\s*\(", dsl)} - NOISE


def dsl_kinds(dsl: str) -> set[str]:
    kinds = {"cube" if "cores=AIC" in dsl else "planes" if re.search(r"\b(max|avg)_pool\(", dsl)
             else "rows" if "[r, :]" in dsl else "flat"}
    if re.search(r"\+= sum\(|= zeros\(", dsl):
        kinds.add("accumulator")
    return kinds


def task_kinds(source: str) -> set[str]:
    ops = task_ops(source)
    raw = {n.lower() for n in _raw_names(source)}
    kinds = {"cube" if ops & {"matmul", "conv"} else "planes" if any(m in n for n in raw for m in POOL_MARKS)
             or {"avg_pool", "max_pool"} & ops else "rows" if ops & (ROW_OPS | REDUCTIONS) else "flat"}
    if ops & LOSS_OPS or any(n.endswith("_loss") or n.endswith("loss") for n in raw):
        kinds.add("accumulator")
    if raw & PARAM_MARKS:
        kinds.add("parameters")
    if "get_input_groups" in raw:
        kinds.add("groups")
    return kinds


def rank(task_source: str, examples: list, *, category: str | None = None, limit: int = 3) -> list:
    """The `limit` most relevant examples (objects with .category, .dsl, .task texts)."""
    if not examples:
        return []
    feats = [(task_ops(ex.task) | dsl_ops(ex.dsl), dsl_kinds(ex.dsl) | (task_kinds(ex.task) & BINDING_KINDS))
             for ex in examples]
    df: dict[str, int] = {}
    for ops, _ in feats:
        for op in ops:
            df[op] = df.get(op, 0) + 1
    n = len(examples)
    want_ops, want_kinds = task_ops(task_source), task_kinds(task_source)

    def score(i: int) -> float:
        ops, kinds = feats[i]
        s = sum(math.log((n + 1) / df[op]) for op in want_ops & ops)
        s += 4.0 * bool(want_kinds & kinds - BINDING_KINDS - {"accumulator"})
        s += 1.0 * len(want_kinds & kinds & (BINDING_KINDS | {"accumulator"}))
        s += 0.25 * (examples[i].category == category)
        return s

    order = sorted(range(n), key=lambda i: (-score(i), i))
    return [examples[i] for i in order[:limit]]
