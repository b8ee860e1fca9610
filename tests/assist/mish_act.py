import torch
import torch.nn as nn

from ascend_dsl import extern_op


@extern_op
def mish(x):
    return x * torch.tanh(nn.functional.softplus(x))


class Model(nn.Module):
    """Mish activation (an extern op: the compiler has no rule for it)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mish(x)


def get_inputs():
    return [torch.randn(16 * 1024) * 4]


def get_init_inputs():
    return []
