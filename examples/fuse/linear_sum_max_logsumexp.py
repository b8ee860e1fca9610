import torch
import torch.nn as nn


class Model(nn.Module):
    """Matmul, sum, max, mean, logsumexp, logsumexp (KernelBench level 2, Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp
    without the pooling): after the sum each row holds one value, so the later reductions keep it."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)  # (batch_size, out_features)
        x = torch.sum(x, dim=1, keepdim=True)  # (batch_size, 1)
        x = torch.max(x, dim=1, keepdim=True)[0]
        x = torch.mean(x, dim=1, keepdim=True)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return x


batch_size = 128
in_features = 256
out_features = 384


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
