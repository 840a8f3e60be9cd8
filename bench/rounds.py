"""Paths timed in rounds, each right after as many `GET /healthz` (bench/ingest.py).

A shared machine's load drifts over seconds: one floor phase set against one path phase a
minute later moved 2x with others' jobs, while rounds a second apart see the same load.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def interleaved(
    pool: ThreadPoolExecutor,
    send: Callable[[Any], int],
    healthz: Callable[[Any], int],
    timed: Sequence[Any],
    rounds: int,
) -> tuple[int, float, float, list[float]]:
    """`timed` sent in `rounds` chunks, each right after as many `GET /healthz` on the same
    server: the path's accepted count and seconds, the floor's rate over all its rounds, and
    each round's ratio of the path's rate to the floor's just before it. A shared machine's
    load drifts over seconds; paired rounds a second apart see the same load, and their
    median ratio moves far less than one floor phase set against one path phase."""
    ok, elapsed, floor_n, floor_s, ratios = 0, 0.0, 0, 0.0, []
    size = -(-len(timed) // rounds)
    for chunk in (timed[i : i + size] for i in range(0, len(timed), size)):
        start = time.perf_counter()
        floor_n += sum(pool.map(healthz, chunk))
        here = time.perf_counter() - start
        floor_s += here
        start = time.perf_counter()
        ok += sum(pool.map(send, chunk))
        took = time.perf_counter() - start
        elapsed += took
        ratios.append((len(chunk) / took) / (len(chunk) / here))
    return ok, elapsed, floor_n / floor_s, ratios


def paired(ratios: Sequence[float]) -> float:
    """The median of a path's per-round ratios to the GET /healthz round just before each."""
    return statistics.median(ratios)
