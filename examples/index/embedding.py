import torch
import torch.nn as nn


class Model(nn.Module):
    """An embedding table lookup: each index picks one row of the weight."""

    def __init__(self, num_embeddings, embedding_dim):
        super().__init__()
        self.embedding = nn.Embedding(num_embeddings, embedding_dim)

    def forward(self, indices: torch.Tensor) -> torch.Tensor:
        return self.embedding(indices)


batch_size = 64
seq_len = 128
num_embeddings = 50000
embedding_dim = 512


def get_inputs():
    return [torch.randint(0, num_embeddings, (batch_size, seq_len))]


def get_init_inputs():
    return [num_embeddings, embedding_dim]
