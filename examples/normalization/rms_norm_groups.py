import json
import os

import torch
import torch.nn as nn


class Model(nn.Module):
    """RMSNorm in the NPUKernelBench format: y = x / sqrt(mean(x^2) + epsilon) * gamma over the last dim,
    computed in float32 and returned in x's dtype; epsilon is an attribute of each case."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, gamma: torch.Tensor, epsilon: float) -> torch.Tensor:
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + epsilon) * gamma.float()
        return y.to(x.dtype)


DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def get_input_groups():
    torch.manual_seed(7)
    path = os.path.join(os.path.dirname(__file__), "rms_norm_groups.json")
    with open(path) as f:
        cases = [json.loads(line) for line in f if line.strip()]
    groups = []
    for case in cases:
        by_name = {e["name"]: e for e in case["inputs"]}
        x, gamma = by_name["x"], by_name["gamma"]
        groups.append([torch.randn(x["shape"], dtype=torch.float32).mul(2.0).add(0.5).to(DTYPES[x["dtype"]]),
                       torch.empty(gamma["shape"], dtype=DTYPES[gamma["dtype"]]).uniform_(0.5, 1.5),
                       by_name["epsilon"]["value"]])
    return groups


def get_init_inputs():
    return []
