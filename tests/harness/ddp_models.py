"""A model collbench does not ship, for harness.ddp_torch: what DDP's parameter list must handle.

TiedNet has a parameter shared by two modules (the head is tied to the embedding: DDP reduces it
once, under its first name), a frozen layer (requires_grad False: not reduced), a layer the test
tells DDP to ignore (--ignore skip.weight,skip.bias), a float64 parameter and a parameter over
the 1 MiB first-bucket cap (a bucket of its own). At a 4 MB cap the float32 and float64 buckets
are both still open when backward ends, float32 appearing first in the ready order: DDP closes
them newest dtype first, the order collbench must follow.
"""
import torch
from torch import nn

VOCAB, WIDTH = 4096, 128


class TiedNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.blocks = nn.Sequential(*[nn.Linear(WIDTH, WIDTH) for _ in range(4)])
        self.frozen = nn.Linear(WIDTH, WIDTH)
        self.frozen.requires_grad_(False)
        self.skip = nn.Linear(WIDTH, WIDTH)
        self.scale = nn.Parameter(torch.ones(WIDTH, dtype=torch.float64))
        self.big = nn.Parameter(torch.zeros(300_000))
        self.head = nn.Linear(WIDTH, VOCAB, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.frozen(self.blocks(self.embed(tokens)))
        h = (h + self.skip(h)) * self.scale.float()
        return self.head(h) + self.big.square().sum()


def tokens() -> torch.Tensor:
    return torch.randint(0, VOCAB, (2, 16))
