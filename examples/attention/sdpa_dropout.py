import torch
from torch import nn


class Model(nn.Module):
    """Attention with dropout on the attention probabilities, as a transformer layer writes it, served for
    inference: the module is put in eval mode, where dropout passes its input through."""

    def __init__(self, dropout_p: float = 0.1, scale: float = 0.125):
        super().__init__()
        self.scale = scale
        self.attn_dropout = nn.Dropout(dropout_p)
        self.eval()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        att = torch.softmax((q @ k.transpose(-2, -1)) * self.scale, dim=-1)
        return self.attn_dropout(att) @ v


B = 2
H = 4
S = 160
D = 64


def get_inputs():
    return [torch.randn(B, H, S, D), torch.randn(B, H, S, D), torch.randn(B, H, S, D)]


def get_init_inputs():
    return [0.1, 0.125]
