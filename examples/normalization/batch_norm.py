import torch
import torch.nn as nn


class Model(nn.Module):
    """BatchNorm2d in inference mode (model.eval()): y = (x - running_mean[c]) / sqrt(running_var[c] + eps)
    * weight[c] + bias[c], with the running statistics and the affine parameters as inputs. Same as
    torch.nn.functional.batch_norm(x, running_mean, running_var, weight, bias, training=False, eps=eps)."""

    def __init__(self, eps: float = 1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x, running_mean, running_var, weight, bias):
        return torch.nn.functional.batch_norm(x, running_mean, running_var, weight, bias, training=False,
                                              eps=self.eps)


batch_size = 16
features = 64
dim1 = 256
dim2 = 256


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    running_mean = torch.randn(features) * 0.5
    running_var = torch.rand(features) + 0.5
    weight = torch.randn(features)
    bias = torch.randn(features)
    return [x, running_mean, running_var, weight, bias]


def get_init_inputs():
    return []
