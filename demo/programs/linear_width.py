"""A classifier head built for 512-wide features fed 256-wide ones (a swapped encoder)."""

import torch
from torch import nn

BATCH, FEATURES, HEAD_IN = 4, 256, 512

REPORT = {
    "service": "ranker",
    "inference_context": {"model_id": "ranker-v3", "batch_size": BATCH, "device": "cpu"},
    "shape_diff": [
        {"tensor": "x", "op": "linear", "expected": [BATCH, HEAD_IN], "actual": [BATCH, FEATURES]}
    ],
}


class Ranker(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(HEAD_IN, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(x)


def main() -> None:
    features = torch.randn(BATCH, FEATURES)  # the new encoder's output width
    Ranker()(features)
