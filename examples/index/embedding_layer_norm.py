import torch
import torch.nn as nn


class Model(nn.Module):
    """Word embeddings followed by LayerNorm (BERT's embedding layer without positions)."""

    def __init__(self, vocab_size, hidden):
        super().__init__()
        self.word = nn.Embedding(vocab_size, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        with torch.no_grad():  # a trained-looking LayerNorm: not the identity affine
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.ln(self.word(input_ids))


batch_size = 32
seq_len = 512
vocab_size = 30522
hidden = 768


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, hidden]
