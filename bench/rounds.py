"""Paths timed in rounds, each right after as many `GET /healthz` (bench/ingest.py).

A shared machine's load drifts over seconds: one floor phase set against one path phase a
minute later moved 2x with others' jobs, while rounds a second apart see the same load.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Rounds:
    """A path's alternated rounds: requests accepted, seconds spent sending them, the
    floor's rate over its rounds; per round the path's accept rate over the floor's just
    before it, and the same counting until the processor had stored the round's incidents
    (what a sustained stream costs, processing included)."""

    ok: int = 0
    elapsed: float = 0.0
    floor: float = 0.0
    ratios: list[float] = field(default_factory=list)
    stored_ratios: list[float] = field(default_factory=list)


def interleaved(
    pool: ThreadPoolExecutor,
    send: Callable[[Any], int],
    healthz: Callable[[Any], int],
    timed: Sequence[Any],
    rounds: int,
    settle: Callable[[], None],
) -> Rounds:
    """`timed` sent in `rounds` chunks, each right after as many `GET /healthz` on the same
    server, and each healthz round only once `settle()` says the processor has stored what
    came before (else the floor would pay for the previous chunk's processing)."""
    out = Rounds()
    floor_n, floor_s = 0, 0.0
    size = -(-len(timed) // rounds)
    for chunk in (timed[i : i + size] for i in range(0, len(timed), size)):
        settle()
        start = time.perf_counter()
        floor_n += sum(pool.map(healthz, chunk))
        here = len(chunk) / (time.perf_counter() - start)
        floor_s += len(chunk) / here
        start = time.perf_counter()
        out.ok += sum(pool.map(send, chunk))
        took = time.perf_counter() - start
        out.elapsed += took
        settle()
        stored = time.perf_counter() - start
        out.ratios.append(len(chunk) / took / here)
        out.stored_ratios.append(len(chunk) / stored / here)
    out.floor = floor_n / floor_s
    return out


def paired(ratios: Sequence[float]) -> float:
    """The median of a path's per-round ratios to the GET /healthz round just before each."""
    return statistics.median(ratios)
