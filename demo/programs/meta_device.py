"""A model built on the meta device (no memory, as `init_empty_weights` does) whose
weights were never loaded, called with inputs on the CPU."""

import torch
from torch import nn

REPORT = {
    "service": "summarizer",
    "inference_context": {"model_id": "summarizer-small", "batch_size": 2, "device": "cpu"},
}


def build_empty() -> nn.Module:
    with torch.device("meta"):  # shapes only; weights are meant to be loaded afterwards
        return nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 8))


def main() -> None:
    model = build_empty()  # the load_state_dict(..., assign=True) step was skipped
    model(torch.randn(2, 64))
