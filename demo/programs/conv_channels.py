"""An RGB image model fed a batch of grayscale images (one channel instead of three)."""

import torch
from torch import nn

BATCH, SIDE = 8, 64

REPORT = {
    "service": "vision",
    "inference_context": {"model_id": "defect-detector-v1", "batch_size": BATCH, "device": "cpu"},
    "shape_diff": [
        {
            "tensor": "images",
            "op": "conv2d",
            "expected": [BATCH, 3, SIDE, SIDE],
            "actual": [BATCH, 1, SIDE, SIDE],
        }
    ],
}


def main() -> None:
    stem = nn.Sequential(nn.Conv2d(3, 16, kernel_size=3, padding=1), nn.ReLU())
    scans = torch.rand(BATCH, 1, SIDE, SIDE)  # the new camera writes grayscale
    stem(scans)
