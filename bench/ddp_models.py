"""Models for bench/ddp_torch.py that PyTorch does not ship (collmodel loads them as FILE.py:NAME)."""
import torch
from torch import nn


class EmbeddingTables(nn.Module):
    """Communication-bound: many parameters, few FLOPs (a recommender's embedding tables).

    Input: (batch, tables) int64 ids. Each table is looked up once per sample and the rows summed
    into a small linear head. The embeddings' gradients are dense (sparse=False, as DDP needs), so
    backward writes a whole table per step while the FLOPs stay tiny; 8 tables of 12 MiB make
    several DDP buckets at the default 25 MiB cap, so overlap is possible.
    """

    def __init__(self, tables=8, rows=200_000, dim=16, classes=10):
        super().__init__()
        self.tables = nn.ModuleList(nn.Embedding(rows, dim) for _ in range(tables))
        self.head = nn.Linear(dim, classes)

    def forward(self, ids):
        x = sum(t(ids[:, i]) for i, t in enumerate(self.tables))
        return self.head(torch.relu(x))
