import math

import torch
import torch.nn as nn


class Model(nn.Module):
    """Token embedding times sqrt(d_model), as a transformer's input layer; token ids are int32."""

    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d_model)
        self.scale = math.sqrt(d_model)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.emb(tokens) * self.scale


batch_size = 16
seq_len = 256
vocab_size = 32000
d_model = 1024


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len), dtype=torch.int32)]


def get_init_inputs():
    return [vocab_size, d_model]
