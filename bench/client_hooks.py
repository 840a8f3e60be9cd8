"""What `rootcause_client.watch` costs a forward pass that does not fail (issue 18).

Two models on CPU: a small MLP (the hooks' cost dominates) and a transformer encoder
layer stack (a realistic ratio). Each forward is timed without and with `watch`; the
figure that matters is microseconds added per forward call, and per hooked module. Ends
with one JSON line.
"""

from __future__ import annotations

import json
import time

import torch
from rootcause_client import watch
from torch import nn

REPEAT = 7


def _per_call(model: nn.Module, batch: torch.Tensor, calls: int) -> float:
    """Seconds per forward over `calls` calls."""
    with torch.no_grad():
        start = time.perf_counter()
        for _ in range(calls):
            model(batch)
        return (time.perf_counter() - start) / calls


def measure(name: str, model: nn.Module, batch: torch.Tensor, calls: int) -> dict:
    """Bare and watched runs alternate, and the fastest of each counts: on a shared machine
    the noise only ever adds time, so the minimum is the cost and drift hits both alike."""
    model.eval()
    _per_call(model, batch, 5)  # warm up
    bare_runs, watched_runs = [], []
    for _ in range(REPEAT):
        bare_runs.append(_per_call(model, batch, calls))
        with watch(model, send=False):
            watched_runs.append(_per_call(model, batch, calls))
    bare, watched = min(bare_runs), min(watched_runs)
    modules = sum(1 for _ in model.modules())
    added_us = (watched - bare) * 1e6
    row = {
        "model": name,
        "modules": modules,
        "bare_us": round(bare * 1e6, 1),
        "watched_us": round(watched * 1e6, 1),
        "added_us": round(added_us, 1),
        "added_us_per_module": round(added_us / modules, 2),
        "overhead_pct": round(100 * (watched - bare) / bare, 1),
    }
    print(f"{name:12} {modules:4} modules: {row['bare_us']:9.1f} us bare, "
          f"{row['watched_us']:9.1f} us watched, +{row['added_us_per_module']} us/module "
          f"({row['overhead_pct']}%)")  # fmt: skip
    return row


def main() -> None:
    torch.set_num_threads(1)
    mlp = nn.Sequential(*[m for _ in range(12) for m in (nn.Linear(64, 64), nn.ReLU())])
    encoder = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(d_model=256, nhead=4, batch_first=True), num_layers=4
    )
    rows = [
        measure("mlp-24", mlp, torch.zeros(8, 64), 2000),
        measure("encoder-4", encoder, torch.zeros(4, 64, 256), 20),
    ]
    print(json.dumps({"client_hooks": rows}))


if __name__ == "__main__":
    main()
