import json
import os

import torch
import torch.nn as nn


class Model(nn.Module):
    """Element-wise addition z = x + y in the NPUKernelBench format: every case of add_groups.json (dtype and
    shape per tensor) is a test case."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def get_input_groups():
    path = os.path.join(os.path.dirname(__file__), "add_groups.json")
    with open(path) as f:
        cases = [json.loads(line) for line in f if line.strip()]
    groups = []
    for case in cases:
        tensors = {t["name"]: t for t in case["inputs"] if t["type"] == "tensor"}
        x, y = tensors["x"], tensors["y"]
        groups.append([torch.empty(x["shape"], dtype=DTYPES[x["dtype"]]).uniform_(-5.0, 5.0),
                       torch.empty(y["shape"], dtype=DTYPES[y["dtype"]]).uniform_(-5.0, 5.0)])
    return groups


def get_init_inputs():
    return []
