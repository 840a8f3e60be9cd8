"""A regression trained with too high a learning rate: the loss diverges to inf, then NaN,
and the training loop's finite-loss check stops it (as detectron2's trainer does)."""

import logging

import torch
from torch import nn

LEARNING_RATE = 0.5
log = logging.getLogger("trainer")

REPORT = {
    "service": "trainer",
    "inference_context": {"model_id": "price-regressor", "batch_size": 64, "device": "cpu"},
}


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(64, 16) * 10  # unnormalised features
    y = x.sum(dim=1, keepdim=True)
    model = nn.Linear(16, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    for step in range(100):
        loss = nn.functional.mse_loss(model(x), y)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"Loss became infinite or NaN at iteration={step}!")
        log.info("step %d loss %.4g lr %g", step, loss.item(), LEARNING_RATE)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
